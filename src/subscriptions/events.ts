/**
 * Subscription events: every write of a subscription goes through the writer, which records the
 * event in the same transaction (docs/events.md "What each event means"):
 * - `subscription.created`: a subscription is inserted (a first one, a processor one, the one an
 *   agency downgrade schedules for next month);
 * - `subscription.canceled`: its status becomes `canceled`;
 * - `subscription.updated`: any other change of what `GET /subscriptions/{id}` shows besides
 *   `updated_at` (plan, status, period renewal, cancel_at_period_end); a write that changes
 *   nothing visible (a processor sync that found nothing new) records nothing.
 * The recorder is a dependency, not an import of src/events, so subscriptions stay below events.
 */
import type { Tx } from '../core/db/database.js';
import {
  insertSubscription,
  type PublicSubscriptionRow,
  publicStatus,
  type SubscriptionRow,
  type SubscriptionsTable,
  updateSubscription,
} from './repository.js';
import type { Subscription } from './schemas.js';

export type SubscriptionEventType = 'subscription.created' | 'subscription.updated' | 'subscription.canceled';

/** Records an event in the caller's transaction (src/events/record.ts, wired in src/services.ts). */
export interface SubscriptionEventRecorder {
  record(
    tx: Tx,
    event: { tenantId: string; type: SubscriptionEventType; object: Subscription; at: Date },
  ): Promise<unknown>;
}

export function toSubscription(row: PublicSubscriptionRow): Subscription {
  return {
    id: row.id,
    user_id: row.user_id,
    plan_id: row.plan_id,
    status: publicStatus(row.status),
    provider: row.provider,
    provider_subscription_id: row.provider_subscription_id,
    cancel_at_period_end: row.cancel_at_period_end,
    current_period_start: row.current_period_start.toISOString(),
    current_period_end: row.current_period_end.toISOString(),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

/** What a write from `before` to `after` tells partners, if anything. */
export function eventOfChange(before: Subscription, after: Subscription): SubscriptionEventType | undefined {
  if (after.status === 'canceled') return before.status === 'canceled' ? undefined : 'subscription.canceled';
  const { updated_at: _before, ...was } = before;
  const { updated_at: _after, ...is } = after;
  return JSON.stringify(was) === JSON.stringify(is) ? undefined : 'subscription.updated';
}

export function createSubscriptionWriter(events: SubscriptionEventRecorder) {
  return {
    async insert(tx: Tx, row: SubscriptionsTable): Promise<SubscriptionRow> {
      const sub = await insertSubscription(tx, row);
      const object = toSubscription(sub);
      await events.record(tx, {
        tenantId: sub.tenant_id,
        type: 'subscription.created',
        object,
        at: sub.created_at,
      });
      return sub;
    },

    /** Updates `before` (read in `tx`, locked by the caller) and records what the change means. */
    async update(
      tx: Tx,
      before: SubscriptionRow,
      changes: Partial<SubscriptionsTable>,
    ): Promise<SubscriptionRow> {
      const after = await updateSubscription(tx, before.tenant_id, before.id, changes);
      const object = toSubscription(after);
      const type = eventOfChange(toSubscription(before), object);
      if (type) await events.record(tx, { tenantId: after.tenant_id, type, object, at: after.updated_at });
      return after;
    },
  };
}

export type SubscriptionWriter = ReturnType<typeof createSubscriptionWriter>;
