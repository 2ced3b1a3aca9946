import { type Selectable, sql } from 'kysely';
import { type Executor, runPrepared } from '../core/db/database.js';
import { PUBLIC_STATUSES, type PublicStatus } from './schemas.js';

/**
 * Internal states: the public enum, the processor's transient states (`incomplete`,
 * `incomplete_expired`) and `superseded` (a scheduled subscription replaced before it started),
 * which the API all reports as `inactive`.
 */
export type InternalStatus =
  | 'trialing'
  | 'active'
  | 'past_due'
  | 'canceled'
  | 'unpaid'
  | 'paused'
  | 'inactive'
  | 'incomplete'
  | 'incomplete_expired'
  /** A scheduled subscription replaced before it started (shown as `inactive`). */
  | 'superseded';

export interface SubscriptionsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  plan_id: string;
  status: InternalStatus;
  provider: 'processor' | 'agency' | 'marketplace' | 'custom';
  provider_subscription_id: string | null;
  provider_item_id: string | null;
  cancel_at_period_end: boolean;
  current_period_start: Date;
  current_period_end: Date;
  billing_anchor: Date | null;
  trial_end: Date | null;
  canceled_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

/**
 * One partner request that creates or changes a subscription, kept so a retry or the
 * reconciliation job can finish it. The table's nullable `answer_status` column (migration 0002)
 * is no longer written or read: the route decides its HTTP answer.
 */
export interface SubscriptionOperationsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  subscription_id: string | null;
  kind: 'create' | 'upgrade' | 'downgrade';
  provider: string;
  from_plan_id: string | null;
  to_plan_id: string;
  idempotency_ref: string | null;
  request_hash: string;
  processor_key: string;
  status: 'pending' | 'applied' | 'abandoned';
  result_subscription_id: string | null;
  created_at: Date;
  updated_at: Date;
}

declare module '../core/db/database.js' {
  interface Tables {
    subscriptions: SubscriptionsTable;
    subscription_operations: SubscriptionOperationsTable;
  }
}

export type SubscriptionRow = Selectable<SubscriptionsTable>;
export type OperationRow = Selectable<SubscriptionOperationsTable>;

const PUBLIC: ReadonlySet<string> = new Set(PUBLIC_STATUSES);

/** The public status an internal state shows as (the processor's transient states show as inactive). */
export function publicStatus(status: InternalStatus): PublicStatus {
  return (PUBLIC.has(status) ? status : 'inactive') as PublicStatus;
}

/** The internal states each public status stands for. */
export function internalStatuses(status: PublicStatus): InternalStatus[] {
  return status === 'inactive' ? ['inactive', 'incomplete', 'incomplete_expired', 'superseded'] : [status];
}

/** States in which a subscription still bills (and can change plan). */
export const LIVE_STATUSES: InternalStatus[] = ['trialing', 'active', 'past_due', 'unpaid', 'paused'];

export interface SubscriptionFilter {
  userId?: string;
  planId?: string;
  status?: PublicStatus;
}

function filtered(db: Executor, tenantId: string, filter: SubscriptionFilter) {
  let query = db.selectFrom('subscriptions').where('tenant_id', '=', tenantId);
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
  if (filter.planId !== undefined) query = query.where('plan_id', '=', filter.planId);
  if (filter.status !== undefined) query = query.where('status', 'in', internalStatuses(filter.status));
  return query;
}

export async function listSubscriptions(
  db: Executor,
  tenantId: string,
  options: SubscriptionFilter & { sortOrder: 'asc' | 'desc'; limit: number; offset: number },
) {
  const direction = options.sortOrder === 'asc' ? sql`ASC` : sql`DESC`;
  return filtered(db, tenantId, options)
    .selectAll()
    .select(sql<number>`count(*) over ()`.as('total'))
    .orderBy(sql`created_at ${direction}, id ${direction}`)
    .limit(options.limit)
    .offset(options.offset)
    .execute();
}

