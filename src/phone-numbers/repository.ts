import { type Selectable, sql } from 'kysely';
import { type Executor, runPrepared } from '../core/db/database.js';

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
  engine?: string;
}

function filtered(db: Executor, filter: PhoneNumberFilter) {
  let query = db.selectFrom('phone_numbers');
  if (filter.tenantId !== undefined) query = query.where('tenant_id', '=', filter.tenantId);
  if (filter.inboundAgentId !== undefined)
    query = query.where('inbound_agent_id', '=', filter.inboundAgentId);
  if (filter.engine !== undefined) query = query.where('engine', '=', filter.engine);
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

/** What decides who answers an inbound call to a number (src/phone-numbers/inbound.ts). */
export interface InboundTarget {
  phone_number: string;
  tenant_id: string;
  inbound_agent_id: string | null;
  /** The agent, when it exists and is not deleted; null otherwise. */
  agent_id: string | null;
  published_version: number | null;
  user_id: string | null;
  settings: import('../agents/settings.js').AgentSettings | null;
  owner_usable: boolean | null;
  credit_balance_minutes: number | null;
  /** The tenant's wholesale wallet, when it has one. */
  wallet_balance_minutes: number | null;
  tenant_cap: number | null;
  /** The operator suspended the tenant: every call to its numbers is declined. */
  tenant_suspended: boolean;
}

/**
 * The number an engine rings by its id, with its inbound agent, the agent's owner and balances, and
 * the tenant's wallet and cap: one indexed read (phone_numbers_engine_number, then primary keys).
 */
export async function findInboundTarget(
  db: Executor,
  engine: string,
  engineNumberId: string,
): Promise<InboundTarget | undefined> {
  const rows = await runPrepared<InboundTarget>(db, {
    name: 'phone_numbers_inbound_target',
    text: `
      SELECT p.phone_number, p.tenant_id, p.inbound_agent_id, a.id AS agent_id, a.published_version,
             a.user_id, a.settings, (u.deleted_at IS NULL AND u.status <> 'blocked') AS owner_usable,
             u.credit_balance_minutes, w.balance_minutes AS wallet_balance_minutes, t.max_concurrent_calls AS tenant_cap,
             t.suspended_at IS NOT NULL AS tenant_suspended
      FROM phone_numbers p
      JOIN tenants t ON t.id = p.tenant_id
      LEFT JOIN agents a ON a.id = p.inbound_agent_id AND a.tenant_id = p.tenant_id AND a.deleted_at IS NULL
      LEFT JOIN users u ON u.id = a.user_id AND u.tenant_id = a.tenant_id
      LEFT JOIN tenant_wallets w ON w.tenant_id = p.tenant_id
      WHERE p.engine = $1 AND p.engine_number_id = $2`,
    values: [engine, engineNumberId],
  });
  return rows[0];
}
