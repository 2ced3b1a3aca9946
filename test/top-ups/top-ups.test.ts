/**
 * Top-ups on both processor adapters: a processor-billed user is charged once per Idempotency-Key
 * and credited, a declined card credits nothing, an agency-billed user is credited without the
 * processor, and the balance always agrees with the ledger.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADAPTERS,
  addCard,
  balance,
  createWorld,
  ledgerOf,
  startTopUpApp,
  subscribedUser,
  type TopUpApp,
  topUp,
  type World,
} from './helpers.js';

describe.each(ADAPTERS)('top-ups with the %s processor', (adapter) => {
  let app: TopUpApp;
  let world: World;

  beforeAll(async () => {
    app = await startTopUpApp(adapter);
    world = await createWorld(app.t);
  });
  afterAll(() => app?.close());

  it('charges a processor-billed user minutes × topup_rate once per key, then credits the minutes', async () => {
    const user = await subscribedUser(app.t, world, world.cardPlan.id);
    expect(await balance(app.t, user.id)).toBe(100);
    const before = app.charges();
    const key = `topup-${user.id}`;

    const first = await topUp(world.tenant, user.id, { minutes: 120 }, key);
    expect(first.status, first.raw).toBe(201);
    expect(first.body.data).toEqual({
      id: expect.stringMatching(/^top_[A-Za-z0-9]{24}$/),
      user_id: user.id,
      plan_id: world.cardPlan.id,
      minutes: 120,
      amount: 1200,
      currency: 'usd',
      billing: 'processor',
      status: 'succeeded',
      processor_charge_id: expect.stringMatching(/^pi_/),
      decline_code: null,
      created_at: expect.stringMatching(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/),
    });
    expect(first.headers.location).toBe(
      `http://voiceplane.test/api/v1/users/${user.id}/top-ups/${first.body.data.id}`,
    );
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    expect(app.charges()).toBe(before + 1);
    expect(await balance(app.t, user.id)).toBe(220);

    const retried = await topUp(world.tenant, user.id, { minutes: 120 }, key);
    expect(retried.status).toBe(201);
    expect(retried.headers['idempotent-replayed']).toBe('true');
    expect(retried.body).toEqual(first.body);
    expect(retried.headers.location).toBe(first.headers.location);
    expect(app.charges()).toBe(before + 1);
    expect(await balance(app.t, user.id)).toBe(220);

    const reused = await topUp(world.tenant, user.id, { minutes: 121 }, key);
    expect([reused.status, reused.body.error.code]).toEqual([409, 'idempotency_key_reuse']);
    expect(app.charges()).toBe(before + 1);

    if (app.stripe) {
      const charge = app.stripe.requests.filter(
        (r) => r.method === 'POST' && r.path === '/v1/payment_intents',
      );
      expect(charge.at(-1)?.idempotencyKey).toMatch(/^vp_[0-9a-f]{40}_topup$/);
    }
    const fetched = await world.tenant.request(
      'GET',
      `/api/v1/users/${user.id}/top-ups/${first.body.data.id}`,
    );
    expect(fetched.body.data).toEqual(first.body.data);
  });

  it('without an Idempotency-Key each request is its own top-up and charge', async () => {
    const user = await subscribedUser(app.t, world, world.cardPlan.id);
    const before = app.charges();
    const a = await topUp(world.tenant, user.id, { minutes: 10 });
    const b = await topUp(world.tenant, user.id, { minutes: 10 });
    expect([a.status, b.status]).toEqual([201, 201]);
    expect(a.body.data.id).not.toBe(b.body.data.id);
    expect(a.body.data.amount).toBe(100);
    expect(app.charges()).toBe(before + 2);
    expect(await balance(app.t, user.id)).toBe(120);
  });

  it('a declined card is 422 unprocessable_entity, credits nothing and is listed as declined', async () => {
    const user = await subscribedUser(app.t, world, world.cardPlan.id, 'pm_card_chargeDeclined');
    const before = app.charges();
    const key = `declined-${user.id}`;
    const declined = await topUp(world.tenant, user.id, { minutes: 60 }, key);
    expect(declined.status, declined.raw).toBe(422);
    expect(declined.body.error.code).toBe('unprocessable_entity');
    expect(declined.body.error.message).toMatch(/declined/);
    expect(declined.body.error.details).toEqual({
      top_up_id: expect.stringMatching(/^top_/),
      decline_code: 'generic_decline',
    });
    expect(app.charges()).toBe(before + 1);
    expect(await balance(app.t, user.id)).toBe(100);

    const replayed = await topUp(world.tenant, user.id, { minutes: 60 }, key);
    expect(replayed.status).toBe(422);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body.error).toEqual(declined.body.error);
    expect(app.charges()).toBe(before + 1);

    const listed = await world.tenant.request('GET', `/api/v1/users/${user.id}/top-ups`);
    expect(listed.body.data).toEqual([
      expect.objectContaining({
        id: declined.body.error.details.top_up_id,
        status: 'declined',
        decline_code: 'generic_decline',
        processor_charge_id: expect.stringMatching(/^pi_/),
        amount: 600,
      }),
    ]);
    const ledger = await ledgerOf(app.t, user.id);
    expect(ledger.topUps).toEqual([]);

    // A working card afterwards: a new key tops up.
    await addCard(app.t, user.id, 'pm_card_visa');
    const ok = await topUp(world.tenant, user.id, { minutes: 60 }, `${key}-again`);
    expect(ok.status, ok.raw).toBe(201);
    expect(await balance(app.t, user.id)).toBe(160);
  });

  it('an agency-billed user is credited at once, with no processor call, in the plan’s currency', async () => {
    const user = await subscribedUser(app.t, world, world.agencyPlan.id);
    expect(await balance(app.t, user.id)).toBe(50);
    const before = app.charges();
    const key = `agency-${user.id}`;
    const created = await topUp(world.tenant, user.id, { minutes: 25 }, key);
    expect(created.status, created.raw).toBe(201);
    expect(created.body.data).toMatchObject({
      billing: 'agency',
      status: 'succeeded',
      amount: 200,
      currency: 'eur',
      processor_charge_id: null,
      plan_id: world.agencyPlan.id,
    });
    expect(app.charges()).toBe(before);
    expect(await balance(app.t, user.id)).toBe(75);
    const replayed = await topUp(world.tenant, user.id, { minutes: 25 }, key);
    expect(replayed.headers['idempotent-replayed']).toBe('true');
    expect(replayed.body).toEqual(created.body);
    expect(await balance(app.t, user.id)).toBe(75);
  });

  it('the balance agrees with the ledger, each top-up one entry', async () => {
    const card = await subscribedUser(app.t, world, world.cardPlan.id);
    const agency = await subscribedUser(app.t, world, world.agencyPlan.id);
    for (const [user, minutes] of [
      [card, 7],
      [card, 13],
      [agency, 5],
      [agency, 1],
    ] as const) {
      expect((await topUp(world.tenant, user.id, { minutes }, `ledger-${user.id}-${minutes}`)).status).toBe(
        201,
      );
    }
    for (const [user, expected, entries] of [
      [card, 120, 2],
      [agency, 56, 2],
    ] as const) {
      const ledger = await ledgerOf(app.t, user.id);
      expect(await balance(app.t, user.id)).toBe(expected);
      expect(ledger.sum).toBe(expected);
      expect(ledger.topUps).toHaveLength(entries);
    }
  });

  it('lists a user’s top-ups newest first, paginated', async () => {
    const user = await subscribedUser(app.t, world, world.agencyPlan.id);
    const ids: string[] = [];
    for (const minutes of [1, 2, 3]) ids.push((await topUp(world.tenant, user.id, { minutes })).body.data.id);
    const page1 = await world.tenant.request('GET', `/api/v1/users/${user.id}/top-ups?limit=2`);
    expect(page1.status).toBe(200);
    expect(page1.body.pagination).toEqual({ page: 1, limit: 2, total: 3, pages: 2, has_more: true });
    const page2 = await world.tenant.request('GET', `/api/v1/users/${user.id}/top-ups?limit=2&page=2`);
    expect(page2.body.pagination.has_more).toBe(false);
    const listed = [...page1.body.data, ...page2.body.data].map((item: any) => item.id);
    expect(listed.sort()).toEqual([...ids].sort());
    const past = await world.tenant.request('GET', `/api/v1/users/${user.id}/top-ups?page=9`);
    expect(past.body).toEqual({
      data: [],
      pagination: { page: 9, limit: 20, total: 3, pages: 1, has_more: false },
    });
    const createdAt =
      listed.length === 3 ? [...page1.body.data, ...page2.body.data].map((i: any) => i.created_at) : [];
    expect([...createdAt].sort().reverse()).toEqual(createdAt);
  });
});
