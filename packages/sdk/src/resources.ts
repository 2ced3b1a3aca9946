/**
 * The partner API's resources, one method per operation of the OpenAPI document (its operation
 * id in each comment), typed by the types generated from that document (openapi.ts).
 */
import type { components, operations } from './openapi.js';
import { type PageRequest, pageRequest } from './pagination.js';
import type { RequestOptions, Transport } from './transport.js';

type Schemas = components['schemas'];
export type Query<Op extends keyof operations> = NonNullable<operations[Op]['parameters']['query']>;
export type Body<Op extends keyof operations> = operations[Op]['requestBody'] extends
  | { content: { 'application/json': infer B } }
  | undefined
  ? B
  : never;
type Json<Op extends keyof operations> =
  operations[Op]['responses'] extends Record<PropertyKey, infer R>
    ? R extends { content: { 'application/json': infer J } }
      ? J
      : never
    : never;
/** What the operation's successful answer holds in `data`. */
export type Data<Op extends keyof operations> = Json<Op> extends { data: infer D } ? D : never;
export type Item<Op extends keyof operations> = Data<Op> extends (infer I)[] ? I : never;

export const segment = encodeURIComponent;

export abstract class Resource {
  constructor(protected readonly send: Transport) {}

  protected async data<T>(request: Parameters<Transport>[0]): Promise<T> {
    return (await this.send<{ data: T }>(request)).data;
  }

  protected paged<Op extends keyof operations>(
    path: string,
    query: Query<Op> | undefined,
  ): PageRequest<Item<Op>> {
    const first = (query as { page?: number } | undefined)?.page ?? 1;
    return pageRequest(first, (page) =>
      this.send<{ data: Item<Op>[]; pagination: Schemas['Pagination'] }>({
        method: 'GET',
        path,
        query: { ...query, page },
      }),
    );
  }
}

export class Users extends Resource {
  /** createUser — retried safely: an Idempotency-Key is generated unless you pass one. */
  create(body: Body<'createUser'>, options?: RequestOptions): Promise<Data<'createUser'>> {
    return this.data({ method: 'POST', path: '/api/v1/users', body, acceptsIdempotencyKey: true, options });
  }
  /** getUser */
  retrieve(id: string, options?: RequestOptions): Promise<Data<'getUser'>> {
    return this.data({ method: 'GET', path: `/api/v1/users/${segment(id)}`, options });
  }
  /** listUsers */
  list(query?: Query<'listUsers'>): PageRequest<Item<'listUsers'>> {
    return this.paged<'listUsers'>('/api/v1/users', query);
  }
  /** updateUser — changes the given fields; sending the same change again is safe. */
  update(id: string, body: Body<'updateUser'>, options?: RequestOptions): Promise<Data<'updateUser'>> {
    return this.data({
      method: 'PATCH',
      path: `/api/v1/users/${segment(id)}`,
      body,
      naturallyIdempotent: true,
      options,
    });
  }
  /** deleteUser */
  del(id: string, options?: RequestOptions): Promise<Data<'deleteUser'>> {
    // The API answers a repeat with the same tombstone: safe to send again.
    return this.data({
      method: 'DELETE',
      path: `/api/v1/users/${segment(id)}`,
      naturallyIdempotent: true,
      options,
    });
  }
}

export class Plans extends Resource {
  /** getPlan */
  retrieve(id: string, options?: RequestOptions): Promise<Data<'getPlan'>> {
    return this.data({ method: 'GET', path: `/api/v1/plans/${segment(id)}`, options });
  }
  /** listPlans */
  list(query?: Query<'listPlans'>): PageRequest<Item<'listPlans'>> {
    return this.paged<'listPlans'>('/api/v1/plans', query);
  }
}

export class Subscriptions extends Resource {
  /** createSubscription — an Idempotency-Key is generated unless you pass one (the processor gets it too). */
  create(body: Body<'createSubscription'>, options?: RequestOptions): Promise<Data<'createSubscription'>> {
    return this.data({
      method: 'POST',
      path: '/api/v1/subscriptions',
      body,
      acceptsIdempotencyKey: true,
      options,
    });
  }
  /** getSubscription */
  retrieve(id: string, options?: RequestOptions): Promise<Data<'getSubscription'>> {
    return this.data({ method: 'GET', path: `/api/v1/subscriptions/${segment(id)}`, options });
  }
  /** listSubscriptions */
  list(query?: Query<'listSubscriptions'>): PageRequest<Item<'listSubscriptions'>> {
    return this.paged<'listSubscriptions'>('/api/v1/subscriptions', query);
  }
  /** changeSubscriptionPlan — an Idempotency-Key is generated unless you pass one. */
  changePlan(
    id: string,
    body: Body<'changeSubscriptionPlan'>,
    options?: RequestOptions,
  ): Promise<Data<'changeSubscriptionPlan'>> {
    return this.data({
      method: 'PATCH',
      path: `/api/v1/subscriptions/${segment(id)}/plan`,
      body,
      acceptsIdempotencyKey: true,
      options,
    });
  }
  /** cancelSubscription — at the end of the current period; a repeat answers the same subscription. */
  cancel(id: string, options?: RequestOptions): Promise<Data<'cancelSubscription'>> {
    return this.data({
      method: 'POST',
      path: `/api/v1/subscriptions/${segment(id)}/cancel`,
      naturallyIdempotent: true,
      options,
    });
  }
}

export class TopUps extends Resource {
  /** createTopUp — retried safely: an Idempotency-Key is generated unless you pass one (one charge per key). */
  create(userId: string, body: Body<'createTopUp'>, options?: RequestOptions): Promise<Data<'createTopUp'>> {
    return this.data({
      method: 'POST',
      path: `/api/v1/users/${segment(userId)}/top-ups`,
      body,
      acceptsIdempotencyKey: true,
      options,
    });
  }
  /** getTopUp */
  retrieve(userId: string, id: string, options?: RequestOptions): Promise<Data<'getTopUp'>> {
    return this.data({
      method: 'GET',
      path: `/api/v1/users/${segment(userId)}/top-ups/${segment(id)}`,
      options,
    });
  }
  /** listTopUps */
  list(userId: string, query?: Query<'listTopUps'>): PageRequest<Item<'listTopUps'>> {
    return this.paged<'listTopUps'>(`/api/v1/users/${segment(userId)}/top-ups`, query);
  }
}

export class Usage extends Resource {
  /** getUsage — a user's month (`period` YYYY-MM, default the current UTC month). */
  retrieve(query: Query<'getUsage'>, options?: RequestOptions): Promise<Data<'getUsage'>> {
    return this.data({ method: 'GET', path: '/api/v1/usage', query, options });
  }
}
