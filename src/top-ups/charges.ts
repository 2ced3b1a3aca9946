/**
 * A processor-billed top-up spans the database and the card processor, so after the service's
 * first transaction has written it `pending` it goes on in two more steps:
 *   2. the card is charged (`charge`) with the processor idempotency key stored on the top-up;
 *   3. a transaction applies the answer (`settle`): succeeded credits the minutes, declined does not.
 * No answer from the processor is 503 and the top-up stays pending: a retry with the same
 * Idempotency-Key charges again with the same processor key (the processor replays, never charges
 * twice). When no retry comes, `reconcile` (a job) adopts the charge the processor made, found by
 * the top-up id in its metadata, or abandons a top-up the processor never charged.
 */
import type { ProcessorAccounts } from '../billing/accounts.js';
import {
  type Charge,
  type PaymentProcessor,
  ProcessorRequestError,
  ProcessorUnavailableError,
} from '../billing/processor.js';
import type { Clock } from '../core/clock.js';
import type { Db, Executor, Tx } from '../core/db/database.js';
import { ApiError, unprocessable } from '../core/errors.js';
import { RetryJobError } from '../core/jobs/runner.js';
import { addCreditEntry } from '../credits/repository.js';
import { processorUnavailable } from '../subscriptions/processor-change.js';
import { abandonTopUp, findTopUp, settleTopUp, type TopUpRow } from './repository.js';

export const TOP_UP_RECONCILE_QUEUE = 'top_ups.reconcile';
/** When a pending top-up is reconciled if no retry settled it. */
export const TOP_UP_RECONCILE_AFTER_MS = 5 * 60 * 1000;
/** The metadata key the processor's charge carries our top-up id under. */
export const TOP_UP_METADATA_KEY = 'top_up_id';
// Clocks of two machines: look for the charge a little before the top-up was written.
const CLOCK_SKEW_MS = 5 * 60 * 1000;
/**
 * Reconciliation gives up on a top-up the processor has no charge for only this long after it was
 * created: its first look (TOP_UP_RECONCILE_AFTER_MS) may come while a retried request is charging.
 */
const TOP_UP_ABANDON_AFTER_MS = 30 * 60 * 1000;
const STILL_PROCESSING_RECHECK_MS = 60 * 1000;

export interface ChargeDeps {
  db: Db;
  clock: Clock;
  processor: PaymentProcessor;
  /** Each tenant's processor account: the charge goes through `accounts.bind`. */
  accounts: ProcessorAccounts;
}

/** Credits a top-up's minutes, once per top-up whoever gets there first (its ledger reference). */
export async function creditTopUp(tx: Executor, topUp: TopUpRow, at: Date): Promise<void> {
  await addCreditEntry(tx, {
    tenantId: topUp.tenant_id,
    userId: topUp.user_id,
    minutes: topUp.minutes,
    reason: `Top-up of ${topUp.minutes} minutes (${topUp.billing} billing)`,
    reference: `top_up:${topUp.id}`,
    at,
  });
}

/** The 422 of a declined card; `details` names the recorded top-up. */
export function declinedError(topUp: TopUpRow): ApiError {
  return new ApiError(
    'unprocessable_entity',
    `The card was declined${topUp.decline_code ? ` (${topUp.decline_code})` : ''}; no minutes were credited.`,
    { top_up_id: topUp.id, decline_code: topUp.decline_code },
  );
}

