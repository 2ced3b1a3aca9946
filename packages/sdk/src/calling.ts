/** Voice agents, their calls, and the do-not-call list (resources.ts says how methods are typed). */
import type { PageRequest } from './pagination.js';
import { type Body, type Data, type Item, type Query, Resource, segment } from './resources.js';
import type { RequestOptions } from './transport.js';

export class Agents extends Resource {
  /** createAgent — an Idempotency-Key is generated unless you pass one. */
  create(body: Body<'createAgent'>, options?: RequestOptions): Promise<Data<'createAgent'>> {
    return this.data({ method: 'POST', path: '/api/v1/agents', body, acceptsIdempotencyKey: true, options });
  }
  /** getAgent */
  retrieve(id: string, options?: RequestOptions): Promise<Data<'getAgent'>> {
    return this.data({ method: 'GET', path: `/api/v1/agents/${segment(id)}`, options });
  }
  /** listAgents */
  list(query?: Query<'listAgents'>): PageRequest<Item<'listAgents'>> {
    return this.paged<'listAgents'>('/api/v1/agents', query);
  }
  /** updateAgent */
  update(id: string, body: Body<'updateAgent'>, options?: RequestOptions): Promise<Data<'updateAgent'>> {
    return this.data({ method: 'PATCH', path: `/api/v1/agents/${segment(id)}`, body, options });
  }
  /** deleteAgent */
  del(id: string, options?: RequestOptions): Promise<Data<'deleteAgent'>> {
    return this.data({ method: 'DELETE', path: `/api/v1/agents/${segment(id)}`, options });
  }
  /** publishAgent — not retried after a failure that may have published (503, a dropped connection). */
  publish(id: string, options?: RequestOptions): Promise<Data<'publishAgent'>> {
    return this.data({ method: 'POST', path: `/api/v1/agents/${segment(id)}/publish`, options });
  }
  /** listAgentVersions */
  versions(id: string, query?: Query<'listAgentVersions'>): PageRequest<Item<'listAgentVersions'>> {
    return this.paged<'listAgentVersions'>(`/api/v1/agents/${segment(id)}/versions`, query);
  }
  /** getAgentDefaults: the tenant's default voice and model, and what the voice engine allows. */
  defaults(options?: RequestOptions): Promise<Data<'getAgentDefaults'>> {
    return this.data({ method: 'GET', path: '/api/v1/agent-defaults', options });
  }
  /** setAgentDefaults: replaces the default voice and model (null: the operator's). */
  setDefaults(body: Body<'setAgentDefaults'>, options?: RequestOptions): Promise<Data<'setAgentDefaults'>> {
    return this.data({ method: 'PUT', path: '/api/v1/agent-defaults', body, options });
  }
  /** rotateAgentWebhook — the old trigger URL stops working at once. */
  rotateWebhook(id: string, options?: RequestOptions): Promise<Data<'rotateAgentWebhook'>> {
    return this.data({ method: 'POST', path: `/api/v1/agents/${segment(id)}/rotate-webhook`, options });
  }
  /**
   * triggerAgentCall — what a CRM or form does: the trigger URL's id is its credential (no API
   * key is sent). An Idempotency-Key is generated unless you pass one.
   */
  trigger(
    agentWebhookId: string,
    body: Body<'triggerAgentCall'>,
    options?: RequestOptions,
  ): Promise<Data<'triggerAgentCall'>> {
    return this.data({
      method: 'POST',
      path: `/webhooks/agents/${segment(agentWebhookId)}/trigger`,
      body,
      acceptsIdempotencyKey: true,
      options: { ...options, bearer: options?.bearer ?? '' },
    });
  }
}

export class Calls extends Resource {
  /** createCall — an Idempotency-Key is generated unless you pass one. */
  create(body: Body<'createCall'>, options?: RequestOptions): Promise<Data<'createCall'>> {
    return this.data({ method: 'POST', path: '/api/v1/calls', body, acceptsIdempotencyKey: true, options });
  }
  /** getCall: the call with its timeline. */
  retrieve(id: string, options?: RequestOptions): Promise<Data<'getCall'>> {
    return this.data({ method: 'GET', path: `/api/v1/calls/${segment(id)}`, options });
  }
  /** listCalls */
  list(query?: Query<'listCalls'>): PageRequest<Item<'listCalls'>> {
    return this.paged<'listCalls'>('/api/v1/calls', query);
  }
}

export class DoNotCall extends Resource {
  /** addDoNotCall */
  add(body: Body<'addDoNotCall'>, options?: RequestOptions): Promise<Data<'addDoNotCall'>> {
    return this.data({ method: 'POST', path: '/api/v1/do-not-call', body, options });
  }
  /** getDoNotCall */
  retrieve(phoneNumber: string, options?: RequestOptions): Promise<Data<'getDoNotCall'>> {
    return this.data({ method: 'GET', path: `/api/v1/do-not-call/${segment(phoneNumber)}`, options });
  }
  /** listDoNotCall */
  list(query?: Query<'listDoNotCall'>): PageRequest<Item<'listDoNotCall'>> {
    return this.paged<'listDoNotCall'>('/api/v1/do-not-call', query);
  }
  /** removeDoNotCall */
  remove(phoneNumber: string, options?: RequestOptions): Promise<Data<'removeDoNotCall'>> {
    return this.data({ method: 'DELETE', path: `/api/v1/do-not-call/${segment(phoneNumber)}`, options });
  }
}
