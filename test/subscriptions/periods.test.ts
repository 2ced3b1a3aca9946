/**
 * Periods, month ends and credits with the injected clock: agency downgrades on the last day of a
 * month, in February (leap and common years) and on Dec 31; trials ending on a month end; renewals
 * that grant the plan's minutes once per period; scheduled agency subscriptions starting.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  addMonths,
  lastMinuteOfUtcMonth,
  periodEndAfter,
  startOfNextUtcMonth,
} from '../../src/billing/periods.js';
import { ManualClock } from '../../src/core/clock.js';
import {
  ADAPTERS,
  addCard,
  type BillingApp,
  balance,
  changePlan,
  createUser,
  createWorld,
  startBillingApp,
  subscribe,
  type World,
} from './helpers.js';

describe('calendar arithmetic', () => {
  it('keeps the anchor day, clamped to short months', () => {
    const jan31 = new Date('2026-01-31T10:00:00.000Z');
    expect(addMonths(jan31, 1).toISOString()).toBe('2026-02-28T10:00:00.000Z');
    expect(addMonths(jan31, 2).toISOString()).toBe('2026-03-31T10:00:00.000Z');
    expect(addMonths(new Date('2028-01-31T00:00:00.000Z'), 1).toISOString()).toBe('2028-02-29T00:00:00.000Z');
    expect(addMonths(new Date('2026-12-31T23:00:00.000Z'), 1).toISOString()).toBe('2027-01-31T23:00:00.000Z');
    expect(periodEndAfter(jan31, new Date('2026-02-28T10:00:00.000Z')).toISOString()).toBe(
      '2026-03-31T10:00:00.000Z',
    );
    expect(periodEndAfter(jan31, new Date('2026-11-30T10:00:00.000Z')).toISOString()).toBe(
      '2026-12-31T10:00:00.000Z',
    );
  });

  it('caps at the last minute of the UTC month and starts the first of the next', () => {
    expect(lastMinuteOfUtcMonth(new Date('2026-02-10T00:00:00.000Z')).toISOString()).toBe(
      '2026-02-28T23:59:00.000Z',
    );
    expect(lastMinuteOfUtcMonth(new Date('2028-02-29T23:59:59.999Z')).toISOString()).toBe(
      '2028-02-29T23:59:00.000Z',
    );
    expect(startOfNextUtcMonth(new Date('2026-12-31T23:59:59.000Z')).toISOString()).toBe(
      '2027-01-01T00:00:00.000Z',
    );
  });
});

describe.each(ADAPTERS)('periods and credits with the %s processor', (adapter) => {
  let app: BillingApp;
  let world: World;
  const clock = new ManualClock('2026-01-01T00:00:00.000Z');

  beforeAll(async () => {
    app = await startBillingApp(adapter, { clock });
    world = await createWorld(app.t);
  });
  afterAll(() => app.close());

  const get = async (id: string) =>
    (await world.tenant.request('GET', `/api/v1/subscriptions/${id}`)).body.data;
  const planOf = async (userId: string) =>
    (await world.tenant.request('GET', `/api/v1/users/${userId}`)).body.data.plan_id;
  const at = async (iso: string) => {
    clock.set(iso);
    await app.t.services.jobRunner.drain();
  };

  it.each([
    [
      'the last day of a 31-day month',
      '2026-01-31T15:00:00.000Z',
      '2026-01-31T23:59:00.000Z',
      '2026-02-01T00:00:00.000Z',
      '2026-03-01T00:00:00.000Z',
    ],
    [
      'February of a common year (its last day)',
      '2026-02-28T08:00:00.000Z',
      '2026-02-28T23:59:00.000Z',
      '2026-03-01T00:00:00.000Z',
      '2026-04-01T00:00:00.000Z',
    ],
    [
      'February of a leap year',
      '2028-02-15T08:00:00.000Z',
      '2028-02-29T23:59:00.000Z',
      '2028-03-01T00:00:00.000Z',
      '2028-04-01T00:00:00.000Z',
    ],
    [
      'Dec 31',
      '2026-12-31T22:30:00.000Z',
      '2026-12-31T23:59:00.000Z',
      '2027-01-01T00:00:00.000Z',
      '2027-02-01T00:00:00.000Z',
    ],
  ])(
    'agency downgrade on %s: capped, the next starts a minute later and grants its minutes then',
    async (_name, now, capEnd, nextStart, nextEnd) => {
      clock.set(new Date(new Date(now).getTime() - 5 * 86_400_000));
      const user = await createUser(world.tenant);
      const sub = (await subscribe(world.tenant, user.id, world.plans.agencyPro.id)).body.data;
      expect(await balance(app.t, user.id)).toBe(500);

      clock.set(now);
      const next = (await changePlan(world.tenant, sub.id, world.plans.agencyBasic.id)).body.data;
      expect(next).toMatchObject({
        status: 'active',
        current_period_start: nextStart,
        current_period_end: nextEnd,
      });
      expect(await get(sub.id)).toMatchObject({
        cancel_at_period_end: true,
        current_period_end: capEnd,
        status: 'active',
      });
      expect(await planOf(user.id)).toBe(world.plans.agencyPro.id);

      await at(capEnd);
      expect((await get(sub.id)).status).toBe('canceled');
      expect(await balance(app.t, user.id)).toBe(500);

      await at(nextStart);
      expect(await planOf(user.id)).toBe(world.plans.agencyBasic.id);
      expect(await balance(app.t, user.id)).toBe(600);
      await at(nextStart);
      expect(await balance(app.t, user.id)).toBe(600);

      await at(nextEnd);
      expect(await get(next.id)).toMatchObject({ status: 'active', current_period_start: nextEnd });
      expect(await balance(app.t, user.id)).toBe(700);
    },
  );

  it.each([
    ['agency', 'agencyTrial', 50],
    ['processor', 'cardTrial', 200],
  ] as const)(
    'a %s trial ending on a month end becomes active; periods then follow that day, clamped',
    async (_p, planKey, minutes) => {
      clock.set('2026-01-17T12:00:00.000Z');
      const user = await createUser(world.tenant);
      await addCard(app.t, user.id);
      const sub = (await subscribe(world.tenant, user.id, world.plans[planKey].id)).body.data;
      expect(sub).toMatchObject({ status: 'trialing', current_period_end: '2026-01-31T12:00:00.000Z' });
      expect(await balance(app.t, user.id)).toBe(minutes);

      await at('2026-01-31T12:00:00.000Z');
      expect(await get(sub.id)).toMatchObject({
        status: 'active',
        current_period_start: '2026-01-31T12:00:00.000Z',
        current_period_end: '2026-02-28T12:00:00.000Z',
      });
      expect(await balance(app.t, user.id)).toBe(2 * minutes);

      await at('2026-02-28T12:00:00.000Z');
      expect(await get(sub.id)).toMatchObject({
        status: 'active',
        current_period_start: '2026-02-28T12:00:00.000Z',
        current_period_end: '2026-03-31T12:00:00.000Z',
      });
      expect(await balance(app.t, user.id)).toBe(3 * minutes);
      expect(await planOf(user.id)).toBe(world.plans[planKey].id);
    },
  );

  it('a processor renewal whose charge declines leaves the subscription past_due, without new minutes', async () => {
    clock.set('2026-03-31T09:00:00.000Z');
    const user = await createUser(world.tenant);
    await addCard(app.t, user.id);
    const sub = (await subscribe(world.tenant, user.id, world.plans.cardBasic.id)).body.data;
    expect(sub.current_period_end).toBe('2026-04-30T09:00:00.000Z');
    await addCard(app.t, user.id, 'pm_card_chargeDeclined');
    await at('2026-04-30T09:00:00.000Z');
    expect(await get(sub.id)).toMatchObject({
      status: 'past_due',
      current_period_start: '2026-04-30T09:00:00.000Z',
      current_period_end: '2026-05-31T09:00:00.000Z',
    });
    expect(await balance(app.t, user.id)).toBe(100);
    expect(await planOf(user.id)).toBeNull();
  });
});
