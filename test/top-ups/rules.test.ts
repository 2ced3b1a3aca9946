/**
 * The edges of a top-up: authentication and scopes, other tenants' users, validation per field,
 * the business rules (no current subscription, blocked or deleted user, no card), the price in
 * each currency's minor unit, and the routes in the OpenAPI document. Nothing changes on a refusal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { topUpAmount } from '../../src/top-ups/pricing.js';
import { createPlan, createTenant, type TestTenant } from '../support/app.js';
import {
  balance,
  createUser,
  createWorld,
  startTopUpApp,
  subscribedUser,
  type TopUpApp,
  topUp,
  type World,
} from './helpers.js';

describe('top-up rules', () => {
  let app: TopUpApp;
  let world: World;
  let other: TestTenant;

  beforeAll(async () => {
    app = await startTopUpApp('simulated');
    world = await createWorld(app.t);
    other = await createTenant(app.t, { name: 'Other Agency' });
  });
  afterAll(() => app?.close());

  it('needs a key with subscriptions:write to top up and subscriptions:read to list', async () => {
    const user = await subscribedUser(app.t, world, world.agencyPlan.id);
    const url = `/api/v1/users/${user.id}/top-ups`;
    const anonymous = await app.t.inject({ method: 'POST', url, payload: { minutes: 5 } });
    expect([anonymous.status, anonymous.body.error.code]).toEqual([401, 'authentication_failed']);
    const readOnly = await createTenantKey(world.tenant.id, ['subscriptions:read']);
    const writeOnly = await createTenantKey(world.tenant.id, ['subscriptions:write']);
    const refused = await app.t.partner(readOnly, 'POST', url, { minutes: 5 });
    expect([refused.status, refused.body.error.code]).toEqual([403, 'permission_denied']);
    expect(refused.body.error.details).toEqual({ required_scopes: ['subscriptions:write'] });
    expect((await app.t.partner(writeOnly, 'GET', url)).status).toBe(403);
    expect((await app.t.partner(readOnly, 'GET', url)).status).toBe(200);
    expect((await app.t.partner(writeOnly, 'POST', url, { minutes: 5 })).status).toBe(201);
    expect(await balance(app.t, user.id)).toBe(55);
  });

  async function createTenantKey(tenantId: string, scopes: string[]) {
    const response = await app.t.admin('POST', `/admin/v1/tenants/${tenantId}/api-keys`, { scopes });
    return response.body.data.key as string;
  }

  it('another tenant’s user, an unknown user and a deleted user are 404 not_found', async () => {
    const user = await subscribedUser(app.t, world, world.agencyPlan.id);
    for (const [tenant, id] of [
      [other, user.id],
      [world.tenant, 'usr_doesnotexist0000000000'],
    ] as const) {
      const post = await topUp(tenant, id, { minutes: 5 }, `nf-${id}-${tenant.id}`);
      expect([post.status, post.body.error.code]).toEqual([404, 'not_found']);
      expect((await tenant.request('GET', `/api/v1/users/${id}/top-ups`)).status).toBe(404);
    }
    const mine = (await topUp(world.tenant, user.id, { minutes: 5 })).body.data;
    expect((await other.request('GET', `/api/v1/users/${user.id}/top-ups/${mine.id}`)).status).toBe(404);
    expect((await world.tenant.request('GET', `/api/v1/users/${user.id}/top-ups/top_unknown`)).status).toBe(
      404,
    );
    expect((await world.tenant.request('DELETE', `/api/v1/users/${user.id}`)).status).toBe(200);
    expect((await topUp(world.tenant, user.id, { minutes: 5 })).status).toBe(404);
    const row = await app.t.services.database.db
      .selectFrom('users')
      .select('credit_balance_minutes')
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(row.credit_balance_minutes).toBe(55);
  });

  it.each([
    [{}, 'minutes'],
    [{ minutes: 0 }, 'minutes'],
    [{ minutes: -5 }, 'minutes'],
    [{ minutes: 100_001 }, 'minutes'],
    [{ minutes: 1.5 }, 'minutes'],
    [{ minutes: '10' }, 'minutes'],
    [{ minutes: null }, 'minutes'],
    [{ minutes: 10, currency: 'usd' }, 'currency'],
  ])('%j is 422 validation_failed naming %s, and changes nothing', async (body, field) => {
    const user = await subscribedUser(app.t, world, world.agencyPlan.id);
    const response = await topUp(world.tenant, user.id, body, `invalid-${user.id}`);
    expect([response.status, response.body.error.code]).toEqual([422, 'validation_failed']);
    expect(response.body.error.details).toEqual([expect.objectContaining({ field })]);
    expect(await balance(app.t, user.id)).toBe(50);
    // Not stored for the key: the corrected request goes through.
    expect((await topUp(world.tenant, user.id, { minutes: 100_000 }, `invalid-${user.id}`)).status).toBe(201);
    expect(await balance(app.t, user.id)).toBe(100_050);
  });

  it('a malformed body or Idempotency-Key is 400; a non-JSON body is 415; never a 500', async () => {
    const user = await subscribedUser(app.t, world, world.agencyPlan.id);
    const url = `/api/v1/users/${user.id}/top-ups`;
    const headers = { authorization: `Bearer ${world.tenant.key}`, 'content-type': 'application/json' };
    expect((await app.t.inject({ method: 'POST', url, headers, payload: '{"minutes":' })).status).toBe(400);
    expect((await app.t.inject({ method: 'POST', url, headers, payload: '[1]' })).status).toBe(400);
    const badKey = await topUp(world.tenant, user.id, { minutes: 1 }, 'é'.repeat(3));
    expect(badKey.status).toBe(400);
    const text = await app.t.inject({
      method: 'POST',
      url,
      headers: { ...headers, 'content-type': 'text/plain' },
      payload: 'minutes=1',
    });
    expect(text.status).toBe(415);
    const list = await world.tenant.request('GET', `${url}?page=0&limit=1000`);
    expect(list.status).toBe(422);
    expect(list.body.error.details.map((d: any) => d.field).sort()).toEqual(['limit', 'page']);
    expect(await balance(app.t, user.id)).toBe(50);
  });

  it('a user without a current subscription, a blocked user, a processor user without a card: 422, nothing changed', async () => {
    const bare = await createUser(world.tenant);
    const none = await topUp(world.tenant, bare.id, { minutes: 5 }, `bare-${bare.id}`);
    expect([none.status, none.body.error.code]).toEqual([422, 'unprocessable_entity']);
    expect(none.body.error.message).toMatch(/subscription/);
    // Stored for the key like any business-rule answer.
    expect(
      (await topUp(world.tenant, bare.id, { minutes: 5 }, `bare-${bare.id}`)).headers['idempotent-replayed'],
    ).toBe('true');

    const blocked = await subscribedUser(app.t, world, world.agencyPlan.id);
    expect((await app.t.admin('PATCH', `/admin/v1/users/${blocked.id}`, { status: 'blocked' })).status).toBe(
      200,
    );
    const refused = await topUp(world.tenant, blocked.id, { minutes: 5 });
    expect([refused.status, refused.body.error.message]).toEqual([422, 'The user is blocked.']);
    expect(await balance(app.t, blocked.id)).toBe(50);

    const cardless = await subscribedUser(app.t, world, world.cardPlan.id);
    expect((await app.t.admin('DELETE', `/admin/v1/users/${cardless.id}/payment-method`)).status).toBe(200);
    const before = app.charges();
    const noCard = await topUp(world.tenant, cardless.id, { minutes: 5 });
    expect([noCard.status, noCard.body.error.code]).toEqual([422, 'unprocessable_entity']);
    expect(noCard.body.error.message).toMatch(/payment method/);
    expect(app.charges()).toBe(before);
    expect(await balance(app.t, cardless.id)).toBe(100);
    for (const user of [bare, blocked, cardless])
      expect((await world.tenant.request('GET', `/api/v1/users/${user.id}/top-ups`)).body.data).toEqual([]);
  });

  it('refuses minutes that would cost nothing at a paying rate, and sells more of them', async () => {
    const cheap = await createPlan(app.t, world.tenant.id, {
      name: 'Cheap',
      provider: 'agency',
      topup_rate: 0.004,
    });
    const user = await subscribedUser(app.t, world, cheap.id);
    const refused = await topUp(world.tenant, user.id, { minutes: 1 });
    expect([refused.status, refused.body.error.code]).toEqual([422, 'validation_failed']);
    expect(refused.body.error.details).toEqual([
      { field: 'minutes', issue: expect.stringContaining('smallest amount') },
    ]);
    expect(await balance(app.t, user.id)).toBe(100);
    const sold = await topUp(world.tenant, user.id, { minutes: 1000 });
    expect([sold.status, sold.body.data.amount]).toEqual([201, 400]);
  });

  it('prices minutes × topup_rate in the currency’s minor unit, rounded half up', () => {
    expect(topUpAmount(3, 0.1, 'usd')).toBe(30);
    expect(topUpAmount(1, 0.005, 'usd')).toBe(1);
    expect(topUpAmount(1, 0.004999, 'usd')).toBe(0);
    expect(topUpAmount(10, 1.5, 'jpy')).toBe(15);
    expect(topUpAmount(1, 0.1234, 'kwd')).toBe(120); // Stripe takes three-decimal amounts in tens
    expect(topUpAmount(7, 0.123456, 'eur')).toBe(86);
    expect(topUpAmount(100_000, 1_000_000, 'usd')).toBe(10_000_000_000_000);
    expect(topUpAmount(5, 0, 'usd')).toBe(0);
    // Stripe's minor units, not CLDR's: IDR and HUF are counted in hundredths, BHD in thousandths.
    expect(topUpAmount(10, 1000, 'idr')).toBe(1_000_000);
    expect(topUpAmount(10, 100, 'huf')).toBe(100_000);
    expect(topUpAmount(2, 0.5, 'bhd')).toBe(1000);
  });

  it('the routes are in the OpenAPI document with their scopes, errors and components', async () => {
    const doc = (await app.t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).body;
    const collection = doc.paths['/api/v1/users/{id}/top-ups'];
    const one = doc.paths['/api/v1/users/{id}/top-ups/{top_up_id}'];
    expect(collection.post.operationId).toBe('createTopUp');
    expect(collection.post.security).toEqual([{ apiKey: ['subscriptions:write'] }]);
    expect(collection.get.security).toEqual([{ apiKey: ['subscriptions:read'] }]);
    expect(one.get.operationId).toBe('getTopUp');
    for (const op of [collection.post, collection.get, one.get]) {
      for (const status of ['401', '403', '404', '422', '429', '500', '503'])
        expect(op.responses[status]?.content['application/json'].schema.allOf[0].$ref).toMatch(
          /ErrorEnvelope/,
        );
      expect(op.tags).toEqual(['Top-ups']);
    }
    expect(Object.keys(collection.post.responses['201'].headers)).toEqual(
      expect.arrayContaining(['Location', 'Idempotent-Replayed']),
    );
    expect(doc.components.schemas.TopUp.required).toEqual(
      expect.arrayContaining(['id', 'amount', 'currency', 'billing', 'status', 'processor_charge_id']),
    );
  });
});
