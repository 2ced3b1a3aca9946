/**
 * The subscription jobs: periods (renewals, trial ends, scheduled starts and ends, the minutes each
 * period grants, the overage of the period that ended or of a subscription the processor ended:
 * overage/service.ts), the reconciliation of processor operations no request finished, and the
 * cancellation at the processor of a deleted user's subscriptions.
 */

import { periodEndAfter } from '../billing/periods.js';
import type { PaymentProcessor, ProcessorStatus, ProcessorSubscription } from '../billing/processor.js';
import { ProcessorRequestError } from '../billing/processor.js';
import { findCustomer, findPlanOfPrice } from '../billing/repository.js';
import type { Tx } from '../core/db/database.js';
import { enqueueJob } from '../core/jobs/runner.js';
import { createSubscriptionWriter } from './events.js';
import { grantPeriod, scheduleTick } from './periods.js';
import { applyProcessorResult, type ProcessorDeps } from './processor-change.js';
import type { SubscriptionRow } from './repository.js';
import {
  findLiveSubscriptions,
  findOperation,
  findSubscription,
  finishOperation,
  type InternalStatus,
  LIVE_STATUSES,
} from './repository.js';

export const PROCESSOR_CANCEL_QUEUE = 'subscriptions.cancel_at_processor';
/** How long the period job waits before looking again at a processor that has not renewed yet. */
const RENEWAL_RECHECK_MS = 10 * 60 * 1000;
/** The processor's states of a subscription that will not renew. */
const ENDED: ProcessorStatus[] = ['canceled', 'incomplete_expired'];

/**
 * What happens in the transaction that ends a period (the overage capability settles the period's
 * negative balance): given by the composition root, so subscriptions need not know of overage.
 */
export type PeriodEndedHook = (
  tx: Tx,
  sub: SubscriptionRow,
  processorName: PaymentProcessor['name'],
  now: Date,
) => Promise<unknown>;

