/**
 * A scheduled downgrade and what follows it: an upgrade or another change of the current
 * subscription (PATCH, or POST /subscriptions with another plan) replaces the scheduled one in the
 * same transaction, the user's deletion cancels both, and at no moment does a user have two
 * current subscriptions. Processor downgrades change the same subscription, so nothing is
 * scheduled there; the same sequences are checked on them too.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createPlan } from '../support/app.js';
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

const NOW = '2026-03-10T12:00:00.000Z';

describe.each(ADAPTERS)('a scheduled downgrade with the %s processor', (adapter) => {
  let app: BillingApp;
  let world: World;
  let agencyPremium: any;
  let agencyMini: any;
  const clock = new ManualClock(NOW);

  beforeAll(async () => {
    app = await startBillingApp(adapter, { clock });
    world = await createWorld(app.t);
    agencyPremium = await createPlan(app.t, world.tenant.id, {
      name: 'Agency Premium',
      provider: 'agency',
      monthly_price: 19900,
      included_minutes: 1200,
    });
    agencyMini = await createPlan(app.t, world.tenant.id, {
      name: 'Agency Mini',
      provider: 'agency',
      monthly_price: 900,
      included_minutes: 30,
    });
  });
  afterAll(() => app.close());

  const get = async (id: string) =>
    (await world.tenant.request('GET', `/api/v1/subscriptions/${id}`)).body.data;
  const planOf = async (userId: string) =>
    (await world.tenant.request('GET', `/api/v1/users/${userId}`)).body.data.plan_id;
  const subscriptionsOf = async (userId: string) =>
    (await world.tenant.request('GET', `/api/v1/subscriptions?user_id=${userId}&sort_order=asc`)).body.data;
  /** Active or trialing subscriptions whose period has started at the clock's time. */
  const currentOf = async (userId: string) =>
    (await subscriptionsOf(userId)).filter(
      (s: any) =>
        (s.status === 'active' || s.status === 'trialing') && new Date(s.current_period_start) <= clock.now(),
    );
  const at = async (iso: string) => {
    clock.set(iso);
    await app.t.services.jobRunner.drain();
  };

  /** An agency user on Pro with a downgrade to Basic scheduled for April 1. */
  async function withScheduledDowngrade() {
    clock.set(NOW);
    const user = await createUser(world.tenant);
    const current = (await subscribe(world.tenant, user.id, world.plans.agencyPro.id)).body.data;
    const scheduled = (await changePlan(world.tenant, current.id, world.plans.agencyBasic.id)).body.data;
    expect(scheduled).toMatchObject({ status: 'active', current_period_start: '2026-04-01T00:00:00.000Z' });
    return { user, current, scheduled };
  }

  it('an upgrade of the current subscription replaces the scheduled downgrade: one subscription, uncapped, on the new plan', async () => {
    const { user, current, scheduled } = await withScheduledDowngrade();
    const response = await changePlan(world.tenant, current.id, agencyPremium.id);
    expect(response.status, response.raw).toBe(200);
    expect(response.body.data).toMatchObject({
      id: current.id,
      plan_id: agencyPremium.id,
      status: 'active',
      cancel_at_period_end: false,
      current_period_start: NOW,
      current_period_end: '2026-04-10T12:00:00.000Z',
    });
    expect(await get(scheduled.id)).toMatchObject({
      status: 'inactive',
      plan_id: world.plans.agencyBasic.id,
    });
    expect((await subscriptionsOf(user.id)).filter((s: any) => s.status === 'active')).toHaveLength(1);
    expect(await planOf(user.id)).toBe(agencyPremium.id);
    expect(await balance(app.t, user.id)).toBe(1200);

    // April comes: the replaced subscription never starts, the upgraded one renews on its own day.
    await at('2026-04-01T00:00:00.000Z');
    expect(await get(scheduled.id)).toMatchObject({ status: 'inactive' });
    expect(await get(current.id)).toMatchObject({ status: 'active', cancel_at_period_end: false });
    await at('2026-04-10T12:00:00.000Z');
    expect(await get(current.id)).toMatchObject({
      status: 'active',
      plan_id: agencyPremium.id,
      current_period_start: '2026-04-10T12:00:00.000Z',
    });
    expect((await currentOf(user.id)).map((s: any) => s.id)).toEqual([current.id]);
    expect(await balance(app.t, user.id)).toBe(2400);
  });

  it('another downgrade of the current subscription replaces the scheduled one with a new one', async () => {
    const { user, current, scheduled } = await withScheduledDowngrade();
    const response = await changePlan(world.tenant, current.id, agencyMini.id);
    expect(response.status, response.raw).toBe(200);
    const next = response.body.data;
    expect(next).toMatchObject({
      plan_id: agencyMini.id,
      status: 'active',
      current_period_start: '2026-04-01T00:00:00.000Z',
    });
    expect(next.id).not.toBe(scheduled.id);
    expect(await get(scheduled.id)).toMatchObject({ status: 'inactive' });
    expect(await get(current.id)).toMatchObject({
      plan_id: world.plans.agencyPro.id,
      cancel_at_period_end: true,
      current_period_end: '2026-03-31T23:59:00.000Z',
    });
    expect((await subscriptionsOf(user.id)).filter((s: any) => s.status === 'active')).toHaveLength(2);
    expect(await planOf(user.id)).toBe(world.plans.agencyPro.id);

    await at('2026-04-01T00:00:00.000Z');
    expect((await currentOf(user.id)).map((s: any) => s.id)).toEqual([next.id]);
    expect(await planOf(user.id)).toBe(agencyMini.id);
    expect(await balance(app.t, user.id)).toBe(500 + 30);
  });

  it('POST /subscriptions with another plan switches the current subscription and replaces the scheduled one', async () => {
    const { user, current, scheduled } = await withScheduledDowngrade();
    const response = await subscribe(world.tenant, user.id, agencyPremium.id);
    expect(response.status, response.raw).toBe(201);
    expect(response.body.data).toMatchObject({
      id: current.id,
      plan_id: agencyPremium.id,
      cancel_at_period_end: false,
    });
    expect(await get(scheduled.id)).toMatchObject({ status: 'inactive' });
    expect((await currentOf(user.id)).map((s: any) => s.id)).toEqual([current.id]);
    expect(await planOf(user.id)).toBe(agencyPremium.id);
  });

  it('deleting the user cancels the current and the scheduled subscription; the scheduled one never starts', async () => {
    const { user, current, scheduled } = await withScheduledDowngrade();
    expect((await world.tenant.request('DELETE', `/api/v1/users/${user.id}`)).status).toBe(200);
    expect(await get(current.id)).toMatchObject({ status: 'canceled' });
    expect(await get(scheduled.id)).toMatchObject({ status: 'canceled' });
    await at('2026-04-01T00:00:00.000Z');
    expect(await get(scheduled.id)).toMatchObject({ status: 'canceled' });
    expect(await currentOf(user.id)).toEqual([]);
  });

  it('a processor downgrade then upgrade stays one subscription; deleting the user cancels it', async () => {
    clock.set(NOW);
    const user = await createUser(world.tenant);
    await addCard(app.t, user.id);
    const sub = (await subscribe(world.tenant, user.id, world.plans.cardPro.id)).body.data;
    const down = await changePlan(world.tenant, sub.id, world.plans.cardBasic.id);
    expect(down.body.data).toMatchObject({ id: sub.id, plan_id: world.plans.cardBasic.id });
    const up = await changePlan(world.tenant, sub.id, world.plans.cardPro.id);
    expect(up.status, up.raw).toBe(200);
    expect(up.body.data).toMatchObject({ id: sub.id, plan_id: world.plans.cardPro.id, status: 'active' });
    expect((await subscriptionsOf(user.id)).map((s: any) => s.id)).toEqual([sub.id]);
    expect(await planOf(user.id)).toBe(world.plans.cardPro.id);

    expect((await world.tenant.request('DELETE', `/api/v1/users/${user.id}`)).status).toBe(200);
    expect(await get(sub.id)).toMatchObject({ status: 'canceled' });
    expect(await currentOf(user.id)).toEqual([]);
  });
});
