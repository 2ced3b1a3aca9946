/**
 * GET /api/v1/usage: a user with a plan's grant, a top-up, calls of every outcome and, after the
 * renewal, overage; the numbers agree with the ledger and the balance; a balance at or below zero
 * refuses calls; 404 / 422 / 403 cases.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createAgent, publish, trigger } from '../calls/helpers.js';
import { createTenant, type TestTenant } from '../support/app.js';
import {
  balance,
  createUser,
  createWorld,
  ledgerOf,
  startUsageApp,
  subscribedUser,
  type UsageApp,
  type World,
} from './helpers.js';

describe('usage report', () => {
  const clock = new ManualClock('2026-01-05T15:00:00.000Z');
  let app: UsageApp;
  let world: World;
  let userId: string;
  let other: TestTenant;

  // Answered calls talk for 50 minutes.
  beforeAll(async () => {
    app = await startUsageApp('simulated', clock, { SIMULATED_CALL_SECONDS: '3000' });
    world = await createWorld(app.t);
    other = await createTenant(app.t, { name: 'Other Agency' });
  });
  afterAll(() => app.close());

  const usage = (query: string, tenant: TestTenant = world.tenant) =>
    tenant.request('GET', `/api/v1/usage?${query}`);
  const call = async (webhookId: string, phone: string) => {
    const response = await trigger(app.t, webhookId, { phone, name: 'Ada' });
    await app.t.services.jobRunner.drain();
    return response;
  };

  it('adds up a month of grants, a top-up and calls, and refuses calls once the balance is spent', async () => {
    const { user } = await subscribedUser(app.t, world, world.cardPlan.id);
    userId = user.id;
    const topUp = await world.tenant.request('POST', `/api/v1/users/${userId}/top-ups`, { minutes: 20 });
    expect(topUp.status).toBe(201);
    const agent = await publish(app.t, (await createAgent(app.t, world.tenant.id, userId)).id);

    expect((await call(agent.webhook_id, '+14155550000')).status).toBe(202); // no answer
    expect((await call(agent.webhook_id, '+14155559999')).status).toBe(202); // fails
    for (let i = 0; i < 3; i++) expect((await call(agent.webhook_id, '+14155550123')).status).toBe(202);
    expect(await balance(app.t, userId)).toBe(120 - 150);
    const refused = await call(agent.webhook_id, '+14155550123');
    expect(refused.status).toBe(402);
    expect(refused.body.error.code).toBe('insufficient_credits');

    const january = await usage(`user_id=${userId}&period=2026-01`);
    expect(january.status).toBe(200);
    expect(january.body.data).toEqual({
      user_id: userId,
      period: { key: '2026-01', start: '2026-01-01T00:00:00.000Z', end: '2026-02-01T00:00:00.000Z' },
      minutes: { included: 100, used: 150, topped_up: 20, overage: 0, adjustments: 0, balance: -30 },
      calls: { completed: 3, no_answer: 1, failed: 1, total: 5 },
      amounts: { currency: 'usd', top_ups: 200, overage: 0, total: 200 },
      unsettled_overage: [],
    });
    // The default period is the current month.
    expect((await usage(`user_id=${userId}`)).body.data).toEqual(january.body.data);
  });

  it('reports the overage settled at the renewal, and the ledger agrees with the balance', async () => {
    clock.set('2026-02-05T15:00:01.000Z');
    await app.t.services.jobRunner.drain();
    const february = (await usage(`user_id=${userId}&period=2026-02`)).body.data;
    expect(february.minutes).toEqual({
      included: 100,
      used: 0,
      topped_up: 0,
      overage: 30,
      adjustments: 0,
      balance: 100,
    });
    expect(february.calls).toEqual({ completed: 0, no_answer: 0, failed: 0, total: 0 });
    expect(february.amounts).toEqual({ currency: 'usd', top_ups: 0, overage: 360, total: 360 });
    // January's balance is still what it was at its end.
    expect((await usage(`user_id=${userId}&period=2026-01`)).body.data.minutes.balance).toBe(-30);

    const ledger = await ledgerOf(app.t, userId);
    expect(ledger.sum).toBe(await balance(app.t, userId));
    expect(ledger.sum).toBe(100);
    // A month with nothing in it.
    const march = (await usage(`user_id=${userId}&period=2026-03`)).body.data;
    expect(march.minutes).toEqual({
      included: 0,
      used: 0,
      topped_up: 0,
      overage: 0,
      adjustments: 0,
      balance: 100,
    });
  });

  it('answers 404 for another tenant’s user or an unknown one', async () => {
    const theirs = await usage(`user_id=${userId}&period=2026-01`, other);
    expect(theirs.status).toBe(404);
    expect(theirs.body.error.code).toBe('not_found');
    expect((await usage('user_id=usr_unknown&period=2026-01')).status).toBe(404);
    const gone = await createUser(world.tenant);
    expect((await world.tenant.request('DELETE', `/api/v1/users/${gone.id}`)).status).toBe(200);
    expect((await usage(`user_id=${gone.id}&period=2026-01`)).status).toBe(404);
  });

  it.each(['2026-13', '2026-1', '26-01', '1999-12', 'january'])(
    'answers 422 on period=%s',
    async (period) => {
      const response = await usage(`user_id=${userId}&period=${encodeURIComponent(period)}`);
      expect(response.status).toBe(422);
      expect(response.body.error.code).toBe('validation_failed');
      expect(response.body.error.details.map((d: { field: string }) => d.field)).toEqual(['period']);
    },
  );

  it('answers 422 without user_id and 403 without the subscriptions:read scope', async () => {
    const missing = await usage('period=2026-01');
    expect(missing.status).toBe(422);
    expect(missing.body.error.details[0].field).toBe('user_id');

    const key = await app.t.admin('POST', `/admin/v1/tenants/${world.tenant.id}/api-keys`, {
      scopes: ['users:read'],
    });
    const narrow = await app.t.partner(key.body.data.key, 'GET', `/api/v1/usage?user_id=${userId}`);
    expect(narrow.status).toBe(403);
    expect(narrow.body.error.details.required_scopes).toEqual(['subscriptions:read']);
  });
});
