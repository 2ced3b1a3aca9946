/**
 * Stripe Connect on the wire: the stripe adapter (the official SDK) against the local Stripe
 * server, which scopes objects by the `Stripe-Account` header as Stripe does. Two agencies on two
 * connected accounts and one on the platform's own: each agency's customer, card, price,
 * subscription and charge are made in its account only, every request about them carries that
 * account, the application fee goes with the connected agency's subscription and charge, and the
 * jobs (renewal sync, cancellation, top-up reconciliation) find the objects in the same account.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProcessorRequestError } from '../../src/billing/processor.js';
import { ManualClock } from '../../src/core/clock.js';
import { type BillingApp, startBillingApp } from '../subscriptions/helpers.js';
import { createUser } from '../support/app.js';
import { type Agency, agencyWithClient } from './helpers.js';

const clock = new ManualClock('2026-06-02T10:00:00.000Z');
let app: BillingApp;
let north: Agency;
let south: Agency;
let solo: Agency;

beforeAll(async () => {
  app = await startBillingApp('stripe', { clock, stripeNetworkRetries: 0 });
  north = await agencyWithClient(app.t, { name: 'North', account: 'acct_North001', fee: 2.5 });
  south = await agencyWithClient(app.t, { name: 'South', account: 'acct_South002', fee: null });
  // A fee without a connected account is kept but never sent: Stripe would refuse it.
  solo = await agencyWithClient(app.t, { name: 'Solo', account: null, fee: 10 });
});
afterAll(() => app?.close());

const idsOf = (agency: Agency) => Object.values(agency.ids);
const server = () => app.stripe!;

describe('objects live in the agency’s account', () => {
  it('makes each agency’s customer, card, price, subscription and charge in its account only', () => {
    for (const agency of [north, south, solo]) {
      const others = [north, south, solo].filter((other) => other !== agency);
      const mine = server()
        .objects(agency.account)
        .map((doc) => doc.id);
      expect(mine).toEqual(expect.arrayContaining(idsOf(agency)));
      for (const other of others) {
        const theirs = server()
          .objects(other.account)
          .map((doc) => doc.id);
        for (const id of idsOf(agency)) expect(theirs).not.toContain(id);
      }
    }
    // The platform's own account holds only the agency without a connected account.
    const platform = server().objects(null);
    expect(platform.filter((doc) => doc.object === 'customer').map((doc) => doc.id)).toEqual([
      solo.ids.customer,
    ]);
  });

  it('sends every request about an agency’s objects with its account', () => {
    const accountOf = new Map<string, string | undefined>();
    for (const agency of [north, south, solo]) {
      for (const id of idsOf(agency)) accountOf.set(id, agency.account ?? undefined);
      accountOf.set(agency.tenant.id, agency.account ?? undefined);
    }
    let checked = 0;
    for (const request of server().requests) {
      const about =
        request.params.metadata?.tenant_id ??
        request.params.customer ??
        [...accountOf.keys()].find((id) => request.path.includes(id));
      if (!about || !accountOf.has(about)) continue;
      expect(request.account, `${request.method} ${request.path}`).toBe(accountOf.get(about));
      checked++;
    }
    // Customer, attach, default card, price, subscription, charge: for each of the three agencies.
    expect(checked).toBeGreaterThanOrEqual(18);
    expect(server().requests.filter((r) => r.account === 'acct_North001').length).toBeGreaterThanOrEqual(6);
  });

  it('answers resource_missing for another account’s object, through the adapter', async () => {
    const processor = app.t.services.processor;
    const own = await processor.forAccount('acct_North001').retrieveSubscription(north.ids.subscription);
    expect(own.id).toBe(north.ids.subscription);
    for (const account of ['acct_South002', null]) {
      const error = await processor
        .forAccount(account)
        .retrieveSubscription(north.ids.subscription)
        .catch((e) => e);
      expect(error).toBeInstanceOf(ProcessorRequestError);
      expect(error.code).toBe('resource_missing');
      expect(error.status).toBe(404);
    }
  });
});

describe('application fees', () => {
  const created = (path: string, customer: string) =>
    server().requests.filter((r) => r.method === 'POST' && r.path === path && r.params.customer === customer);

  it('puts the percent on the connected agency’s subscription and the amount on its charge', () => {
    const [subscription] = created('/v1/subscriptions', north.ids.customer);
    expect(subscription.params.application_fee_percent).toBe('2.5');
    const [charge] = created('/v1/payment_intents', north.ids.customer);
    // 2.5 % of 1000 cents.
    expect(charge.params.application_fee_amount).toBe('25');
  });

  it('sends no fee without one, nor without a connected account', () => {
    for (const agency of [south, solo]) {
      for (const path of ['/v1/subscriptions', '/v1/payment_intents']) {
        const [request] = created(path, agency.ids.customer);
        expect(request.params).not.toHaveProperty('application_fee_percent');
        expect(request.params).not.toHaveProperty('application_fee_amount');
      }
    }
  });

  it('is refused on the platform’s own account, as Stripe refuses it', async () => {
    const error = await app.t.services.processor
      .createSubscription(
        {
          customerId: solo.ids.customer,
          priceId: solo.ids.price,
          trialPeriodDays: 0,
          metadata: {},
          applicationFeePercent: 5,
        },
        'vp_test_fee_on_platform',
      )
      .catch((e) => e);
    expect(error).toBeInstanceOf(ProcessorRequestError);
    expect(error.status).toBe(400);
    expect(error.message).toContain('application_fee_percent');
  });

  it('applies a changed fee to charges made after the change', async () => {
    const changed = await app.t.admin('PATCH', `/admin/v1/tenants/${north.tenant.id}`, {
      application_fee_percent: 10,
    });
    expect(changed.status).toBe(200);
    const topUp = await north.tenant.request('POST', `/api/v1/users/${north.userId}/top-ups`, {
      minutes: 50,
    });
    expect(topUp.status).toBe(201);
    const charges = created('/v1/payment_intents', north.ids.customer);
    expect(charges.at(-1)?.params.application_fee_amount).toBe('50');
    expect(charges.at(-1)?.account).toBe('acct_North001');
  });
});

describe('jobs act in the agency’s account', () => {
  it('syncs a renewal and cancels a deleted client’s subscription in the connected account', async () => {
    const stored = await app.t.services.database.db
      .selectFrom('subscriptions')
      .select('id')
      .where('provider_subscription_id', '=', south.ids.subscription)
      .executeTakeFirstOrThrow();
    clock.advance(32 * 24 * 3600 * 1000);
    await app.t.services.subscriptions.advance(south.tenant.id, stored.id);
    const renewed = await south.tenant.request('GET', `/api/v1/subscriptions/${stored.id}`);
    expect(new Date(renewed.body.data.current_period_end) > clock.now()).toBe(true);

    expect((await south.tenant.request('DELETE', `/api/v1/users/${south.userId}`)).status).toBe(200);
    await app.t.services.subscriptions.cancelAtProcessor(south.tenant.id, stored.id, south.ids.subscription);
    const remote = await server().inAccount('acct_South002', () =>
      server().engine.retrieveSubscription(south.ids.subscription),
    );
    expect(remote.status).toBe('canceled');
  });

  it('reconciles a top-up whose answer was lost from the connected account’s charges', async () => {
    const user = await createUser(north.tenant);
    const card = await app.t.admin('PUT', `/admin/v1/users/${user.id}/payment-method`, {
      token: 'pm_card_visa',
    });
    expect(card.status).toBe(200);
    const plans = await north.tenant.request('GET', '/api/v1/plans');
    const sub = await north.tenant.request('POST', '/api/v1/subscriptions', {
      user_id: user.id,
      plan_id: plans.body.data[0].id,
    });
    expect(sub.status).toBe(201);
    server().fault({ method: 'POST', path: /^\/v1\/payment_intents$/, mode: 'drop-after', times: 2 });
    const lost = await north.tenant.request('POST', `/api/v1/users/${user.id}/top-ups`, { minutes: 30 });
    expect(lost.status).toBe(503);
    const row = await app.t.services.database.db
      .selectFrom('top_ups')
      .selectAll()
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    clock.advance(6 * 60 * 1000);
    await app.t.services.topUps.reconcile(north.tenant.id, row.id);
    const settled = await app.t.services.database.db
      .selectFrom('top_ups')
      .select(['status', 'processor_charge_id'])
      .where('id', '=', row.id)
      .executeTakeFirstOrThrow();
    expect(settled.status).toBe('succeeded');
    expect(
      server()
        .objects('acct_North001')
        .map((doc) => doc.id),
    ).toContain(settled.processor_charge_id);
  });

  it('a retry after the fee changed is 503, not a refusal: reconciliation credits the charge Stripe made', async () => {
    const user = await createUser(north.tenant);
    expect(
      (await app.t.admin('PUT', `/admin/v1/users/${user.id}/payment-method`, { token: 'pm_card_visa' }))
        .status,
    ).toBe(200);
    const plans = await north.tenant.request('GET', '/api/v1/plans');
    const sub = await north.tenant.request('POST', '/api/v1/subscriptions', {
      user_id: user.id,
      plan_id: plans.body.data[0].id,
    });
    expect(sub.status).toBe(201);
    const key = { 'idempotency-key': `fee-change-${user.id}` };
    server().fault({ method: 'POST', path: /^\/v1\/payment_intents$/, mode: 'drop-after', times: 2 });
    const lost = await north.tenant.request('POST', `/api/v1/users/${user.id}/top-ups`, { minutes: 40 }, key);
    expect(lost.status).toBe(503);
    expect(
      (await app.t.admin('PATCH', `/admin/v1/tenants/${north.tenant.id}`, { application_fee_percent: 7 }))
        .status,
    ).toBe(200);
    // Stripe refuses the key with other parameters (idempotency_error): the outcome stays unknown.
    const retried = await north.tenant.request(
      'POST',
      `/api/v1/users/${user.id}/top-ups`,
      { minutes: 40 },
      key,
    );
    expect(retried.status, retried.raw).toBe(503);
    const row = await app.t.services.database.db
      .selectFrom('top_ups')
      .selectAll()
      .where('user_id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(row.status).toBe('pending');
    clock.advance(6 * 60 * 1000);
    await app.t.services.topUps.reconcile(north.tenant.id, row.id);
    const balance = await app.t.admin('GET', `/admin/v1/users/${user.id}/credits`);
    const included = plans.body.data[0].included_minutes as number;
    expect(balance.body.data.balance_minutes).toBe(included + 40);
  });
});
