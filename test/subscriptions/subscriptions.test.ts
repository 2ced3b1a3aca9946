/**
 * The subscription endpoints through HTTP, for both processor adapters: every row of the spec's
 * "Moves that operations are shown to cause" table for subscriptions, each error the endpoints
 * list, the operator payment-method routes, and what a user's deletion does to subscriptions.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createPlan, createTenant } from '../support/app.js';
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

describe.each(ADAPTERS)('subscriptions with the %s processor', (adapter) => {
  let app: BillingApp;
  let world: World;
  const clock = new ManualClock(NOW);

  beforeAll(async () => {
    app = await startBillingApp(adapter, { clock });
    world = await createWorld(app.t);
  });
  afterAll(() => app.close());

  const userWithCard = async (token = 'pm_card_visa') => {
    const user = await createUser(world.tenant);
    await addCard(app.t, user.id, token);
    return user;
  };
  const usersListItem = async (userId: string) =>
    (await world.tenant.request('GET', `/api/v1/users/${userId}`)).body.data;

  describe('POST /subscriptions', () => {
    it('subscribes to a processor plan: charged at once, 201 with Location, minutes granted, plan on the user', async () => {
      const user = await userWithCard();
      const response = await subscribe(world.tenant, user.id, world.plans.cardBasic.id);
      expect(response.status, response.raw).toBe(201);
      const sub = response.body.data;
      expect(response.headers.location).toBe(`http://voiceplane.test/api/v1/subscriptions/${sub.id}`);
      expect(sub).toMatchObject({
        user_id: user.id,
        plan_id: world.plans.cardBasic.id,
        status: 'active',
        provider: 'processor',
        cancel_at_period_end: false,
        current_period_start: NOW,
        current_period_end: '2026-04-10T12:00:00.000Z',
        created_at: NOW,
        updated_at: NOW,
      });
      expect(sub.id).toMatch(/^sub_[0-9A-Za-z]{20,}$/);
      expect(sub.provider_subscription_id).toMatch(/^sub_/);
      expect(await balance(app.t, user.id)).toBe(100);
      expect(await usersListItem(user.id)).toMatchObject({
        plan_id: world.plans.cardBasic.id,
        plan_name: 'Card Basic',
      });
      const fetched = await world.tenant.request('GET', `/api/v1/subscriptions/${sub.id}`);
      expect(fetched.body.data).toEqual(sub);
    });

    it('starts a trial: status trialing for trial_period_days, minutes granted, card still required', async () => {
      const noCard = await createUser(world.tenant);
      const refused = await subscribe(world.tenant, noCard.id, world.plans.cardTrial.id);
      expect(refused.status).toBe(422);
      expect(refused.body.error.code).toBe('unprocessable_entity');

      const user = await userWithCard();
      const response = await subscribe(world.tenant, user.id, world.plans.cardTrial.id);
      expect(response.status, response.raw).toBe(201);
      expect(response.body.data).toMatchObject({
        status: 'trialing',
        current_period_start: NOW,
        current_period_end: '2026-03-24T12:00:00.000Z',
      });
      expect(await balance(app.t, user.id)).toBe(200);
    });

    it('a declined first charge creates the subscription as inactive (processor incomplete), with no minutes and no plan', async () => {
      const user = await userWithCard('pm_card_chargeDeclined');
      const response = await subscribe(world.tenant, user.id, world.plans.cardBasic.id);
      expect(response.status, response.raw).toBe(201);
      expect(response.body.data.status).toBe('inactive');
      expect(await balance(app.t, user.id)).toBe(0);
      expect((await usersListItem(user.id)).plan_id).toBeNull();
      const listed = await world.tenant.request(
        'GET',
        `/api/v1/subscriptions?user_id=${user.id}&status=inactive`,
      );
      expect(listed.body.data.map((s: any) => s.id)).toEqual([response.body.data.id]);
    });

    it('subscribes to an agency plan without a card; provider_subscription_id is null', async () => {
      const user = await createUser(world.tenant);
      const response = await subscribe(world.tenant, user.id, world.plans.agencyBasic.id);
      expect(response.status, response.raw).toBe(201);
      expect(response.body.data).toMatchObject({
        status: 'active',
        provider: 'agency',
        provider_subscription_id: null,
        current_period_end: '2026-04-10T12:00:00.000Z',
      });
      expect(await balance(app.t, user.id)).toBe(100);
    });

    it('a user with an active subscription on a different processor plan is switched (proration at the processor), 201', async () => {
      const user = await userWithCard();
      const first = await subscribe(world.tenant, user.id, world.plans.cardBasic.id);
      const before = app.planChanges();
      const switched = await subscribe(world.tenant, user.id, world.plans.cardPro.id);
      expect(switched.status, switched.raw).toBe(201);
      expect(switched.body.data).toMatchObject({
        id: first.body.data.id,
        plan_id: world.plans.cardPro.id,
        status: 'active',
      });
      expect(switched.headers.location).toContain(first.body.data.id);
      expect(app.planChanges()).toBe(before + 1);
      const all = await world.tenant.request('GET', `/api/v1/subscriptions?user_id=${user.id}`);
      expect(all.body.pagination.total).toBe(1);
    });

    it('a user with an active agency subscription is switched with the plan-change rules (here a downgrade: the new subscription)', async () => {
      const user = await createUser(world.tenant);
      const first = await subscribe(world.tenant, user.id, world.plans.agencyPro.id);
      const switched = await subscribe(world.tenant, user.id, world.plans.agencyBasic.id);
      expect(switched.status, switched.raw).toBe(201);
      expect(switched.body.data.id).not.toBe(first.body.data.id);
      expect(switched.body.data).toMatchObject({
        plan_id: world.plans.agencyBasic.id,
        current_period_start: '2026-04-01T00:00:00.000Z',
      });
    });

    it('refuses the plan the user is already on, an inactive plan, a blocked user, unknown ids, invalid bodies', async () => {
      const user = await createUser(world.tenant);
      await subscribe(world.tenant, user.id, world.plans.agencyBasic.id);
      const same = await subscribe(world.tenant, user.id, world.plans.agencyBasic.id);
      expect([same.status, same.body.error.code]).toEqual([422, 'unprocessable_entity']);

      const inactive = await subscribe(world.tenant, user.id, world.plans.inactive.id);
      expect([inactive.status, inactive.body.error.code]).toEqual([422, 'unprocessable_entity']);

      const blocked = await createUser(world.tenant);
      await app.t.admin('PATCH', `/admin/v1/users/${blocked.id}`, { status: 'blocked' });
      const refused = await subscribe(world.tenant, blocked.id, world.plans.agencyBasic.id);
      expect([refused.status, refused.body.error.code]).toEqual([422, 'unprocessable_entity']);

      expect((await subscribe(world.tenant, 'usr_nope', world.plans.agencyBasic.id)).status).toBe(404);
      const noPlan = await subscribe(world.tenant, user.id, 'plan_nope');
      expect([noPlan.status, noPlan.body.error.code]).toEqual([404, 'not_found']);

      const invalid = await world.tenant.request('POST', '/api/v1/subscriptions', {
        user_id: 42,
        plan_id: '',
        extra: true,
      });
      expect(invalid.status).toBe(422);
      expect(invalid.body.error.code).toBe('validation_failed');
      expect(invalid.body.error.details.map((d: any) => d.field).sort()).toEqual([
        'extra',
        'plan_id',
        'user_id',
      ]);
    });

    it('replays the answer for the same Idempotency-Key and refuses the key with another body', async () => {
      const user = await userWithCard();
      const key = `create-${user.id}`;
      const first = await subscribe(world.tenant, user.id, world.plans.cardBasic.id, key);
      const creations = app.creations();
      const replay = await subscribe(world.tenant, user.id, world.plans.cardBasic.id, key);
      expect(replay.status).toBe(201);
      expect(replay.headers['idempotent-replayed']).toBe('true');
      expect(replay.headers.location).toBe(first.headers.location);
      expect(replay.body).toEqual(first.body);
      expect(app.creations()).toBe(creations);
      const reuse = await subscribe(world.tenant, user.id, world.plans.cardPro.id, key);
      expect([reuse.status, reuse.body.error.code]).toEqual([409, 'idempotency_key_reuse']);
    });
  });

  describe('PATCH /subscriptions/{id}/plan', () => {
    it('processor upgrade: invoiced at once with proration, same subscription, active when paid', async () => {
      const user = await userWithCard();
      const sub = (await subscribe(world.tenant, user.id, world.plans.cardBasic.id)).body.data;
      const before = app.planChanges();
      clock.advance(60_000);
      const response = await changePlan(world.tenant, sub.id, world.plans.cardPro.id);
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data).toMatchObject({
        id: sub.id,
        plan_id: world.plans.cardPro.id,
        status: 'active',
        current_period_start: sub.current_period_start,
        current_period_end: sub.current_period_end,
      });
      expect(response.body.data.updated_at).not.toBe(sub.updated_at);
      expect(app.planChanges()).toBe(before + 1);
      clock.set(NOW);
    });

    it('processor upgrade with a declining card: the returned subscription is past_due', async () => {
      const user = await userWithCard();
      const sub = (await subscribe(world.tenant, user.id, world.plans.cardBasic.id)).body.data;
      await addCard(app.t, user.id, 'pm_card_chargeDeclined');
      const response = await changePlan(world.tenant, sub.id, world.plans.cardPro.id);
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data).toMatchObject({
        id: sub.id,
        plan_id: world.plans.cardPro.id,
        status: 'past_due',
      });
    });

    it('processor downgrade: the plan changes at once on the same subscription', async () => {
      const user = await userWithCard();
      const sub = (await subscribe(world.tenant, user.id, world.plans.cardPro.id)).body.data;
      const response = await changePlan(world.tenant, sub.id, world.plans.cardBasic.id);
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data).toMatchObject({
        id: sub.id,
        plan_id: world.plans.cardBasic.id,
        status: 'active',
        cancel_at_period_end: false,
      });
      expect((await usersListItem(user.id)).plan_id).toBe(world.plans.cardBasic.id);
    });

    it('agency upgrade: same subscription on the new plan, the included-minutes difference granted for the current period', async () => {
      const user = await createUser(world.tenant);
      const sub = (await subscribe(world.tenant, user.id, world.plans.agencyBasic.id)).body.data;
      expect(await balance(app.t, user.id)).toBe(100);
      const response = await changePlan(world.tenant, sub.id, world.plans.agencyPro.id);
      expect(response.status, response.raw).toBe(200);
      expect(response.body.data).toMatchObject({
        id: sub.id,
        plan_id: world.plans.agencyPro.id,
        status: 'active',
        current_period_end: sub.current_period_end,
      });
      expect(await balance(app.t, user.id)).toBe(100 + (500 - 100));
      expect((await usersListItem(user.id)).plan_name).toBe('Agency Pro');
    });

    it('an equal monthly_price counts as an upgrade (agency: same subscription, no split)', async () => {
      const twin = await createPlan(app.t, world.tenant.id, {
        name: 'Agency Basic Twin',
        monthly_price: 2500,
        included_minutes: 100,
      });
      const user = await createUser(world.tenant);
      const sub = (await subscribe(world.tenant, user.id, world.plans.agencyBasic.id)).body.data;
      const response = await changePlan(world.tenant, sub.id, twin.id);
      expect(response.body.data).toMatchObject({ id: sub.id, plan_id: twin.id, cancel_at_period_end: false });
    });

    it('agency downgrade: capped at the month end 23:59, the new subscription starts a minute later and is returned', async () => {
      const user = await createUser(world.tenant);
      const sub = (await subscribe(world.tenant, user.id, world.plans.agencyPro.id)).body.data;
      const response = await changePlan(world.tenant, sub.id, world.plans.agencyBasic.id);
      expect(response.status, response.raw).toBe(200);
      const next = response.body.data;
      expect(next.id).not.toBe(sub.id);
      expect(next).toMatchObject({
        user_id: user.id,
        plan_id: world.plans.agencyBasic.id,
        status: 'active',
        provider: 'agency',
        provider_subscription_id: null,
        cancel_at_period_end: false,
        current_period_start: '2026-04-01T00:00:00.000Z',
        current_period_end: '2026-05-01T00:00:00.000Z',
      });
      const old = (await world.tenant.request('GET', `/api/v1/subscriptions/${sub.id}`)).body.data;
      expect(old).toMatchObject({
        plan_id: world.plans.agencyPro.id,
        cancel_at_period_end: true,
        current_period_end: '2026-03-31T23:59:00.000Z',
      });
      expect((await usersListItem(user.id)).plan_id).toBe(world.plans.agencyPro.id);
      expect(await balance(app.t, user.id)).toBe(500);
    });

    it('refuses: unknown or foreign subscription, inactive or unknown target plan (404); same plan, provider or currency mismatch, blocked user, no card (422)', async () => {
      const user = await userWithCard();
      const sub = (await subscribe(world.tenant, user.id, world.plans.cardBasic.id)).body.data;
      const expectError = async (response: any, status: number, code: string) => {
        expect(response.status, response.raw).toBe(status);
        expect(response.body.error.code).toBe(code);
      };
      await expectError(
        await changePlan(world.tenant, 'sub_unknown', world.plans.cardPro.id),
        404,
        'not_found',
      );
      await expectError(await changePlan(world.tenant, sub.id, world.plans.inactive.id), 404, 'not_found');
      await expectError(await changePlan(world.tenant, sub.id, 'plan_unknown'), 404, 'not_found');
      await expectError(
        await changePlan(world.tenant, sub.id, world.plans.cardBasic.id),
        422,
        'unprocessable_entity',
      );
      await expectError(
        await changePlan(world.tenant, sub.id, world.plans.agencyPro.id),
        422,
        'unprocessable_entity',
      );
      await expectError(
        await changePlan(world.tenant, sub.id, world.plans.cardEur.id),
        422,
        'unprocessable_entity',
      );
      const invalid = await world.tenant.request('PATCH', `/api/v1/subscriptions/${sub.id}/plan`, {
        plan_id: 7,
      });
      await expectError(invalid, 422, 'validation_failed');

      const other = await createTenant(app.t, { name: 'Other Agency' });
      await expectError(await changePlan(other, sub.id, world.plans.cardPro.id), 404, 'not_found');
      expect((await other.request('GET', `/api/v1/subscriptions/${sub.id}`)).status).toBe(404);
      const otherPlan = await createPlan(app.t, other.id, { provider: 'processor', monthly_price: 9000 });
      await expectError(await changePlan(world.tenant, sub.id, otherPlan.id), 404, 'not_found');

      await app.t.admin('DELETE', `/admin/v1/users/${user.id}/payment-method`);
      await expectError(
        await changePlan(world.tenant, sub.id, world.plans.cardPro.id),
        422,
        'unprocessable_entity',
      );
      await addCard(app.t, user.id);
      await app.t.admin('PATCH', `/admin/v1/users/${user.id}`, { status: 'blocked' });
      await expectError(
        await changePlan(world.tenant, sub.id, world.plans.cardPro.id),
        422,
        'unprocessable_entity',
      );
      await app.t.admin('PATCH', `/admin/v1/users/${user.id}`, { status: 'active' });
      expect((await changePlan(world.tenant, sub.id, world.plans.cardPro.id)).status).toBe(200);
    });
  });

  describe('reading', () => {
    it('lists with filters, status normalization, sort order and pagination; other tenants see nothing', async () => {
      const tenant = await createTenant(app.t, { name: `Lister ${adapter}` });
      const basic = await createPlan(app.t, tenant.id, { name: 'B', provider: 'agency', monthly_price: 100 });
      const pro = await createPlan(app.t, tenant.id, { name: 'P', provider: 'agency', monthly_price: 200 });
      const ids: string[] = [];
      for (let i = 0; i < 3; i++) {
        const user = await createUser(tenant);
        clock.advance(1000);
        ids.push((await subscribe(tenant, user.id, i === 0 ? pro.id : basic.id)).body.data.id);
      }
      clock.set(NOW);
      const all = await tenant.request('GET', '/api/v1/subscriptions?limit=2');
      expect(all.body.data.map((s: any) => s.id)).toEqual([ids[2], ids[1]]);
      expect(all.body.pagination).toEqual({ page: 1, limit: 2, total: 3, pages: 2, has_more: true });
      const asc = await tenant.request('GET', '/api/v1/subscriptions?sort_order=asc&page=2&limit=2');
      expect(asc.body.data.map((s: any) => s.id)).toEqual([ids[2]]);
      const byPlan = await tenant.request('GET', `/api/v1/subscriptions?plan_id=${pro.id}`);
      expect(byPlan.body.data.map((s: any) => s.id)).toEqual([ids[0]]);
      const active = await tenant.request('GET', '/api/v1/subscriptions?status=active');
      expect(active.body.pagination.total).toBe(3);
      expect((await tenant.request('GET', '/api/v1/subscriptions?status=past_due')).body.data).toEqual([]);
      const bad = await tenant.request('GET', '/api/v1/subscriptions?status=incomplete&limit=0');
      expect(bad.status).toBe(422);
      expect(bad.body.error.details.map((d: any) => d.field).sort()).toEqual(['limit', 'status']);
      const foreign = await world.tenant.request('GET', `/api/v1/subscriptions?plan_id=${pro.id}`);
      expect(foreign.body.data).toEqual([]);
    });

    it('needs a key with the right scope', async () => {
      const none = await app.t.inject({ method: 'GET', url: '/api/v1/subscriptions' });
      expect([none.status, none.body.error.code]).toEqual([401, 'authentication_failed']);
      const reader = await createTenant(app.t, { scopes: ['subscriptions:read'] });
      expect((await reader.request('GET', '/api/v1/subscriptions')).status).toBe(200);
      const denied = await reader.request('POST', '/api/v1/subscriptions', {
        user_id: 'usr_x',
        plan_id: 'plan_x',
      });
      expect(denied.status).toBe(403);
      expect(denied.body.error.details).toEqual({ required_scopes: ['subscriptions:write'] });
      const denied2 = await reader.request('PATCH', '/api/v1/subscriptions/sub_x/plan', {
        plan_id: 'plan_x',
      });
      expect(denied2.status).toBe(403);
    });

    it('appears in the OpenAPI document under Subscriptions', async () => {
      const doc = (await app.t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).body;
      expect(doc.paths['/api/v1/subscriptions'].post.operationId).toBe('createSubscription');
      expect(doc.paths['/api/v1/subscriptions'].get.tags).toEqual(['Subscriptions']);
      expect(doc.paths['/api/v1/subscriptions/{id}'].get.operationId).toBe('getSubscription');
      expect(doc.paths['/api/v1/subscriptions/{id}/plan'].patch.operationId).toBe('changeSubscriptionPlan');
    });
  });

  describe('operator payment methods and user deletion', () => {
    it('sets, replaces and removes a card through the processor', async () => {
      const user = await createUser(world.tenant);
      const set = await app.t.admin('PUT', `/admin/v1/users/${user.id}/payment-method`, {
        token: 'pm_card_visa',
      });
      expect(set.status, set.raw).toBe(200);
      expect(set.body.data).toEqual({ user_id: user.id, brand: 'visa', last4: '4242' });
      const bogus = await app.t.admin('PUT', `/admin/v1/users/${user.id}/payment-method`, {
        token: 'pm_card_unknown',
      });
      expect([bogus.status, bogus.body.error.code]).toEqual([422, 'unprocessable_entity']);
      const removed = await app.t.admin('DELETE', `/admin/v1/users/${user.id}/payment-method`);
      expect(removed.status).toBe(200);
      expect((await subscribe(world.tenant, user.id, world.plans.cardBasic.id)).status).toBe(422);
      expect(
        (await app.t.admin('PUT', '/admin/v1/users/usr_missing/payment-method', { token: 'pm_card_visa' }))
          .status,
      ).toBe(404);
      const partner = await world.tenant.request('PUT', `/admin/v1/users/${user.id}/payment-method`, {
        token: 'pm_card_visa',
      });
      expect(partner.status).toBe(401);
    });

    it('deleting a user cancels its subscriptions, at the processor too (durable job)', async () => {
      const user = await userWithCard();
      const card = (await subscribe(world.tenant, user.id, world.plans.cardBasic.id)).body.data;
      const deleted = await world.tenant.request('DELETE', `/api/v1/users/${user.id}`);
      expect(deleted.status).toBe(200);
      const after = await world.tenant.request('GET', `/api/v1/subscriptions/${card.id}`);
      expect(after.body.data.status).toBe('canceled');
      await app.t.services.jobRunner.drain();
      const remote = await app.t.services.processor!.retrieveSubscription(card.provider_subscription_id);
      expect(remote.status).toBe('canceled');

      const agencyUser = await createUser(world.tenant);
      const agency = (await subscribe(world.tenant, agencyUser.id, world.plans.agencyPro.id)).body.data;
      const scheduled = (await changePlan(world.tenant, agency.id, world.plans.agencyBasic.id)).body.data;
      await world.tenant.request('DELETE', `/api/v1/users/${agencyUser.id}`);
      const list = await world.tenant.request('GET', `/api/v1/subscriptions?user_id=${agencyUser.id}`);
      expect(list.body.data.map((s: any) => [s.id, s.status]).sort()).toEqual(
        [
          [agency.id, 'canceled'],
          [scheduled.id, 'canceled'],
        ].sort(),
      );
    });
  });
});