export function createSubscriptionJobs(deps: ProcessorDeps & { periodEnded: PeriodEndedHook }) {
  const { db, clock } = deps;
  const writer = createSubscriptionWriter(deps.events);

  /** A processor-billed subscription takes the processor's state, then grants its period. */
  async function syncFromProcessor(tenantId: string, subscriptionId: string, providerSubscriptionId: string) {
    const { processor } = await deps.accounts.bind(deps.processor, tenantId);
    const remote = await processor.retrieveSubscription(providerSubscriptionId);
    await db.transaction().execute(async (tx) => {
      const now = clock.now();
      const sub = await findSubscription(tx, tenantId, subscriptionId, { forUpdate: true });
      if (!sub || !LIVE_STATUSES.includes(sub.status)) return;
      // The processor renewed, or ended the subscription: what the ended period used beyond the
      // balance is its overage (billed at once by its job, whether the subscription goes on or not).
      if (remote.currentPeriodStart > sub.current_period_start || ENDED.includes(remote.status)) {
        await deps.periodEnded(tx, sub, deps.processor.name, now);
      }
      const planId =
        (await findPlanOfPrice(tx, tenantId, deps.processor.name, remote.priceId)) ?? sub.plan_id;
      const synced = await writer.update(tx, sub, {
        plan_id: planId,
        status: remote.status as InternalStatus,
        cancel_at_period_end: remote.cancelAtPeriodEnd,
        current_period_start: remote.currentPeriodStart,
        current_period_end: remote.currentPeriodEnd,
        trial_end: remote.trialEnd,
        canceled_at: remote.status === 'canceled' ? (sub.canceled_at ?? now) : sub.canceled_at,
        updated_at: now,
      });
      await grantPeriod(tx, synced, now);
      // The processor renews shortly after the period ends; look again later if it has not yet.
      const behind = synced.current_period_end <= now;
      await scheduleTick(tx, synced, now, behind ? new Date(now.getTime() + RENEWAL_RECHECK_MS) : undefined);
    });
  }

  /** An agency-billed subscription: every period boundary passed, in order, up to now. */
  async function advanceLocally(tenantId: string, subscriptionId: string) {
    await db.transaction().execute(async (tx) => {
      const now = clock.now();
      let sub = await findSubscription(tx, tenantId, subscriptionId, { forUpdate: true });
      while (sub && LIVE_STATUSES.includes(sub.status)) {
        await grantPeriod(tx, sub, now);
        if (sub.current_period_end > now) break;
        // The period ended (renewed or not): what it used beyond the balance is its overage.
        await deps.periodEnded(tx, sub, deps.processor.name, now);
        if (sub.cancel_at_period_end) {
          sub = await writer.update(tx, sub, {
            status: 'canceled',
            canceled_at: sub.current_period_end,
            updated_at: now,
          });
          break;
        }
        const start = sub.current_period_end;
        const trialEnded = sub.status === 'trialing';
        const anchor = trialEnded ? start : (sub.billing_anchor ?? sub.current_period_start);
        sub = await writer.update(tx, sub, {
          status: trialEnded ? 'active' : sub.status,
          billing_anchor: anchor,
          current_period_start: start,
          current_period_end: periodEndAfter(anchor, start),
          updated_at: now,
        });
      }
      if (sub) await scheduleTick(tx, sub, now);
    });
  }

  return {
    /** Job: brings one subscription's periods up to now (renewals, trial ends, scheduled starts, credits). */
    async advance(tenantId: string, subscriptionId: string): Promise<void> {
      const snapshot = await findSubscription(db, tenantId, subscriptionId);
      if (!snapshot || !LIVE_STATUSES.includes(snapshot.status)) return;
      if (snapshot.provider === 'processor' && snapshot.provider_subscription_id) {
        await syncFromProcessor(tenantId, subscriptionId, snapshot.provider_subscription_id);
        return;
      }
      await advanceLocally(tenantId, subscriptionId);
    },

    /** Job: settles an operation whose request never finished (503, crash), adopting what the processor did. */
    async reconcile(tenantId: string, operationId: string): Promise<void> {
      const op = await findOperation(db, tenantId, operationId);
      if (op?.status !== 'pending') return;
      const { processor } = await deps.accounts.bind(deps.processor, tenantId);
      let remote: ProcessorSubscription | undefined;
      if (op.kind === 'create') {
        const customer = await findCustomer(db, tenantId, op.user_id, processor.name);
        remote = customer
          ? await processor.findSubscriptionByOperation(customer.customer_id, op.id)
          : undefined;
      } else {
        const sub = await findSubscription(db, tenantId, op.subscription_id!);
        if (sub?.provider_subscription_id) {
          const current = await processor.retrieveSubscription(sub.provider_subscription_id);
          const planId = await findPlanOfPrice(db, tenantId, processor.name, current.priceId);
          if (planId === op.to_plan_id) remote = current;
        }
      }
      await db.transaction().execute(async (tx) => {
        const now = clock.now();
        const locked = await findOperation(tx, tenantId, operationId, { forUpdate: true });
        if (locked?.status !== 'pending') return;
        if (remote) await applyProcessorResult(tx, writer, locked, remote, now);
        else await finishOperation(tx, tenantId, operationId, { status: 'abandoned', updated_at: now });
      });
    },

    /** In the user-deletion transaction: ends every subscription of the user, at the processor by a job. */
    async cancelAllInTx(tx: Tx, tenantId: string, userId: string, at: Date): Promise<void> {
      for (const sub of await findLiveSubscriptions(tx, tenantId, userId)) {
        await writer.update(tx, sub, {
          status: 'canceled',
          cancel_at_period_end: false,
          canceled_at: at,
          updated_at: at,
        });
        if (sub.provider === 'processor' && sub.provider_subscription_id) {
          await enqueueJob(tx, {
            queue: PROCESSOR_CANCEL_QUEUE,
            tenantId,
            payload: { subscription_id: sub.id, provider_subscription_id: sub.provider_subscription_id },
            runAt: at,
            maxAttempts: 25,
            singletonKey: `sub-cancel:${sub.id}`,
          });
        }
      }
    },

    /** Job: cancels at the processor; a subscription the processor already ended counts as done. */
    async cancelAtProcessor(
      tenantId: string,
      subscriptionId: string,
      providerSubscriptionId: string,
    ): Promise<void> {
      const { processor } = await deps.accounts.bind(deps.processor, tenantId);
      try {
        await processor.cancelSubscription(providerSubscriptionId, `vp_cancel_${subscriptionId}`);
      } catch (error) {
        if (error instanceof ProcessorRequestError) return;
        throw error;
      }
    },
  };
}

export type SubscriptionJobs = ReturnType<typeof createSubscriptionJobs>;
