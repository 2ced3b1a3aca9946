/**
 * Overage (docs/usage.md): minutes a user used beyond the balance. Calls debit what they used even
 * past zero, so the balance may go negative; when a subscription's period turns, `settleInTx`
 * (in the period job's transaction, the subscription locked) turns the negative minutes into the
 * ended period's overage: a ledger entry `overage:<subscription>:<period start>` that brings the
 * balance back to zero, and a charge priced at the plan's overage_rate. The balance restarts at
 * zero and the minutes are billed, as Stripe's metered billing and Vapi/Retell-style platforms do.
 *
 * Processor-billed charges are written pending with a job; the job (`invoice`) adds them to the
 * customer's next invoice as an invoice item, with the charge's processor key as idempotency key,
 * after looking for an item a previous run made (by the charge id in its metadata). Agency-billed
 * charges are recorded for the agency's own invoicing.
 */
import type { ProcessorAccounts } from '../billing/accounts.js';
import { type PaymentProcessor, ProcessorRequestError } from '../billing/processor.js';
import { findCustomer } from '../billing/repository.js';
import type { Clock } from '../core/clock.js';
import type { Db, Tx } from '../core/db.js';
import { newId } from '../core/ids.js';
import { enqueueJob } from '../core/jobs.js';
import { amountForMinutes, formatRate } from '../core/money.js';
import { addCreditEntry } from '../credits/repository.js';
import { findPlan } from '../plans/repository.js';
import type { SubscriptionRow } from '../subscriptions/repository.js';
import {
  findOverageCharge,
  insertOverageCharge,
  lockedBalance,
  type OverageChargeRow,
  settleOverageCharge,
} from './repository.js';

export const OVERAGE_INVOICE_QUEUE = 'overage.invoice';
/** The metadata key the processor's invoice item carries our charge id under. */
export const OVERAGE_METADATA_KEY = 'overage_charge_id';
// Clocks of two machines: look for the item a little before the charge was written.
const CLOCK_SKEW_MS = 5 * 60 * 1000;

/** The ledger reference of a period's overage: at most one per subscription and period. */
export function overageReference(subscriptionId: string, periodStart: Date): string {
  return `overage:${subscriptionId}:${periodStart.toISOString()}`;
}

/**
 * In the period job's transaction, before the period turns (`sub` is the ended period): settles a
 * negative balance as that period's overage, once. Returns the charge written, if any.
 */
export async function settleOverageInTx(
  tx: Tx,
  sub: SubscriptionRow,
  processorName: PaymentProcessor['name'],
  now: Date,
): Promise<OverageChargeRow | undefined> {
  const balance = await lockedBalance(tx, sub.tenant_id, sub.user_id);
  if (balance === undefined || balance >= 0) return undefined;
  const minutes = -balance;
  const moved = await addCreditEntry(tx, {
    tenantId: sub.tenant_id,
    userId: sub.user_id,
    minutes,
    reason: 'overage',
    reference: overageReference(sub.id, sub.current_period_start),
    at: now,
  });
  if (moved === undefined) return undefined;
  const plan = await findPlan(tx, sub.tenant_id, sub.plan_id, { includeArchived: true });
  if (!plan) throw new Error(`subscription ${sub.id} has no plan`);
  const amount = amountForMinutes(minutes, plan.overage_rate, plan.currency);
  const byProcessor = sub.provider === 'processor' && sub.provider_subscription_id !== null;
  const customer = byProcessor
    ? await findCustomer(tx, sub.tenant_id, sub.user_id, processorName)
    : undefined;
  const id = newId('ovg');
  const toInvoice = byProcessor && amount > 0;
  const charge = await insertOverageCharge(tx, {
    id,
    tenant_id: sub.tenant_id,
    user_id: sub.user_id,
    subscription_id: sub.id,
    plan_id: plan.id,
    period_start: sub.current_period_start,
    period_end: sub.current_period_end,
    minutes,
    overage_rate: plan.overage_rate,
    amount,
    currency: plan.currency,
    provider: byProcessor ? 'processor' : 'agency',
    status: toInvoice ? (customer ? 'pending' : 'failed') : 'recorded',
    processor: byProcessor ? processorName : null,
    processor_customer_id: customer?.customer_id ?? null,
    processor_subscription_id: byProcessor ? sub.provider_subscription_id : null,
    processor_key: toInvoice ? `vp_overage_${id}` : null,
    processor_invoice_item_id: null,
    failure_message: toInvoice && !customer ? 'The user has no customer at the processor.' : null,
    created_at: now,
    updated_at: now,
  });
  if (charge?.status === 'pending') {
    await enqueueJob(tx, {
      queue: OVERAGE_INVOICE_QUEUE,
      tenantId: sub.tenant_id,
      payload: { overage_charge_id: charge.id },
      runAt: now,
      maxAttempts: 25,
      singletonKey: `overage-invoice:${charge.id}`,
    });
  }
  return charge;
}

export interface OverageDeps {
  db: Db;
  clock: Clock;
  processor: PaymentProcessor;
  /** Each tenant's processor account: the invoice item goes through `accounts.bind`. */
  accounts: ProcessorAccounts;
}

export function createOverageInvoicing(deps: OverageDeps) {
  const { db, clock } = deps;
  return {
    /**
     * Job: adds a pending charge to the customer's next invoice. No answer from the processor
     * throws (the job retries with the same key); a refusal marks the charge failed.
     */
    async invoice(tenantId: string, chargeId: string): Promise<void> {
      const charge = await findOverageCharge(db, tenantId, chargeId);
      if (charge?.status !== 'pending' || !charge.processor_customer_id || !charge.processor_key) return;
      const { processor } = await deps.accounts.bind(deps.processor, tenantId);
      try {
        const item =
          (await processor.findInvoiceItem({
            customerId: charge.processor_customer_id,
            metadataKey: OVERAGE_METADATA_KEY,
            metadataValue: charge.id,
            createdSince: new Date(charge.created_at.getTime() - CLOCK_SKEW_MS),
          })) ??
          (await processor.createInvoiceItem(
            {
              customerId: charge.processor_customer_id,
              subscriptionId: charge.processor_subscription_id,
              amount: charge.amount,
              currency: charge.currency,
              description: `Overage: ${charge.minutes} minutes at ${formatRate(charge.overage_rate, charge.currency)} per minute`,
              period: { start: charge.period_start, end: charge.period_end },
              metadata: {
                [OVERAGE_METADATA_KEY]: charge.id,
                tenant_id: charge.tenant_id,
                user_id: charge.user_id,
                subscription_id: charge.subscription_id,
              },
            },
            charge.processor_key,
          ));
        await settleOverageCharge(db, tenantId, chargeId, {
          status: 'invoiced',
          processor_invoice_item_id: item.id,
          updated_at: clock.now(),
        });
      } catch (error) {
        if (!(error instanceof ProcessorRequestError)) throw error;
        await settleOverageCharge(db, tenantId, chargeId, {
          status: 'failed',
          failure_message: error.message,
          updated_at: clock.now(),
        });
      }
    },
  };
}

export type OverageInvoicing = ReturnType<typeof createOverageInvoicing>;
