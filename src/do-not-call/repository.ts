import { type Selectable, sql } from 'kysely';
import type { Executor } from '../core/db/database.js';

export interface DoNotCallTable {
  tenant_id: string;
  phone_number: string;
  reason: string | null;
  created_at: Date;
}

declare module '../core/db/database.js' {
  interface Tables {
    do_not_call: DoNotCallTable;
  }
}

export type DoNotCallRow = Selectable<DoNotCallTable>;

/**
 * True when `phone` is on the tenant's do-not-call list: the check made before a call is stored.
 * `executor` may be the transaction that stores the call.
 */
export async function isOnDoNotCallList(
  executor: Executor,
  tenantId: string,
  phone: string,
): Promise<boolean> {
  const row = await executor
    .selectFrom('do_not_call')
    .select('phone_number')
    .where('tenant_id', '=', tenantId)
    .where('phone_number', '=', phone)
    .executeTakeFirst();
  return row !== undefined;
}

/** Adds the entry unless the number is already listed; undefined then (the existing one stays). */
export async function insertEntry(db: Executor, row: DoNotCallRow): Promise<DoNotCallRow | undefined> {
  return db
    .insertInto('do_not_call')
    .values(row)
    .onConflict((oc) => oc.columns(['tenant_id', 'phone_number']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function findEntry(db: Executor, tenantId: string, phone: string) {
  return db
    .selectFrom('do_not_call')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('phone_number', '=', phone)
    .executeTakeFirst();
}

export async function deleteEntry(db: Executor, tenantId: string, phone: string) {
  return db
    .deleteFrom('do_not_call')
    .where('tenant_id', '=', tenantId)
    .where('phone_number', '=', phone)
    .returningAll()
    .executeTakeFirst();
}

export interface DoNotCallFilter {
  phoneNumber?: string;
}

function filtered(db: Executor, tenantId: string, filter: DoNotCallFilter) {
  let query = db.selectFrom('do_not_call').where('tenant_id', '=', tenantId);
  if (filter.phoneNumber !== undefined) query = query.where('phone_number', '=', filter.phoneNumber);
  return query;
}

/** Newest first, ties broken by the number, with the total (count(*) over ()). */
export async function listEntries(
  db: Executor,
  tenantId: string,
  filter: DoNotCallFilter,
  limit: number,
  offset: number,
) {
  return filtered(db, tenantId, filter)
    .selectAll()
    .select(sql<number>`count(*) over ()`.as('total'))
    .orderBy('created_at', 'desc')
    .orderBy('phone_number', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function countEntries(db: Executor, tenantId: string, filter: DoNotCallFilter): Promise<number> {
  const row = await filtered(db, tenantId, filter)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
