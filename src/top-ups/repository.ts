import { type Selectable, sql } from 'kysely';
import type { Executor } from '../core/db/database.js';
import type { TopUpBilling } from './schemas.js';

/** `pending` and `abandoned` are internal: a top-up between its phases, or one that never charged. */
export type TopUpState = 'pending' | 'succeeded' | 'declined' | 'abandoned';

export interface TopUpsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  subscription_id: string;
  plan_id: string;
  minutes: number;
  amount: number;
  currency: string;
  billing: TopUpBilling;
  status: TopUpState;
  processor: string | null;
  processor_customer_id: string | null;
  processor_payment_method_id: string | null;
  processor_key: string | null;
  processor_charge_id: string | null;
  decline_code: string | null;
  idempotency_ref: string | null;
  request_hash: string;
  created_at: Date;
  updated_at: Date;
}

declare module '../core/db/database.js' {
  interface Tables {
    top_ups: TopUpsTable;
  }
}

export type TopUpRow = Selectable<TopUpsTable>;

/** The states a partner sees. */
const LISTED: TopUpState[] = ['succeeded', 'declined'];

export async function insertTopUp(db: Executor, row: TopUpsTable): Promise<TopUpRow> {
  return db.insertInto('top_ups').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findTopUp(
  db: Executor,
  tenantId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<TopUpRow | undefined> {
  let query = db.selectFrom('top_ups').selectAll().where('tenant_id', '=', tenantId).where('id', '=', id);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** Top-ups started with this Idempotency-Key (hashed) since `since`, newest first, locked. */
export async function findTopUpsByRef(db: Executor, tenantId: string, ref: string, since: Date) {
  return db
    .selectFrom('top_ups')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('idempotency_ref', '=', ref)
    .where('created_at', '>=', since)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .forUpdate()
    .execute();
}

export async function settleTopUp(
  db: Executor,
  tenantId: string,
  id: string,
  changes: Pick<Partial<TopUpsTable>, 'status' | 'processor_charge_id' | 'decline_code'> & {
    updated_at: Date;
  },
): Promise<TopUpRow> {
  return db
    .updateTable('top_ups')
    .set(changes)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', 'in', ['pending', 'abandoned'])
    .returningAll()
    .executeTakeFirstOrThrow();
}

/** A pending top-up the processor has no charge for is abandoned (a settled one never is). */
export async function abandonTopUp(db: Executor, tenantId: string, id: string, at: Date): Promise<void> {
  await db
    .updateTable('top_ups')
    .set({ status: 'abandoned', updated_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}

export async function listTopUps(
  db: Executor,
  tenantId: string,
  userId: string,
  page: { limit: number; offset: number },
) {
  return db
    .selectFrom('top_ups')
    .selectAll()
    .select(sql<number>`count(*) over ()`.as('total'))
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('status', 'in', LISTED)
    .orderBy(sql`created_at DESC, id DESC`)
    .limit(page.limit)
    .offset(page.offset)
    .execute();
}

export async function countTopUps(db: Executor, tenantId: string, userId: string): Promise<number> {
  const row = await db
    .selectFrom('top_ups')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('status', 'in', LISTED)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
