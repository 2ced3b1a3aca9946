/**
 * The local record and the processor never disagree: concurrent duplicates with one
 * Idempotency-Key change the plan once; a processor failure or timeout mid-upgrade answers 503 and
 * changes nothing locally, and the retry with the same key completes it exactly once; without a
 * retry, reconciliation adopts what the processor did. Both adapters; the processor's own count of
 * executed changes is read in the simulated adapter and in the Stripe-protocol server.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PaymentProcessor, ProcessorUnavailableError } from '../../src/billing/processor.js';
import { ManualClock } from '../../src/core/clock.js';
import { RECONCILE_AFTER_MS } from '../../src/subscriptions/service.js';
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

type Operation = 'changePrice' | 'createSubscription';
/** error: refused before acting; lost: acted, answer lost (timeout, cut connection); unreached: never acted on. */
type Mode = 'error' | 'lost' | 'unreached';

/** Simulated adapter: a wrapper failing the next call of an operation. */
function faultyProcessor(faults: { operation: Operation; mode: Mode }[]) {
  return (inner: PaymentProcessor): PaymentProcessor =>
    new Proxy(inner, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          const index = faults.findIndex((f) => f.operation === prop);
          if (index < 0) return value.apply(target, args);
          const [fault] = faults.splice(index, 1);
          if (fault.mode === 'lost') await value.apply(target, args);
          throw new ProcessorUnavailableError(
            fault.mode === 'error' ? 'processor answered 500' : 'processor timed out',
          );
        };
      },
    });
}

