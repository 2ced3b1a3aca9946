import type { Selectable } from 'kysely';
import type { Executor } from '../core/db/database.js';

/**
 * Processor-billed: pending (the job is billing it) → paid | unpaid (declined: the invoice stays
 * open) | failed (the processor refused a request) | invoiced (the item went on an invoice we did
 * not pay: a renewal's, or a row from before migration 0034). recorded: agency-billed or nothing to
 * invoice.
 */
export type OverageStatus = 'pending' | 'invoiced' | 'paid' | 'unpaid' | 'recorded' | 'failed';
/** The outcomes an agency should look at. */
export const UNSETTLED_OVERAGE: OverageStatus[] = ['failed', 'unpaid'];

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
  processor_invoice_id: string | null;
  failure_message: string | null;
  created_at: Date;
  updated_at: Date;
}

declare module '../core/db/database.js' {
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

/** Settles a pending charge, or records its progress (status pending); a settled one is left as it is. */
export async function settleOverageCharge(
  db: Executor,
  tenantId: string,
  id: string,
  changes: Pick<OverageChargesTable, 'status' | 'updated_at'> &
    Partial<
      Pick<OverageChargesTable, 'processor_invoice_item_id' | 'processor_invoice_id' | 'failure_message'>
    >,
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

/** The month's charges (settled in it) that failed or are unpaid, oldest first, at most `limit`. */
export async function unsettledOverageCharges(
  db: Executor,
  tenantId: string,
  month: { start: Date; end: Date },
  options: { userId?: string; limit: number },
): Promise<OverageChargeRow[]> {
  let query = db
    .selectFrom('overage_charges')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('created_at', '>=', month.start)
    .where('created_at', '<', month.end)
    .where('status', 'in', UNSETTLED_OVERAGE);
  if (options.userId) query = query.where('user_id', '=', options.userId);
  return query.orderBy('created_at').orderBy('id').limit(options.limit).execute();
}
