/**
 * The rules of subscribing and changing plan (docs/api.md "Subscription", docs/design-choices.md), as
 * values and without I/O: who may subscribe to which plan, when a subscribe request switches the
 * user's current subscription instead, whether a change is an upgrade or a downgrade, and what an
 * agency-billed change does to the periods and minutes. The service loads the facts (under lock),
 * asks these functions, and acts on the answer; a refusal becomes the API error there.
 */

import {
  addMonths,
  DAY_MS,
  lastMinuteOfUtcMonth,
  periodEndAfter,
  startOfNextUtcMonth,
} from '../billing/periods.js';
import type { PlanRow } from '../plans/repository.js';
import type { UserRow } from '../users/repository.js';
import { LIVE_STATUSES, publicStatus, type SubscriptionRow } from './repository.js';

/** Why a request is refused: a resource that does not exist for the caller, or a rule it breaks. */
export type Refusal =
  | { ok: false; code: 'not_found'; resource: 'User' | 'Plan' | 'Subscription' }
  | { ok: false; code: 'unprocessable'; message: string };

export type UserFacts = Pick<UserRow, 'status' | 'deleted_at'>;
export type PlanFacts = Pick<
  PlanRow,
  'id' | 'active' | 'archived_at' | 'provider' | 'currency' | 'monthly_price' | 'included_minutes'
>;
export type SubscriptionFacts = Pick<
  SubscriptionRow,
  'plan_id' | 'provider' | 'status' | 'cancel_at_period_end' | 'current_period_start'
>;

/**
 * A change the rules allowed, with the rows it acts on (what the first phase of a request decided).
 * `replaces`: the subscriptions a downgrade of `subscription` scheduled, which this change
 * supersedes (then `subscription` is first given back its uncapped period).
 */
export type DecidedChange =
  | { kind: 'create'; user: UserRow; plan: PlanRow }
  | {
      kind: 'upgrade' | 'downgrade';
      user: UserRow;
      plan: PlanRow;
      from: PlanRow;
      subscription: SubscriptionRow;
      replaces: SubscriptionRow[];
    };

const notFound = (resource: 'User' | 'Plan' | 'Subscription'): Refusal => ({
  ok: false,
  code: 'not_found',
  resource,
});
const refuse = (message: string): Refusal => ({ ok: false, code: 'unprocessable', message });

export const NO_CARD_MESSAGE =
  'The user has no payment method on file; the plan is billed by the card processor.';

/**
 * POST /subscriptions: a new subscription, or — when the user already has a current subscription
 * on another plan — a switch of that subscription (then decided by `decidePlanChange`).
 * `hasCard` matters only for a processor-billed plan and a user without a current subscription.
 */
export function decideSubscribe<U extends UserFacts, P extends PlanFacts>(facts: {
  user: U | undefined;
  plan: P | undefined;
  current: { id: string; plan_id: string } | undefined;
  hasCard: boolean;
}):
  | { ok: true; action: 'create'; user: U; plan: P }
  | { ok: true; action: 'switch'; subscriptionId: string; user: U; plan: P }
  | Refusal {
  const { user, plan, current } = facts;
  if (!user || user.deleted_at) return notFound('User');
  if (!plan || plan.archived_at) return notFound('Plan');
  if (!plan.active) return refuse('The plan is not active.');
  if (user.status === 'blocked') return refuse('The user is blocked.');
  if (current) {
    if (current.plan_id === plan.id) return refuse('The user is already subscribed to this plan.');
    return { ok: true, action: 'switch', subscriptionId: current.id, user, plan };
  }
  if (plan.provider === 'processor' && !facts.hasCard) return refuse(NO_CARD_MESSAGE);
  return { ok: true, action: 'create', user, plan };
}

/** PATCH /subscriptions/{id}/plan: the subscription exists and the target plan is offered. */
export function checkChangeTarget<S, P extends Pick<PlanFacts, 'active' | 'archived_at'>>(
  subscription: S | undefined,
  plan: P | undefined,
): { ok: true; subscription: S; plan: P } | Refusal {
  if (!subscription) return notFound('Subscription');
  if (!plan || plan.archived_at || !plan.active) return notFound('Plan');
  return { ok: true, subscription, plan };
}

/**
 * Moving `subscription` (now on `from`) to `plan`: refused, or an upgrade (a monthly price greater
 * than or equal to the current one) or a downgrade. `hasCard` matters only for processor plans.
 * `scheduledDowngrade`: the subscription ends at its period's end because an agency downgrade
 * scheduled its successor; changing it again replaces that successor, so it is allowed.
 */
