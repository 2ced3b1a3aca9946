import { type Executor, runPrepared } from '../core/db.js';
import { newId } from '../core/ids.js';

export interface CreditLedgerTable {
  id: string;
  tenant_id: string;
  user_id: string;
  minutes: number;
  reason: string | null;
  reference: string | null;
  created_at: Date;
}

declare module '../core/db.js' {
  interface Tables {
    credit_ledger: CreditLedgerTable;
  }
}

export interface CreditEntry {
  tenantId: string;
  userId: string;
  /** Positive grants, negative debits. */
  minutes: number;
  reason: string | null;
  /** Makes the entry happen at most once (e.g. `call:<id>`); a repeat is ignored. */
  reference?: string;
  at: Date;
}

/**
 * The one way credits move, as two CTEs for a statement that defines `credit_entry` before them
 * (columns id, tenant_id, user_id, minutes, reason, reference, created_at): each entry is appended
 * to the ledger unless its reference is already there, and each user's balance moves once, by the
 * sum of their appended entries. `addCreditEntry` defines one entry from its values; finishing
 * calls defines one per completed call, in the statement that ends them.
 */
export const APPEND_CREDIT_ENTRIES = `
  credited AS (
    INSERT INTO credit_ledger (id, tenant_id, user_id, minutes, reason, reference, created_at)
    SELECT id, tenant_id, user_id, minutes, reason, reference, created_at FROM credit_entry
    ON CONFLICT (reference) DO NOTHING
    RETURNING tenant_id, user_id, minutes
  ), balance AS (
    UPDATE users u SET credit_balance_minutes = u.credit_balance_minutes + moved.minutes
    FROM (SELECT tenant_id, user_id, sum(minutes)::integer AS minutes FROM credited GROUP BY tenant_id, user_id) moved
    WHERE u.tenant_id = moved.tenant_id AND u.id = moved.user_id
    RETURNING u.credit_balance_minutes
  )`;

/**
 * Appends a ledger entry and moves the user's balance (one statement, in the caller's transaction).
 * Returns the new balance, or undefined when an entry with the same reference already exists.
 */
export async function addCreditEntry(db: Executor, entry: CreditEntry): Promise<number | undefined> {
  const rows = await runPrepared<{ credit_balance_minutes: number }>(db, {
    name: 'credits_add_entry',
    text: `
      WITH credit_entry AS (
        SELECT $1::text AS id, $2::text AS tenant_id, $3::text AS user_id, $4::integer AS minutes,
               $5::text AS reason, $6::text AS reference, $7::timestamptz AS created_at
      ), ${APPEND_CREDIT_ENTRIES}
      SELECT credit_balance_minutes FROM balance`,
    values: [
      newId('cred'),
      entry.tenantId,
      entry.userId,
      entry.minutes,
      entry.reason,
      entry.reference ?? null,
      entry.at,
    ],
  });
  return rows[0]?.credit_balance_minutes;
}

export async function creditBalance(
  db: Executor,
  tenantId: string,
  userId: string,
): Promise<number | undefined> {
  const row = await db
    .selectFrom('users')
    .select('credit_balance_minutes')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .executeTakeFirst();
  return row?.credit_balance_minutes;
}
