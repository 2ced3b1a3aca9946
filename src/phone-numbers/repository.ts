import { type Selectable, sql } from 'kysely';
import type { Executor } from '../core/db/database.js';

export interface PhoneNumbersTable {
  phone_number: string;
  tenant_id: string;
  /** The engine that holds the number (TELEPHONY when it was imported). */
  engine: string;
  /** The engine's id for the number (Vapi's id; Retell and the simulator: the number itself). */
  engine_number_id: string;
  inbound_agent_id: string | null;
  label: string | null;
  created_at: Date;
  updated_at: Date;
}

declare module '../core/db/database.js' {
  interface Tables {
    phone_numbers: PhoneNumbersTable;
  }
}

export type PhoneNumberRow = Selectable<PhoneNumbersTable>;

/** Imports the number unless it is already imported (undefined then: the existing row stays). */
export async function insertPhoneNumber(
  db: Executor,
  row: PhoneNumberRow,
): Promise<PhoneNumberRow | undefined> {
  return db
    .insertInto('phone_numbers')
    .values(row)
    .onConflict((oc) => oc.doNothing())
    .returningAll()
    .executeTakeFirst();
}

/** The number, of one tenant when `tenantId` is given. */
export async function findPhoneNumber(db: Executor, phoneNumber: string, tenantId?: string) {
  let query = db.selectFrom('phone_numbers').selectAll().where('phone_number', '=', phoneNumber);
  if (tenantId !== undefined) query = query.where('tenant_id', '=', tenantId);
  return query.executeTakeFirst();
}

export async function updatePhoneNumber(
  db: Executor,
  phoneNumber: string,
  changes: Partial<Pick<PhoneNumberRow, 'tenant_id' | 'inbound_agent_id' | 'label' | 'updated_at'>>,
  tenantId?: string,
) {
  let query = db.updateTable('phone_numbers').set(changes).where('phone_number', '=', phoneNumber);
  if (tenantId !== undefined) query = query.where('tenant_id', '=', tenantId);
  return query.returningAll().executeTakeFirst();
}

export async function deletePhoneNumber(db: Executor, phoneNumber: string) {
  return db
    .deleteFrom('phone_numbers')
    .where('phone_number', '=', phoneNumber)
    .returningAll()
    .executeTakeFirst();
}

/** Whether the tenant holds any number, and whether `phoneNumber` is one of them (the caller-ID rule). */
export async function callerIdStanding(
  db: Executor,
  tenantId: string,
  phoneNumber: string,
): Promise<{ holdsNumbers: boolean; holdsThis: boolean }> {
  const row = await db
    .selectFrom('phone_numbers')
    .select([
      sql<boolean>`true`.as('holds_numbers'),
      sql<boolean>`bool_or(phone_number = ${phoneNumber})`.as('holds_this'),
    ])
    .where('tenant_id', '=', tenantId)
    .groupBy('tenant_id')
    .executeTakeFirst();
  return { holdsNumbers: row !== undefined, holdsThis: row?.holds_this === true };
}

export interface PhoneNumberFilter {
  tenantId?: string;
  inboundAgentId?: string;
}

function filtered(db: Executor, filter: PhoneNumberFilter) {
  let query = db.selectFrom('phone_numbers');
  if (filter.tenantId !== undefined) query = query.where('tenant_id', '=', filter.tenantId);
  if (filter.inboundAgentId !== undefined)
    query = query.where('inbound_agent_id', '=', filter.inboundAgentId);
  return query;
}

/** Newest first, ties broken by the number, with the total (count(*) over ()). */
export async function listPhoneNumbers(
  db: Executor,
  filter: PhoneNumberFilter,
  limit: number,
  offset: number,
) {
  return filtered(db, filter)
    .selectAll()
    .select(sql<number>`count(*) over ()`.as('total'))
    .orderBy('created_at', 'desc')
    .orderBy('phone_number', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function countPhoneNumbers(db: Executor, filter: PhoneNumberFilter): Promise<number> {
  const row = await filtered(db, filter)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** Calls to each of the numbers (the console's count per number), by the number. */
export async function countCallsTo(
  db: Executor,
  tenantId: string,
  phoneNumbers: string[],
): Promise<Map<string, number>> {
  if (phoneNumbers.length === 0) return new Map();
  const rows = await db
    .selectFrom('calls')
    .select(['to_number', (eb) => eb.fn.countAll<number>().as('count')])
    .where('tenant_id', '=', tenantId)
    .where('direction', '=', 'inbound')
    .where('to_number', 'in', phoneNumbers)
    .groupBy('to_number')
    .execute();
  return new Map(rows.map((row) => [row.to_number, Number(row.count)]));
}
