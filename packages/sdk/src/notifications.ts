/**
 * Webhook endpoints, their deliveries, the events list and the audit log (resources.ts says how
 * methods are typed).
 */
import type { PageRequest } from './pagination.js';
import { type Body, type Data, type Item, type Query, Resource, segment } from './resources.js';
import type { RequestOptions } from './transport.js';

const endpoint = (id: string) => `/api/v1/webhook-endpoints/${segment(id)}`;

export class WebhookEndpoints extends Resource {
  /** createWebhookEndpoint — the answer holds the signing secret, shown this once. */
  create(
    body: Body<'createWebhookEndpoint'>,
    options?: RequestOptions,
  ): Promise<Data<'createWebhookEndpoint'>> {
    return this.data({ method: 'POST', path: '/api/v1/webhook-endpoints', body, options });
  }
  /** getWebhookEndpoint */
  retrieve(id: string, options?: RequestOptions): Promise<Data<'getWebhookEndpoint'>> {
    return this.data({ method: 'GET', path: endpoint(id), options });
  }
  /** listWebhookEndpoints */
  list(query?: Query<'listWebhookEndpoints'>): PageRequest<Item<'listWebhookEndpoints'>> {
    return this.paged<'listWebhookEndpoints'>('/api/v1/webhook-endpoints', query);
  }
  /** updateWebhookEndpoint */
  update(
    id: string,
    body: Body<'updateWebhookEndpoint'>,
    options?: RequestOptions,
  ): Promise<Data<'updateWebhookEndpoint'>> {
    return this.data({ method: 'PATCH', path: endpoint(id), body, options });
  }
  /** deleteWebhookEndpoint */
  del(id: string, options?: RequestOptions): Promise<Data<'deleteWebhookEndpoint'>> {
    return this.data({ method: 'DELETE', path: endpoint(id), options });
  }
  /** rotateWebhookEndpointSecret — the old secret keeps signing beside the new one for a while. */
  rotateSecret(
    id: string,
    body?: Body<'rotateWebhookEndpointSecret'>,
    options?: RequestOptions,
  ): Promise<Data<'rotateWebhookEndpointSecret'>> {
    return this.data({ method: 'POST', path: `${endpoint(id)}/rotate-secret`, body, options });
  }
  /** listWebhookDeliveries */
  deliveries(id: string, query?: Query<'listWebhookDeliveries'>): PageRequest<Item<'listWebhookDeliveries'>> {
    return this.paged<'listWebhookDeliveries'>(`${endpoint(id)}/deliveries`, query);
  }
  /** getWebhookDelivery — with what its last attempt sent and got back (first 4 KiB of each body). */
  delivery(id: string, deliveryId: string, options?: RequestOptions): Promise<Data<'getWebhookDelivery'>> {
    return this.data({ method: 'GET', path: `${endpoint(id)}/deliveries/${segment(deliveryId)}`, options });
  }
  /** sendWebhookTestEvent — a signed `webhook.test` to this endpoint; an Idempotency-Key is generated unless you pass one. */
  sendTestEvent(id: string, options?: RequestOptions): Promise<Data<'sendWebhookTestEvent'>> {
    return this.data({ method: 'POST', path: `${endpoint(id)}/test`, acceptsIdempotencyKey: true, options });
  }
  /** resendWebhookDelivery — a new delivery of the same event; an Idempotency-Key is generated unless you pass one. */
  resendDelivery(
    id: string,
    deliveryId: string,
    options?: RequestOptions,
  ): Promise<Data<'resendWebhookDelivery'>> {
    return this.data({
      method: 'POST',
      path: `${endpoint(id)}/deliveries/${segment(deliveryId)}/resend`,
      acceptsIdempotencyKey: true,
      options,
    });
  }
  /** retryWebhookDelivery */
  retryDelivery(
    id: string,
    deliveryId: string,
    options?: RequestOptions,
  ): Promise<Data<'retryWebhookDelivery'>> {
    return this.data({
      method: 'POST',
      path: `${endpoint(id)}/deliveries/${segment(deliveryId)}/retry`,
      options,
    });
  }
}

export class Events extends Resource {
  /** listEvents: the last 30 days, newest first. */
  list(query?: Query<'listEvents'>): PageRequest<Item<'listEvents'>> {
    return this.paged<'listEvents'>('/api/v1/events', query);
  }
}

export class AuditEvents extends Resource {
  /** listAuditEvents: who changed what in the tenant, newest first (scope `audit:read`). */
  list(query?: Query<'listAuditEvents'>): PageRequest<Item<'listAuditEvents'>> {
    return this.paged<'listAuditEvents'>('/api/v1/audit-events', query);
  }
  /** getAuditEvent */
  retrieve(id: string, options?: RequestOptions): Promise<Data<'getAuditEvent'>> {
    return this.data({ method: 'GET', path: `/api/v1/audit-events/${segment(id)}`, options });
  }
}