describe.each(ADAPTERS)('consistency with the %s processor', (adapter) => {
  let app: BillingApp;
  let world: World;
  const clock = new ManualClock('2026-05-12T09:00:00.000Z');
  const simulatedFaults: { operation: Operation; mode: Mode }[] = [];

  beforeAll(async () => {
    app = await startBillingApp(adapter, {
      clock,
      wrap: faultyProcessor(simulatedFaults),
      // A cut connection must reach the service as a lost answer, not be retried away by the SDK.
      // (No short timeout: under load a healthy answer can take seconds, and a timeout would turn
      // it into a 503; the faults cut the connection instead of holding it.)
      stripeNetworkRetries: 0,
    });
    world = await createWorld(app.t);
  });
  afterAll(() => app.close());

  function fail(operation: Operation, mode: Mode) {
    if (!app.stripe) {
      simulatedFaults.push({ operation, mode });
      return;
    }
    app.stripe.fault({
      method: 'POST',
      path: operation === 'changePrice' ? /^\/v1\/subscriptions\/[^/]+$/ : /^\/v1\/subscriptions$/,
      mode: mode === 'error' ? 'error' : mode === 'lost' ? 'drop-after' : 'drop-before',
      // The SDK's own resend of a request whose connection was cut must lose its answer too.
      times: mode === 'error' ? 1 : 2,
    });
  }

  async function subscribedUser(planId = world.plans.cardBasic.id) {
    const user = await createUser(world.tenant);
    await addCard(app.t, user.id);
    const sub = (await subscribe(world.tenant, user.id, planId)).body.data;
    return { user, sub };
  }

  const get = async (id: string) =>
    (await world.tenant.request('GET', `/api/v1/subscriptions/${id}`)).body.data;

  it('20 concurrent identical PATCHes with one key: one plan change, one processor update, the same answer', async () => {
    const { sub } = await subscribedUser();
    const before = app.planChanges();
    const responses = await Promise.all(
      Array.from({ length: 20 }, () =>
        changePlan(world.tenant, sub.id, world.plans.cardPro.id, `concurrent-${sub.id}`),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(200));
    for (const response of responses) expect(response.body.data).toEqual(responses[0].body.data);
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
    expect(responses[0].body.data.plan_id).toBe(world.plans.cardPro.id);
    expect(app.planChanges()).toBe(before + 1);
    const operations = await app.t.services.database.db
      .selectFrom('subscription_operations')
      .select(['status'])
      .where('subscription_id', '=', sub.id)
      .where('kind', '=', 'upgrade')
      .execute();
    expect(operations).toEqual([{ status: 'applied' }]);
  });

  it.each([
    ['fails (500)', 'error'],
    ['times out after acting', 'lost'],
    ['times out before acting', 'unreached'],
  ] as const)(
    'a processor that %s mid-upgrade: 503, no local change; the retry with the same key upgrades once',
    async (_name, mode) => {
      const { user, sub } = await subscribedUser();
      const credits = await balance(app.t, user.id);
      const before = app.planChanges();
      const key = `upgrade-${mode}-${sub.id}`;
      fail('changePrice', mode);
      const failed = await changePlan(world.tenant, sub.id, world.plans.cardPro.id, key);
      expect(failed.status, failed.raw).toBe(503);
      expect(failed.body.error.code).toBe('service_unavailable');
      expect(await get(sub.id)).toEqual(sub);
      expect(await balance(app.t, user.id)).toBe(credits);
      expect(app.planChanges()).toBe(before + (mode === 'lost' ? 1 : 0));

      const retried = await changePlan(world.tenant, sub.id, world.plans.cardPro.id, key);
      expect(retried.status, retried.raw).toBe(200);
      expect(retried.body.data).toMatchObject({
        id: sub.id,
        plan_id: world.plans.cardPro.id,
        status: 'active',
      });
      expect(app.planChanges()).toBe(before + 1);
      const again = await changePlan(world.tenant, sub.id, world.plans.cardPro.id, key);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(retried.body);
      expect(app.planChanges()).toBe(before + 1);
      const remote = await app.t.services.processor!.retrieveSubscription(sub.provider_subscription_id);
      const price = await app.t.services.database.db
        .selectFrom('billing_prices')
        .select('plan_id')
        .where('price_id', '=', remote.priceId)
        .executeTakeFirst();
      expect(price?.plan_id).toBe(world.plans.cardPro.id);
    },
  );

  it('a creation whose answer was lost and never retried is adopted by reconciliation', async () => {
    const user = await createUser(world.tenant);
    await addCard(app.t, user.id);
    fail('createSubscription', 'lost');
    const failed = await subscribe(world.tenant, user.id, world.plans.cardBasic.id, `lost-create-${user.id}`);
    expect(failed.status, failed.raw).toBe(503);
    expect((await world.tenant.request('GET', `/api/v1/subscriptions?user_id=${user.id}`)).body.data).toEqual(
      [],
    );
    const busy = await subscribe(world.tenant, user.id, world.plans.cardBasic.id, `other-${user.id}`);
    expect([busy.status, busy.body.error.code]).toEqual([409, 'conflict']);

    clock.advance(RECONCILE_AFTER_MS);
    await app.t.services.jobRunner.drain();
    const listed = (await world.tenant.request('GET', `/api/v1/subscriptions?user_id=${user.id}`)).body.data;
    expect(listed).toHaveLength(1);
    expect(listed[0]).toMatchObject({ plan_id: world.plans.cardBasic.id, status: 'active' });
    expect(await balance(app.t, user.id)).toBe(100);
    // The partner's retry, even after reconciliation, answers the adopted subscription.
    const retried = await subscribe(
      world.tenant,
      user.id,
      world.plans.cardBasic.id,
      `lost-create-${user.id}`,
    );
    expect(retried.status).toBe(201);
    expect(retried.body.data.id).toBe(listed[0].id);
    clock.set('2026-05-12T09:00:00.000Z');
  });

  it('an upgrade that never reached the processor and was never retried is abandoned; a later retry applies it once', async () => {
    const { sub } = await subscribedUser();
    const before = app.planChanges();
    const key = `abandoned-${sub.id}`;
    fail('changePrice', 'unreached');
    expect((await changePlan(world.tenant, sub.id, world.plans.cardPro.id, key)).status).toBe(503);
    clock.advance(RECONCILE_AFTER_MS);
    await app.t.services.jobRunner.drain();
    expect((await get(sub.id)).plan_id).toBe(world.plans.cardBasic.id);
    const retried = await changePlan(world.tenant, sub.id, world.plans.cardPro.id, key);
    expect(retried.status, retried.raw).toBe(200);
    expect(retried.body.data.plan_id).toBe(world.plans.cardPro.id);
    expect(app.planChanges()).toBe(before + 1);
    clock.set('2026-05-12T09:00:00.000Z');
  });
});
