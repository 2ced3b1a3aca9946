import type { Selectable } from 'kysely';
import type { Executor } from '../core/db.js';

/** pending → invoiced | failed (processor-billed); recorded: agency-billed or nothing to invoice. */
export type OverageStatus = 'pending' | 'invoiced' | 'recorded' | 'failed';

export interface OverageChargesTable {
  id: string;
  tenant_id: string;
  user_id: string;
  subscription_id: string;
  plan_id: string;
  period_start: Date;
  period_end: Date;
  minutes: number;
  overage_rate: number;
  amount: number;
  currency: string;
  provider: 'processor' | 'agency';
  status: OverageStatus;
  processor: string | null;
  processor_customer_id: string | null;
  processor_subscription_id: string | null;
  processor_key: string | null;
  processor_invoice_item_id: string | null;
  failure_message: string | null;
  created_at: Date;
  updated_at: Date;
}

declare module '../core/db.js' {
  interface Tables {
    overage_charges: OverageChargesTable;
  }
}

export type OverageChargeRow = Selectable<OverageChargesTable>;

/** Writes the period's charge; undefined when the subscription's period already has one. */
export async function insertOverageCharge(
  db: Executor,
  row: OverageChargesTable,
): Promise<OverageChargeRow | undefined> {
  return db
    .insertInto('overage_charges')
    .values(row)
    .onConflict((oc) => oc.columns(['subscription_id', 'period_start']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function findOverageCharge(
  db: Executor,
  tenantId: string,
  id: string,
): Promise<OverageChargeRow | undefined> {
  return db
    .selectFrom('overage_charges')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/** Settles a pending charge (invoiced or failed); a settled one is left as it is. */
export async function settleOverageCharge(
  db: Executor,
  tenantId: string,
  id: string,
  changes: Pick<OverageChargesTable, 'status' | 'updated_at'> &
    Partial<Pick<OverageChargesTable, 'processor_invoice_item_id' | 'failure_message'>>,
): Promise<void> {
  await db
    .updateTable('overage_charges')
    .set(changes)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}

/** The user's balance, locked: no call debit moves it between reading and settling it. */
export async function lockedBalance(db: Executor, tenantId: string, userId: string) {
  const row = await db
    .selectFrom('users')
    .select('credit_balance_minutes')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .forUpdate()
    .executeTakeFirst();
  return row?.credit_balance_minutes;
}