export function decidePlanChange<U extends UserFacts>(facts: {
  subscription: SubscriptionFacts;
  from: PlanFacts;
  plan: PlanFacts;
  user: U | undefined;
  hasCard: boolean;
  scheduledDowngrade?: boolean;
}): { ok: true; kind: 'upgrade' | 'downgrade'; user: U } | Refusal {
  const { subscription, from, plan, user } = facts;
  if (!user || user.deleted_at) return notFound('User');
  if (subscription.plan_id === plan.id) return refuse('The subscription is already on the target plan.');
  if (plan.provider !== subscription.provider) {
    return refuse(
      `The target plan is billed by ${plan.provider}, the subscription by ${subscription.provider}.`,
    );
  }
  if (plan.currency !== from.currency) {
    return refuse(`The target plan is in ${plan.currency}, the current plan in ${from.currency}.`);
  }
  if (user.status === 'blocked') return refuse('The user is blocked.');
  if (!LIVE_STATUSES.includes(subscription.status)) {
    return refuse(`The subscription is ${publicStatus(subscription.status)}; it cannot change plan.`);
  }
  if (subscription.cancel_at_period_end && !facts.scheduledDowngrade) {
    return refuse(
      'The subscription ends at the end of its period; change the plan of the subscription that follows it.',
    );
  }
  if (plan.provider === 'processor' && !facts.hasCard) return refuse(NO_CARD_MESSAGE);
  return { ok: true, kind: plan.monthly_price >= from.monthly_price ? 'upgrade' : 'downgrade', user };
}

/** The first period of a new agency-billed subscription: the trial if the plan has one, else a month. */
export function agencyFirstPeriod(plan: Pick<PlanRow, 'trial_period_days'>, now: Date) {
  const trial = plan.trial_period_days > 0;
  const end = trial ? new Date(now.getTime() + plan.trial_period_days * DAY_MS) : addMonths(now, 1);
  return {
    status: trial ? ('trialing' as const) : ('active' as const),
    current_period_start: now,
    current_period_end: end,
    billing_anchor: trial ? end : now,
    trial_end: trial ? end : null,
  };
}

/**
 * The end the period of a subscription capped by a downgrade had before the cap: the trial's end,
 * or a month from the period's start counted from the billing anchor.
 */
export function uncappedPeriodEnd(
  subscription: Pick<SubscriptionFacts, 'status' | 'current_period_start'> &
    Pick<SubscriptionRow, 'trial_end' | 'billing_anchor'>,
): Date {
  if (subscription.status === 'trialing' && subscription.trial_end) return subscription.trial_end;
  const start = subscription.current_period_start;
  return periodEndAfter(subscription.billing_anchor ?? start, start);
}

/**
 * What an agency-billed plan change does.
 * - `take_plan`: the subscription takes the new plan now (an upgrade, or any change of a subscription
 *   that has not started yet); `extraMinutes` is the difference of included minutes an upgrade grants
 *   for the current period (0 when there is none to grant).
 * - `cap_and_follow` (a downgrade of a started subscription): it ends at `capEnd`, the last minute
 *   of the UTC month, and a new subscription on the target plan runs from `nextStart` to `nextEnd`.
 */
export type AgencyChange =
  | { action: 'take_plan'; extraMinutes: number }
  | { action: 'cap_and_follow'; capEnd: Date; nextStart: Date; nextEnd: Date };

export function planAgencyChange(facts: {
  kind: 'upgrade' | 'downgrade';
  subscription: Pick<SubscriptionFacts, 'status' | 'current_period_start'>;
  from: Pick<PlanFacts, 'included_minutes'>;
  plan: Pick<PlanFacts, 'included_minutes'>;
  now: Date;
}): AgencyChange {
  const { kind, subscription, now } = facts;
  const started = subscription.current_period_start <= now;
  if (kind === 'upgrade' || !started) {
    const difference = facts.plan.included_minutes - facts.from.included_minutes;
    const grants =
      kind === 'upgrade' &&
      started &&
      difference > 0 &&
      (subscription.status === 'active' || subscription.status === 'trialing');
    return { action: 'take_plan', extraMinutes: grants ? difference : 0 };
  }
  const nextStart = startOfNextUtcMonth(now);
  return {
    action: 'cap_and_follow',
    capEnd: lastMinuteOfUtcMonth(now),
    nextStart,
    nextEnd: addMonths(nextStart, 1),
  };
}
