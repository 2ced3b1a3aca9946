import type { Executor } from '../core/db.js';
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
 * Appends a ledger entry and moves the user's balance in the caller's transaction.
 * Returns the new balance, or undefined when an entry with the same reference already exists.
 */
export async function addCreditEntry(tx: Executor, entry: CreditEntry): Promise<number | undefined> {
  const inserted = await tx
    .insertInto('credit_ledger')
    .values({
      id: newId('cred'),
      tenant_id: entry.tenantId,
      user_id: entry.userId,
      minutes: entry.minutes,
      reason: entry.reason,
      reference: entry.reference ?? null,
      created_at: entry.at,
    })
    .onConflict((oc) => oc.column('reference').doNothing())
    .returning('id')
    .executeTakeFirst();
  if (!inserted) return undefined;
  const row = await tx
    .updateTable('users')
    .set((eb) => ({ credit_balance_minutes: eb('credit_balance_minutes', '+', entry.minutes) }))
    .where('tenant_id', '=', entry.tenantId)
    .where('id', '=', entry.userId)
    .returning('credit_balance_minutes')
    .executeTakeFirstOrThrow();
  return row.credit_balance_minutes;
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
