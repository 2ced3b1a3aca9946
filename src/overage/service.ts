/**
 * Overage (docs/usage.md): minutes a user used beyond the balance. Calls debit what they used even
 * past zero, so the balance may go negative; when a subscription's period turns, `settleInTx`
 * (in the period job's transaction, the subscription locked) turns the negative minutes into the
 * ended period's overage: a ledger entry `overage:<subscription>:<period start>` that brings the
 * balance back to zero, and a charge priced at the plan's overage_rate. The balance restarts at
 * zero and the minutes are billed, as Stripe's metered billing and Vapi/Retell-style platforms do.
 *
 * Processor-billed charges are written pending with a job; the job (`invoice`) bills them at once,
 * through the tenant's account: an invoice item pending on the customer, a one-off invoice that
 * takes it, finalized and paid with the card on file. Each step first looks for what a previous run
 * made (the item and the invoice by the charge id in their metadata) and sends its own idempotency
 * key derived from the charge's processor key, so a job run twice or killed between steps bills
 * once. Agency-billed charges are recorded for the agency's own invoicing.
 */
import type { ProcessorAccounts } from '../billing/accounts.js';
import { type PaymentProcessor, type ProcessorInvoice, ProcessorRequestError } from '../billing/processor.js';
import { findCustomer } from '../billing/repository.js';
import type { Clock } from '../core/clock.js';
import type { Db, Tx } from '../core/db/database.js';
import { newId } from '../core/ids.js';
import { enqueueJob } from '../core/jobs/runner.js';
import { amountForMinutes, formatRate } from '../core/money.js';
import { addCreditEntry } from '../credits/repository.js';
import { findPlan } from '../plans/repository.js';
import type { SubscriptionRow } from '../subscriptions/repository.js';
import {
  findOverageCharge,
  insertOverageCharge,
  lockedBalance,
  type OverageChargeRow,
  type OverageStatus,
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
    processor_invoice_id: null,
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
  /** Each tenant's processor account: every call goes through `accounts.bind`. */
  accounts: ProcessorAccounts;
}

/** The charge's state once its invoice reached `invoice` (paid, or declined with `message`). */
function outcomeOf(
  invoice: ProcessorInvoice,
  ours: boolean,
  declined?: string,
): { status: OverageStatus; failure_message: string | null } {
  if (invoice.status === 'paid') return { status: 'paid', failure_message: null };
  if (declined !== undefined) return { status: 'unpaid', failure_message: declined };
  if (!ours) return { status: 'invoiced', failure_message: null };
  return { status: 'unpaid', failure_message: `The invoice is ${invoice.status} at the processor.` };
}

export function createOverageInvoicing(deps: OverageDeps) {
  const { db, clock } = deps;
  return {
    /**
     * Job: bills a pending charge at once on its own invoice. No answer from the processor throws
     * (the job retries, finding what was made and replaying the same keys); a refusal marks the
     * charge failed, a declined card unpaid (the invoice stays open at the processor).
     */
    async invoice(tenantId: string, chargeId: string): Promise<void> {
      const charge = await findOverageCharge(db, tenantId, chargeId);
      if (charge?.status !== 'pending' || !charge.processor_customer_id || !charge.processor_key) return;
      const customerId = charge.processor_customer_id;
      const key = charge.processor_key;
      const bound = await deps.accounts.bind(deps.processor, tenantId);
      const { processor } = bound;
      const lookup = {
        customerId,
        metadataKey: OVERAGE_METADATA_KEY,
        metadataValue: charge.id,
        createdSince: new Date(charge.created_at.getTime() - CLOCK_SKEW_MS),
      };
      const metadata = {
        [OVERAGE_METADATA_KEY]: charge.id,
        tenant_id: charge.tenant_id,
        user_id: charge.user_id,
        subscription_id: charge.subscription_id,
      };
      const description = `Overage: ${charge.minutes} minutes at ${formatRate(charge.overage_rate, charge.currency)} per minute`;
      const progress = (changes: { processor_invoice_item_id?: string; processor_invoice_id?: string }) =>
        settleOverageCharge(db, tenantId, chargeId, {
          status: 'pending',
          ...changes,
          updated_at: clock.now(),
        });
      try {
        // Pending on the customer, not on the subscription: our invoice takes it now, and a
        // subscription that ended is billed too.
        const item =
          (await processor.findInvoiceItem(lookup)) ??
          (await processor.createInvoiceItem(
            {
              customerId,
              subscriptionId: null,
              amount: charge.amount,
              currency: charge.currency,
              description,
              period: { start: charge.period_start, end: charge.period_end },
              metadata,
            },
            key,
          ));
        await progress({ processor_invoice_item_id: item.id });
        if (!item.invoiceId && item.subscriptionId) {
          // Made before 0034 on the subscription: its next renewal takes it, no invoice of ours would.
          await settleOverageCharge(db, tenantId, chargeId, { status: 'invoiced', updated_at: clock.now() });
          return;
        }
        let invoice: ProcessorInvoice;
        if (item.invoiceId) {
          invoice = await processor.retrieveInvoice(item.invoiceId);
        } else {
          invoice =
            (await processor.findInvoice(lookup)) ??
            (await processor.createInvoice(
              {
                customerId,
                description,
                metadata,
                applicationFeeAmount: bound.chargeFeeAmount(charge.amount),
              },
              `${key}_invoice`,
            ));
        }
        await progress({ processor_invoice_id: invoice.id });
        // Another invoice took the item (a renewal before this job ran): it bills it; we do not pay it.
        const ours = invoice.metadata[OVERAGE_METADATA_KEY] === charge.id;
        let declined: string | undefined;
        if (ours && invoice.status === 'draft') {
          invoice = await processor.finalizeInvoice(invoice.id, `${key}_finalize`);
        }
        if (ours && invoice.status === 'open') {
          const payment = await processor.payInvoice(invoice.id, `${key}_pay`);
          invoice = payment.invoice;
          if (payment.status === 'declined') declined = payment.message;
        }
        await settleOverageCharge(db, tenantId, chargeId, {
          ...outcomeOf(invoice, ours, declined),
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