export async function countSubscriptions(
  db: Executor,
  tenantId: string,
  filter: SubscriptionFilter,
): Promise<number> {
  const row = await filtered(db, tenantId, filter)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** The columns a subscription's public answer is made of (service.ts toSubscription). */
const PUBLIC_SUBSCRIPTION_COLUMNS = [
  'id',
  'user_id',
  'plan_id',
  'status',
  'provider',
  'provider_subscription_id',
  'cancel_at_period_end',
  'current_period_start',
  'current_period_end',
  'created_at',
  'updated_at',
] as const satisfies readonly (keyof SubscriptionsTable)[];

export type PublicSubscriptionRow = Pick<SubscriptionRow, (typeof PUBLIC_SUBSCRIPTION_COLUMNS)[number]>;

const PUBLIC_SUBSCRIPTION_COLUMN_LIST = PUBLIC_SUBSCRIPTION_COLUMNS.join(', ');

/** GET /subscriptions/{id}: only what the answer shows (the hot read). */
export async function findPublicSubscription(
  db: Executor,
  tenantId: string,
  id: string,
): Promise<PublicSubscriptionRow | undefined> {
  const rows = await runPrepared<PublicSubscriptionRow>(db, {
    name: 'subscriptions_find_public',
    text: `SELECT ${PUBLIC_SUBSCRIPTION_COLUMN_LIST} FROM subscriptions WHERE tenant_id = $1 AND id = $2`,
    values: [tenantId, id],
  });
  return rows[0];
}

export async function findSubscription(
  db: Executor,
  tenantId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
) {
  let query = db
    .selectFrom('subscriptions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/**
 * The user's current subscription: active or trialing and already started (the same rule as the
 * users list's plan_id); a scheduled agency subscription that starts next month is not current.
 */
export async function findCurrentSubscription(db: Executor, tenantId: string, userId: string, now: Date) {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('status', 'in', ['active', 'trialing'])
    .where('current_period_start', '<=', now)
    .orderBy('current_period_start', 'desc')
    .orderBy('id', 'desc')
    .limit(1)
    .executeTakeFirst();
}

/**
 * The user's agency subscriptions scheduled to start after `now` (what a downgrade of the current
 * one scheduled), locked when asked.
 */
export async function findScheduledSubscriptions(
  db: Executor,
  tenantId: string,
  userId: string,
  now: Date,
  options: { forUpdate?: boolean } = {},
) {
  let query = db
    .selectFrom('subscriptions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('provider', '=', 'agency')
    .where('status', 'in', LIVE_STATUSES)
    .where('current_period_start', '>', now)
    .orderBy('id');
  if (options.forUpdate) query = query.forUpdate();
  return query.execute();
}

/** The user's subscriptions that still bill or are scheduled to start. */
export async function findLiveSubscriptions(db: Executor, tenantId: string, userId: string) {
  return db
    .selectFrom('subscriptions')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('status', 'in', [...LIVE_STATUSES, 'incomplete'])
    .execute();
}

export async function insertSubscription(db: Executor, row: SubscriptionsTable): Promise<SubscriptionRow> {
  return db.insertInto('subscriptions').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updateSubscription(
  db: Executor,
  tenantId: string,
  id: string,
  changes: Partial<SubscriptionsTable>,
) {
  return db
    .updateTable('subscriptions')
    .set(changes)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function insertOperation(db: Executor, row: SubscriptionOperationsTable) {
  await db.insertInto('subscription_operations').values(row).execute();
}

export async function findOperation(
  db: Executor,
  tenantId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
) {
  let query = db
    .selectFrom('subscription_operations')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** Operations started with this Idempotency-Key (hashed) for this request, newest first. */
export async function findOperationsByRef(db: Executor, tenantId: string, ref: string, requestHash: string) {
  return db
    .selectFrom('subscription_operations')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('idempotency_ref', '=', ref)
    .where('request_hash', '=', requestHash)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .execute();
}

/** A pending processor operation on the user (another request is between its phases). */
export async function findPendingOperation(
  db: Executor,
  tenantId: string,
  userId: string,
  exceptId?: string,
) {
  let query = db
    .selectFrom('subscription_operations')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('status', '=', 'pending');
  if (exceptId) query = query.where('id', '!=', exceptId);
  return query.executeTakeFirst();
}

export async function finishOperation(
  db: Executor,
  tenantId: string,
  id: string,
  changes: Pick<
    Partial<SubscriptionOperationsTable>,
    'status' | 'subscription_id' | 'result_subscription_id'
  > & {
    updated_at: Date;
  },
) {
  await db
    .updateTable('subscription_operations')
    .set(changes)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .execute();
}
