/**
 * The subscribe and plan-change rules as values, without a database: which requests are refused
 * (and with which error, in which order), when a subscribe switches the current subscription,
 * upgrade versus downgrade, and what an agency-billed change does to periods and minutes.
 */
import { describe, expect, it } from 'vitest';
import {
  agencyFirstPeriod,
  checkChangeTarget,
  decidePlanChange,
  decideSubscribe,
  NO_CARD_MESSAGE,
  type PlanFacts,
  planAgencyChange,
  type SubscriptionFacts,
  type UserFacts,
} from '../../src/subscriptions/plan-change-rules.js';

const NOW = new Date('2026-03-15T12:00:00.000Z');

const user = (over: Partial<UserFacts> = {}): UserFacts => ({ status: 'active', deleted_at: null, ...over });
const plan = (over: Partial<PlanFacts> = {}): PlanFacts => ({
  id: 'plan_starter',
  active: true,
  archived_at: null,
  provider: 'agency',
  currency: 'usd',
  monthly_price: 2900,
  included_minutes: 100,
  ...over,
});
const subscription = (over: Partial<SubscriptionFacts> = {}): SubscriptionFacts => ({
  plan_id: 'plan_starter',
  provider: 'agency',
  status: 'active',
  cancel_at_period_end: false,
  current_period_start: new Date('2026-03-01T00:00:00.000Z'),
  ...over,
});
const refused = (message: string) => ({ ok: false, code: 'unprocessable', message });
const missing = (resource: string) => ({ ok: false, code: 'not_found', resource });

describe('decideSubscribe', () => {
  const base = { user: user(), plan: plan(), current: undefined, hasCard: false };

  it('creates a subscription for a user without a current one (agency plans need no card)', () => {
    expect(decideSubscribe(base)).toMatchObject({ ok: true, action: 'create' });
  });

  it('switches the current subscription when it is on another plan', () => {
    const current = { id: 'sub_1', plan_id: 'plan_other' };
    expect(decideSubscribe({ ...base, current })).toMatchObject({
      ok: true,
      action: 'switch',
      subscriptionId: 'sub_1',
    });
  });

  it('refuses a user already on the plan', () => {
    const current = { id: 'sub_1', plan_id: 'plan_starter' };
    expect(decideSubscribe({ ...base, current })).toEqual(
      refused('The user is already subscribed to this plan.'),
    );
  });

  it('treats a deleted user and an archived plan as absent, the user first', () => {
    const deleted = user({ deleted_at: NOW });
    const archived = plan({ archived_at: NOW });
    expect(decideSubscribe({ ...base, user: undefined })).toEqual(missing('User'));
    expect(decideSubscribe({ ...base, user: deleted, plan: archived })).toEqual(missing('User'));
    expect(decideSubscribe({ ...base, plan: archived })).toEqual(missing('Plan'));
    expect(decideSubscribe({ ...base, plan: undefined })).toEqual(missing('Plan'));
  });

  it('refuses an inactive plan before a blocked user', () => {
    const inactive = plan({ active: false });
    const blocked = user({ status: 'blocked' });
    expect(decideSubscribe({ ...base, plan: inactive, user: blocked })).toEqual(
      refused('The plan is not active.'),
    );
    expect(decideSubscribe({ ...base, user: blocked })).toEqual(refused('The user is blocked.'));
  });

  it('needs a card on file for a processor plan', () => {
    const processor = plan({ provider: 'processor' });
    expect(decideSubscribe({ ...base, plan: processor })).toEqual(refused(NO_CARD_MESSAGE));
    expect(decideSubscribe({ ...base, plan: processor, hasCard: true })).toMatchObject({
      ok: true,
      action: 'create',
    });
  });
});

describe('checkChangeTarget', () => {
  it('answers not found for a missing subscription, and for a target plan not offered', () => {
    expect(checkChangeTarget(undefined, plan())).toEqual(missing('Subscription'));
    expect(checkChangeTarget({}, undefined)).toEqual(missing('Plan'));
    expect(checkChangeTarget({}, plan({ active: false }))).toEqual(missing('Plan'));
    expect(checkChangeTarget({}, plan({ archived_at: NOW }))).toEqual(missing('Plan'));
    expect(checkChangeTarget({ id: 'sub_1' }, plan())).toMatchObject({
      ok: true,
      subscription: { id: 'sub_1' },
    });
  });
});