export function createTopUpCharges(deps: ChargeDeps) {
  const { db, clock } = deps;

  /** Applies a settled charge to a pending top-up (locked by the caller). */
  async function apply(tx: Tx, pending: TopUpRow, charge: Charge, now: Date): Promise<TopUpRow> {
    if (charge.status === 'succeeded') {
      const settled = await settleTopUp(tx, pending.tenant_id, pending.id, {
        status: 'succeeded',
        processor_charge_id: charge.id,
        updated_at: now,
      });
      await creditTopUp(tx, settled, now);
      return settled;
    }
    return settleTopUp(tx, pending.tenant_id, pending.id, {
      status: 'declined',
      processor_charge_id: charge.id,
      decline_code: charge.status === 'declined' ? charge.declineCode : null,
      updated_at: now,
    });
  }

  return {
    /**
     * Step 2: the charge (safe to repeat: same processor key). No answer, or one not settled yet:
     * 503, the top-up stays pending. A refusal of the request abandons the top-up: 422.
     */
    async charge(topUp: TopUpRow): Promise<Charge> {
      let charge: Charge;
      const bound = await deps.accounts.bind(deps.processor, topUp.tenant_id);
      try {
        charge = await bound.processor.chargeCustomer(
          {
            customerId: topUp.processor_customer_id ?? '',
            paymentMethodId: topUp.processor_payment_method_id ?? '',
            amount: topUp.amount,
            currency: topUp.currency,
            description: `Top-up of ${topUp.minutes} minutes`,
            metadata: {
              [TOP_UP_METADATA_KEY]: topUp.id,
              tenant_id: topUp.tenant_id,
              user_id: topUp.user_id,
            },
            applicationFeeAmount: bound.chargeFeeAmount(topUp.amount),
          },
          topUp.processor_key ?? '',
        );
      } catch (error) {
        if (error instanceof ProcessorUnavailableError) throw processorUnavailable();
        if (error instanceof ProcessorRequestError) {
          await abandonTopUp(db, topUp.tenant_id, topUp.id, clock.now());
          throw unprocessable(`The payment processor refused the charge: ${error.message}`);
        }
        throw error;
      }
      if (charge.status === 'processing') throw processorUnavailable();
      return charge;
    },

    /**
     * Step 3, in its transaction: applies the charge unless reconciliation already settled the
     * top-up (then that is the answer). Returns the settled top-up, succeeded or declined.
     */
    async settle(tx: Tx, topUp: TopUpRow, charge: Charge, now: Date): Promise<TopUpRow> {
      const locked = await findTopUp(tx, topUp.tenant_id, topUp.id, { forUpdate: true });
      // Abandoned too: reconciliation found no charge while this one was still on its way, and a
      // charge the processor made is always credited.
      if (locked?.status === 'pending' || locked?.status === 'abandoned')
        return apply(tx, locked, charge, now);
      if (locked?.status === 'succeeded' || locked?.status === 'declined') return locked;
      throw processorUnavailable();
    },

    /** Job: settles a top-up no request finished, adopting what the processor did. */
    async reconcile(tenantId: string, topUpId: string): Promise<void> {
      const topUp = await findTopUp(db, tenantId, topUpId);
      if (topUp?.status !== 'pending') return;
      const { processor } = await deps.accounts.bind(deps.processor, tenantId);
      const charge = topUp.processor_customer_id
        ? await processor.findCharge({
            customerId: topUp.processor_customer_id,
            metadataKey: TOP_UP_METADATA_KEY,
            metadataValue: topUp.id,
            createdSince: new Date(topUp.created_at.getTime() - CLOCK_SKEW_MS),
          })
        : undefined;
      if (charge?.status === 'processing') {
        throw new RetryJobError('the charge is still processing', STILL_PROCESSING_RECHECK_MS, {
          countsAsAttempt: false,
        });
      }
      if (!charge && clock.now().getTime() - topUp.created_at.getTime() < TOP_UP_ABANDON_AFTER_MS) {
        // Nothing yet: a request may still be charging it (a retry just before this run). Look again.
        throw new RetryJobError('no charge found yet', TOP_UP_ABANDON_AFTER_MS, { countsAsAttempt: false });
      }
      await db.transaction().execute(async (tx) => {
        const now = clock.now();
        const locked = await findTopUp(tx, tenantId, topUpId, { forUpdate: true });
        if (locked?.status !== 'pending') return;
        if (charge) await apply(tx, locked, charge, now);
        else await abandonTopUp(tx, tenantId, topUpId, now);
      });
    },
  };
}

export type TopUpCharges = ReturnType<typeof createTopUpCharges>;
