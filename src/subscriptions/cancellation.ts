/**
 * Cancelling a subscription at the end of its current period (`POST /subscriptions/{id}/cancel`,
 * the console's "Cancel at period end"): the user keeps the plan and its minutes until
 * current_period_end, then the subscription is canceled and nothing more is billed.
 * - Agency-billed: the flag is set in one transaction; the period job ends it (renewals.ts). A
 *   downgrade's successor waiting to start is canceled with it, so nothing follows.
 * - Processor-billed: the processor is told first (its idempotency key is the subscription's, so a
 *   retry asks once), then its answer is stored; a processor that does not answer is 503 and a
 *   retry is safe.
 * A subscription that has not started yet (a downgrade's successor) is canceled at once. Asking
 * again answers the same subscription and changes nothing.
 */
import { ProcessorRequestError, ProcessorUnavailableError } from '../billing/processor.js';
import { auditNothingChanged } from '../core/audit/context.js';
import { type AuditChange, recordAudit } from '../core/audit/record.js';
import { notFound, unprocessable } from '../core/errors.js';
import type { SubscriptionWriter } from './events.js';
import { toSubscription } from './events.js';
import { type ProcessorDeps, processorUnavailable } from './processor-change.js';
import {
  findScheduledSubscriptions,
  findSubscription,
  LIVE_STATUSES,
  publicStatus,
  type SubscriptionRow,
} from './repository.js';
import type { Subscription } from './schemas.js';

export function createCancellation(deps: ProcessorDeps, writer: SubscriptionWriter) {
  const { db, clock } = deps;

  function refusal(sub: SubscriptionRow | undefined): Error | undefined {
    if (!sub) return notFound('Subscription');
    if (!LIVE_STATUSES.includes(sub.status)) {
      return unprocessable(`The subscription is ${publicStatus(sub.status)}; there is nothing to cancel.`);
    }
    return undefined;
  }

  async function cancelAgency(tenantId: string, subscriptionId: string): Promise<Subscription> {
    return db.transaction().execute(async (tx) => {
      const now = clock.now();
      const sub = await findSubscription(tx, tenantId, subscriptionId, { forUpdate: true });
      const refused = refusal(sub);
      if (refused || !sub) throw refused;
      if (sub.current_period_start > now) {
        const ended = await writer.update(tx, sub, { status: 'canceled', canceled_at: now, updated_at: now });
        await recordAudit(tx, canceled(tenantId, sub.id, ['status', 'canceled_at'], now));
        return toSubscription(ended);
      }
      const successors = await findScheduledSubscriptions(tx, tenantId, sub.user_id, now, {
        forUpdate: true,
      });
      for (const next of successors) {
        await writer.update(tx, next, { status: 'canceled', canceled_at: now, updated_at: now });
      }
      if (sub.cancel_at_period_end) {
        auditNothingChanged();
        return toSubscription(sub);
      }
      const flagged = await writer.update(tx, sub, { cancel_at_period_end: true, updated_at: now });
      await recordAudit(tx, canceled(tenantId, sub.id, ['cancel_at_period_end'], now));
      return toSubscription(flagged);
    });
  }

  async function cancelProcessor(tenantId: string, sub: SubscriptionRow): Promise<Subscription> {
    if (sub.cancel_at_period_end) {
      auditNothingChanged();
      return toSubscription(sub);
    }
    if (!sub.provider_subscription_id) {
      throw unprocessable('The subscription is still being set up at the processor; try again in a minute.');
    }
    const { processor } = await deps.accounts.bind(deps.processor, tenantId);
    let remote: Awaited<ReturnType<typeof processor.cancelAtPeriodEnd>>;
    try {
      remote = await processor.cancelAtPeriodEnd(sub.provider_subscription_id, `vp_cancel_end_${sub.id}`);
    } catch (error) {
      if (error instanceof ProcessorUnavailableError) throw processorUnavailable();
      if (error instanceof ProcessorRequestError) {
        throw unprocessable(`The payment processor refused the cancellation: ${error.message}`);
      }
      throw error;
    }
    return db.transaction().execute(async (tx) => {
      const locked = await findSubscription(tx, tenantId, sub.id, { forUpdate: true });
      if (!locked) throw notFound('Subscription');
      if (locked.cancel_at_period_end === remote.cancelAtPeriodEnd) {
        auditNothingChanged();
        return toSubscription(locked);
      }
      const now = clock.now();
      const updated = await writer.update(tx, locked, {
        cancel_at_period_end: remote.cancelAtPeriodEnd,
        updated_at: now,
      });
      await recordAudit(tx, canceled(tenantId, sub.id, ['cancel_at_period_end'], now));
      return toSubscription(updated);
    });
  }

  return {
    async cancelAtPeriodEnd(tenantId: string, subscriptionId: string): Promise<Subscription> {
      const sub = await findSubscription(db, tenantId, subscriptionId);
      const refused = refusal(sub);
      if (refused || !sub) throw refused;
      if (sub.provider === 'processor') return cancelProcessor(tenantId, sub);
      if (sub.provider !== 'agency') {
        throw unprocessable(`A subscription billed by ${sub.provider} is canceled where it is billed.`);
      }
      return cancelAgency(tenantId, subscriptionId);
    },
  };
}

function canceled(tenantId: string, subscriptionId: string, fields: string[], at: Date): AuditChange {
  return {
    action: 'subscription.canceled',
    tenantId,
    objectType: 'subscription',
    objectId: subscriptionId,
    fields,
    at,
  };
}