describe('decidePlanChange', () => {
  const from = plan();
  const base = {
    subscription: subscription(),
    from,
    plan: plan({ id: 'plan_pro', monthly_price: 8900, included_minutes: 500 }),
    user: user(),
    hasCard: false,
  };

  it('is an upgrade when the monthly price is greater or equal, a downgrade when lower', () => {
    expect(decidePlanChange(base)).toMatchObject({ ok: true, kind: 'upgrade' });
    const same = plan({ id: 'plan_same', monthly_price: from.monthly_price });
    expect(decidePlanChange({ ...base, plan: same })).toMatchObject({ ok: true, kind: 'upgrade' });
    const cheaper = plan({ id: 'plan_lite', monthly_price: 900 });
    expect(decidePlanChange({ ...base, plan: cheaper })).toMatchObject({ ok: true, kind: 'downgrade' });
  });

  it('refuses the current plan, another provider and another currency, in that order', () => {
    expect(decidePlanChange({ ...base, plan: from })).toEqual(
      refused('The subscription is already on the target plan.'),
    );
    const processor = plan({ id: 'plan_card', provider: 'processor', currency: 'eur' });
    expect(decidePlanChange({ ...base, plan: processor })).toEqual(
      refused('The target plan is billed by processor, the subscription by agency.'),
    );
    const euro = plan({ id: 'plan_eur', currency: 'eur' });
    expect(decidePlanChange({ ...base, plan: euro })).toEqual(
      refused('The target plan is in eur, the current plan in usd.'),
    );
  });

  it('answers not found for a deleted user, refuses a blocked one', () => {
    expect(decidePlanChange({ ...base, user: user({ deleted_at: NOW }) })).toEqual(missing('User'));
    expect(decidePlanChange({ ...base, user: user({ status: 'blocked' }) })).toEqual(
      refused('The user is blocked.'),
    );
  });

  it('refuses a subscription that no longer bills (named by its public status) or ends at period end', () => {
    const canceled = subscription({ status: 'canceled' });
    expect(decidePlanChange({ ...base, subscription: canceled })).toEqual(
      refused('The subscription is canceled; it cannot change plan.'),
    );
    const incomplete = subscription({ status: 'incomplete' });
    expect(decidePlanChange({ ...base, subscription: incomplete })).toEqual(
      refused('The subscription is inactive; it cannot change plan.'),
    );
    const ending = subscription({ cancel_at_period_end: true });
    expect(decidePlanChange({ ...base, subscription: ending })).toEqual(
      refused(
        'The subscription ends at the end of its period; change the plan of the subscription that follows it.',
      ),
    );
  });

  it('lets past_due subscriptions change plan, and needs a card for processor plans', () => {
    const pastDue = subscription({ status: 'past_due', provider: 'processor' });
    const card = { ...base, subscription: pastDue, from: plan({ provider: 'processor' }) };
    const target = plan({ id: 'plan_pro', provider: 'processor', monthly_price: 8900 });
    expect(decidePlanChange({ ...card, plan: target })).toEqual(refused(NO_CARD_MESSAGE));
    expect(decidePlanChange({ ...card, plan: target, hasCard: true })).toMatchObject({
      ok: true,
      kind: 'upgrade',
    });
  });
});

describe('agency periods and minutes', () => {
  it('starts with the trial when the plan has one, else a calendar month (clamped)', () => {
    expect(agencyFirstPeriod({ trial_period_days: 14 }, NOW)).toEqual({
      status: 'trialing',
      current_period_start: NOW,
      current_period_end: new Date('2026-03-29T12:00:00.000Z'),
      billing_anchor: new Date('2026-03-29T12:00:00.000Z'),
      trial_end: new Date('2026-03-29T12:00:00.000Z'),
    });
    const jan31 = new Date('2026-01-31T08:00:00.000Z');
    expect(agencyFirstPeriod({ trial_period_days: 0 }, jan31)).toEqual({
      status: 'active',
      current_period_start: jan31,
      current_period_end: new Date('2026-02-28T08:00:00.000Z'),
      billing_anchor: jan31,
      trial_end: null,
    });
  });

  const change = {
    subscription: subscription(),
    from: { included_minutes: 100 },
    plan: { included_minutes: 500 },
    now: NOW,
  };

  it('an upgrade takes the plan and grants the difference of minutes while active or trialing', () => {
    expect(planAgencyChange({ ...change, kind: 'upgrade' })).toEqual({
      action: 'take_plan',
      extraMinutes: 400,
    });
    const trialing = subscription({ status: 'trialing' });
    expect(planAgencyChange({ ...change, kind: 'upgrade', subscription: trialing })).toEqual({
      action: 'take_plan',
      extraMinutes: 400,
    });
    const pastDue = subscription({ status: 'past_due' });
    expect(planAgencyChange({ ...change, kind: 'upgrade', subscription: pastDue })).toEqual({
      action: 'take_plan',
      extraMinutes: 0,
    });
    const fewer = { ...change, plan: { included_minutes: 50 } };
    expect(planAgencyChange({ ...fewer, kind: 'upgrade' })).toEqual({ action: 'take_plan', extraMinutes: 0 });
  });

  it('a downgrade caps the subscription at the month’s last minute; the next starts a minute later', () => {
    expect(planAgencyChange({ ...change, kind: 'downgrade' })).toEqual({
      action: 'cap_and_follow',
      capEnd: new Date('2026-03-31T23:59:00.000Z'),
      nextStart: new Date('2026-04-01T00:00:00.000Z'),
      nextEnd: new Date('2026-05-01T00:00:00.000Z'),
    });
    const dec31 = new Date('2026-12-31T23:00:00.000Z');
    expect(planAgencyChange({ ...change, kind: 'downgrade', now: dec31 })).toMatchObject({
      capEnd: new Date('2026-12-31T23:59:00.000Z'),
      nextStart: new Date('2027-01-01T00:00:00.000Z'),
    });
  });

  it('a subscription that has not started yet simply takes the new plan, without minutes', () => {
    const scheduled = subscription({ current_period_start: new Date('2026-04-01T00:00:00.000Z') });
    for (const kind of ['upgrade', 'downgrade'] as const) {
      expect(planAgencyChange({ ...change, kind, subscription: scheduled })).toEqual({
        action: 'take_plan',
        extraMinutes: 0,
      });
    }
  });
});
