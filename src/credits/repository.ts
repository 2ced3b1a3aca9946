import { compileOnce, type Executor } from '../core/db.js';
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

const insertLedgerEntry = compileOnce(
  7,
  (
    db,
    id: string,
    tenantId: string,
    userId: string,
    minutes: number,
    reason: CreditEntry['reason'],
    reference: string | null,
    at: Date,
  ) =>
    db
      .insertInto('credit_ledger')
      .values({ id, tenant_id: tenantId, user_id: userId, minutes, reason, reference, created_at: at })
      .onConflict((oc) => oc.column('reference').doNothing())
      .returning('id')
      .compile(),
);

const addToBalance = compileOnce(3, (db, tenantId: string, userId: string, minutes: number) =>
  db
    .updateTable('users')
    .set((eb) => ({ credit_balance_minutes: eb('credit_balance_minutes', '+', minutes) }))
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .returning('credit_balance_minutes')
    .compile(),
);

/**
 * Appends a ledger entry and moves the user's balance in the caller's transaction.
 * Returns the new balance, or undefined when an entry with the same reference already exists.
 */
export async function addCreditEntry(tx: Executor, entry: CreditEntry): Promise<number | undefined> {
  const inserted = await insertLedgerEntry(
    tx,
    newId('cred'),
    entry.tenantId,
    entry.userId,
    entry.minutes,
    entry.reason,
    entry.reference ?? null,
    entry.at,
  );
  if (inserted.length === 0) return undefined;
  const [row] = await addToBalance(tx, entry.tenantId, entry.userId, entry.minutes);
  if (!row) throw new Error(`addCreditEntry: no user ${entry.userId} in tenant ${entry.tenantId}`);
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
