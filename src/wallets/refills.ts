/**
 * Auto-refill of tenant wallets (docs/wallets.md): the agency's card is kept on the platform's own
 * processor account, and a wallet a call debit leaves below its threshold gets a refill job
 * (wallets/repository.ts APPEND_WALLET_CALL_DEBITS, one per tenant at a time).
 *
 * A refill is one charge and one credit, made once however often its job runs: the job's payload
 * fixes the minutes, rate, currency and card when it is queued, the charge's processor key is the
 * job's id (a retry replays the processor's first answer, never charges twice), and the credit's
 * ledger reference is the job's id too (a retry that finds it credited changes nothing).
 */

import {
  type PaymentProcessor,
  ProcessorRequestError,
  ProcessorUnavailableError,
} from '../billing/processor.js';
import { recordAudit } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import { ApiError, notFound, unprocessable } from '../core/errors.js';
import { randomBase62 } from '../core/ids.js';
import type { TenantJob } from '../core/jobs/definitions.js';
import { RetryJobError } from '../core/jobs/runner.js';
import { amountForMinutes } from '../core/money.js';
import { findTenant } from '../tenants/repository.js';
import {
  appendWalletEntry,
  enqueueRefillIfDue,
  findWallet,
  recordRefillOutcome,
  setRefillCard,
} from './repository.js';
import type { RefillPlan, Wallet } from './schemas.js';
import { toWallet } from './serializers.js';

const PROCESSING_RECHECK_MS = 60_000;

/** The metadata key the processor's charge carries the refill's ledger reference under. */
export const REFILL_METADATA_KEY = 'wallet_refill';

async function viaProcessor<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof ProcessorUnavailableError) {
      throw new ApiError(
        'service_unavailable',
        'The payment processor did not answer; retry later.',
        undefined,
        {
          headers: { 'retry-after': '1' },
        },
      );
    }
    if (error instanceof ProcessorRequestError) {
      throw unprocessable(`The payment processor refused the card: ${error.message}`);
    }
    throw error;
  }
}

export function createWalletRefills(deps: { db: Db; clock: Clock; processor: PaymentProcessor }) {
  const { db, clock, processor } = deps;

  return {
    /**
     * Stores the agency's card for refills: a customer of the platform's account (created once per
     * tenant), the card attached to it. A refill that is due then is queued at once.
     */
    async setCard(tenantId: string, token: string): Promise<Wallet> {
      const tenant = await findTenant(db, tenantId);
      if (!tenant) throw notFound('Tenant');
      const wallet = await findWallet(db, tenantId);
      if (!wallet) throw unprocessable('The tenant is unmetered: create its wallet before adding a card.');
      const customerId =
        wallet.refill_customer_id ??
        (
          await viaProcessor(() =>
            processor.createCustomer(
              {
                email: tenant.email_from ?? '',
                name: tenant.name,
                metadata: { tenant_id: tenantId, purpose: 'wallet_refill' },
              },
              `vp_wallet_cus_${tenantId}`,
            ),
          )
        ).id;
      const card = await viaProcessor(() =>
        processor.attachPaymentMethod({ customerId, token }, `vp_wallet_pm_${randomBase62(24)}`),
      );
      const updated = await db.transaction().execute(async (tx) => {
        const now = clock.now();
        const row = await setRefillCard(tx, tenantId, { customerId, paymentMethodId: card.id }, now);
        await recordAudit(tx, {
          action: 'wallet.refill_card_set',
          tenantId,
          objectType: 'wallet',
          objectId: tenantId,
          fields: ['payment_method'],
          at: now,
        });
        await enqueueRefillIfDue(tx, tenantId, clock.now());
        return row;
      });
      return toWallet(tenantId, updated);
    },

    /** Queues a refill when one is due (after the operator changed the wallet's settings). */
    async refillIfDue(tenantId: string): Promise<void> {
      await enqueueRefillIfDue(db, tenantId, clock.now());
    },

    /** The refill job: charges the plan's amount once and credits its minutes once. */
    async refill(job: TenantJob<RefillPlan>): Promise<void> {
      const { tenantId } = job;
      const plan = job.payload;
      const reference = `refill:${job.id}`;
      let charge: Awaited<ReturnType<PaymentProcessor['chargeCustomer']>>;
      try {
        charge = await processor.chargeCustomer(
          {
            customerId: plan.customer_id,
            paymentMethodId: plan.payment_method_id,
            amount: amountForMinutes(plan.minutes, plan.rate, plan.currency),
            currency: plan.currency,
            description: `Wholesale minutes: refill of ${plan.minutes} minutes`,
            metadata: { [REFILL_METADATA_KEY]: reference, tenant_id: tenantId },
          },
          `vp_wallet_refill_${job.id}`,
        );
      } catch (error) {
        // No answer: the job retries with the same key. A refused request will not change.
        if (!(error instanceof ProcessorRequestError)) throw error;
        await recordRefillOutcome(db, tenantId, `refused: ${error.message}`, clock.now());
        return;
      }
      if (charge.status === 'processing') {
        throw new RetryJobError('the refill charge is still processing', PROCESSING_RECHECK_MS, {
          countsAsAttempt: false,
        });
      }
      if (charge.status === 'declined') {
        await recordRefillOutcome(db, tenantId, charge.declineCode ?? charge.message, clock.now());
        return;
      }
      await db.transaction().execute(async (tx) => {
        const now = clock.now();
        await appendWalletEntry(tx, {
          tenantId,
          minutes: plan.minutes,
          reason: 'refill',
          reference,
          note: `charge ${charge.id}`,
          wholesaleRate: plan.rate,
          at: now,
        });
        await recordRefillOutcome(tx, tenantId, null, now);
      });
    },
  };
}

export type WalletRefills = ReturnType<typeof createWalletRefills>;
