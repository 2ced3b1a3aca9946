/**
 * Agency-billed subscriptions (the agency invoices its clients itself): no processor is involved, so
 * the whole change happens in the request's one transaction. What it does follows
 * plan-change-rules.ts: a new subscription with its first period; an upgrade, or a change before
 * the start, takes the new plan (an upgrade grants the difference of included minutes); a downgrade
 * caps the subscription at the end of the UTC month and starts one on the new plan a minute later.
 * Changing a capped subscription again replaces the scheduled one (a user never has two current
 * subscriptions, nor two scheduled).
 */
import type { Tx } from '../core/db/database.js';
import { newId } from '../core/ids.js';
import { addCreditEntry } from '../credits/repository.js';
import type { SubscriptionWriter } from './events.js';
import { grantPeriod, scheduleTick } from './periods.js';
import {
  agencyFirstPeriod,
  type DecidedChange,
  planAgencyChange,
  uncappedPeriodEnd,
} from './plan-change-rules.js';
import type { SubscriptionRow } from './repository.js';

/**
 * A change of a subscription capped by a downgrade replaces what that downgrade did: the scheduled
 * successors become `superseded` (never started, shown as inactive) and the subscription gets back
 * its period and renews again; the change is then applied to it as if no downgrade had happened.
 */
async function dropScheduledDowngrade(
  tx: Tx,
  writer: SubscriptionWriter,
  change: Extract<DecidedChange, { kind: 'upgrade' | 'downgrade' }>,
  now: Date,
): Promise<SubscriptionRow> {
  for (const scheduled of change.replaces) {
    await writer.update(tx, scheduled, {
      status: 'superseded',
      canceled_at: now,
      updated_at: now,
    });
  }
  const restored = await writer.update(tx, change.subscription, {
    cancel_at_period_end: false,
    current_period_end: uncappedPeriodEnd(change.subscription),
    updated_at: now,
  });
  await scheduleTick(tx, restored, now);
  return restored;
}

/** Applies an agency-billed change in `tx`; returns the subscription the partner is answered with. */
export async function applyAgencyChange(
  tx: Tx,
  writer: SubscriptionWriter,
  tenantId: string,
  change: DecidedChange,
  operationId: string,
  now: Date,
): Promise<SubscriptionRow> {
  const { plan, user } = change;
  if (change.kind === 'create') {
    const sub = await writer.insert(tx, {
      id: newId('sub'),
      tenant_id: tenantId,
      user_id: user.id,
      plan_id: plan.id,
      provider: 'agency',
      provider_subscription_id: null,
      provider_item_id: null,
      cancel_at_period_end: false,
      ...agencyFirstPeriod(plan, now),
      canceled_at: null,
      created_at: now,
      updated_at: now,
    });
    await grantPeriod(tx, sub, now);
    await scheduleTick(tx, sub, now);
    return sub;
  }

  const sub =
    change.replaces.length > 0 ? await dropScheduledDowngrade(tx, writer, change, now) : change.subscription;
  const effect = planAgencyChange({ kind: change.kind, subscription: sub, from: change.from, plan, now });
  if (effect.action === 'take_plan') {
    const updated = await writer.update(tx, sub, { plan_id: plan.id, updated_at: now });
    if (effect.extraMinutes > 0) {
      await addCreditEntry(tx, {
        tenantId,
        userId: user.id,
        minutes: effect.extraMinutes,
        reason: `Upgrade from ${change.from.name} to ${plan.name}: difference of included minutes for the current period`,
        reference: `upgrade:${operationId}`,
        at: now,
      });
    }
    return updated;
  }

  const capped = await writer.update(tx, sub, {
    cancel_at_period_end: true,
    current_period_end: effect.capEnd,
    updated_at: now,
  });
  await scheduleTick(tx, capped, now, effect.capEnd);
  const next = await writer.insert(tx, {
    id: newId('sub'),
    tenant_id: tenantId,
    user_id: user.id,
    plan_id: plan.id,
    status: 'active',
    provider: 'agency',
    provider_subscription_id: null,
    provider_item_id: null,
    cancel_at_period_end: false,
    current_period_start: effect.nextStart,
    current_period_end: effect.nextEnd,
    billing_anchor: effect.nextStart,
    trial_end: null,
    canceled_at: null,
    created_at: now,
    updated_at: now,
  });
  await scheduleTick(tx, next, now);
  return next;
}
