/**
 * One charge and one credit whatever fails between them, on both adapters: a processor that fails
 * or loses its answer is 503 with nothing credited, and the retry with the same key charges once
 * and credits once; a process that dies after the charge, before the credit, is finished by the
 * retry (the processor replays the charge); without a retry, reconciliation adopts the charge the
 * processor made, or abandons a top-up it never saw. Concurrent duplicates charge once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PaymentProcessor, ProcessorUnavailableError } from '../../src/billing/processor.js';
import { ManualClock } from '../../src/core/clock.js';
import { createTopUpCharges } from '../../src/top-ups/charges.js';
import { TOP_UP_RECONCILE_AFTER_MS } from '../../src/top-ups/service.js';
import {
  ADAPTERS,
  balance,
  createWorld,
  ledgerOf,
  startTopUpApp,
  subscribedUser,
  type TopUpApp,
  topUp,
  type World,
} from './helpers.js';

/** error: refused before acting; lost: charged, answer lost; unreached: never charged; crash: charged, then the process dies. */
type Mode = 'error' | 'lost' | 'unreached' | 'crash';

/** Fails the next charge as asked (the simulated adapter's faults, and the crash on both). */
function faultyProcessor(faults: Mode[]) {
  return (inner: PaymentProcessor): PaymentProcessor =>
    new Proxy(inner, {
      get(target, prop, receiver) {
        const value = Reflect.get(target, prop, receiver);
        if (prop !== 'chargeCustomer' || typeof value !== 'function') return value;
        return async (...args: unknown[]) => {
          const mode = faults.shift();
          if (!mode) return value.apply(target, args);
          if (mode === 'lost' || mode === 'crash') await value.apply(target, args);
          // An unexpected error is what a process dying under the request looks like to the partner (no answer stored).
          if (mode === 'crash') throw new Error('the process died between the charge and the credit');
          throw new ProcessorUnavailableError(
            mode === 'error' ? 'processor answered 500' : 'processor timed out',
          );
        };
      },
    });
}

describe.each(ADAPTERS)('top-up consistency with the %s processor', (adapter) => {
  let app: TopUpApp;
  let world: World;
  const clock = new ManualClock('2026-05-12T09:00:00.000Z');
  const faults: Mode[] = [];

  beforeAll(async () => {
    app = await startTopUpApp(adapter, { clock, wrap: faultyProcessor(faults) });
    world = await createWorld(app.t);
  });
  afterAll(() => app?.close());

  function fail(mode: Mode) {
    if (!app.stripe || mode === 'crash') {
      faults.push(mode);
      return;
    }
    app.stripe.fault({
      method: 'POST',
      path: /^\/v1\/payment_intents$/,
      mode: mode === 'error' ? 'error' : mode === 'lost' ? 'drop-after' : 'drop-before',
      // The SDK's own resend of a request whose connection was cut must lose its answer too.
      times: mode === 'error' ? 1 : 2,
    });
  }

  const listed = async (userId: string) =>
    (await world.tenant.request('GET', `/api/v1/users/${userId}/top-ups`)).body.data;

  it.each([
    ['fails (500)', 'error', 503],
    ['charges and loses its answer', 'lost', 503],
    ['is never reached', 'unreached', 503],
    ['charges, then the process dies before the credit', 'crash', 500],
  ] as const)(
    'a processor that %s: nothing credited; the retry with the same key charges and credits once',
    async (_name, mode, status) => {
      const user = await subscribedUser(app.t, world, world.cardPlan.id);
      const before = app.charges();
      const key = `fault-${mode}-${user.id}`;
      fail(mode);
      const failed = await topUp(world.tenant, user.id, { minutes: 30 }, key);
      expect(failed.status, failed.raw).toBe(status);
      if (status === 503) {
        expect(failed.body.error.code).toBe('service_unavailable');
        expect(failed.headers['retry-after']).toBe('1');
      }
      expect(await balance(app.t, user.id)).toBe(100);
      expect(await listed(user.id)).toEqual([]);
      expect(app.charges()).toBe(before + (mode === 'lost' || mode === 'crash' ? 1 : 0));

      const retried = await topUp(world.tenant, user.id, { minutes: 30 }, key);
      expect(retried.status, retried.raw).toBe(201);
      expect(retried.body.data).toMatchObject({ status: 'succeeded', minutes: 30, amount: 300 });
      expect(app.charges()).toBe(before + 1);
      expect(await balance(app.t, user.id)).toBe(130);
      const again = await topUp(world.tenant, user.id, { minutes: 30 }, key);
      expect(again.headers['idempotent-replayed']).toBe('true');
      expect(again.body).toEqual(retried.body);
      expect(app.charges()).toBe(before + 1);
      const ledger = await ledgerOf(app.t, user.id);
      expect([ledger.sum, ledger.topUps.length]).toEqual([130, 1]);
    },
  );

  it('a charge whose answer was lost and never retried is adopted by reconciliation, and the retry answers it', async () => {
    const user = await subscribedUser(app.t, world, world.cardPlan.id);
    const before = app.charges();
    const key = `reconcile-${user.id}`;
    fail('lost');
    expect((await topUp(world.tenant, user.id, { minutes: 40 }, key)).status).toBe(503);
    const [pending] = await app.t.services.database.db
      .selectFrom('top_ups')
      .select(['id', 'status'])
      .where('user_id', '=', user.id)
      .execute();
    expect(pending.status).toBe('pending');

    await app.topUps.reconcile(world.tenant.id, pending.id);
    expect(await balance(app.t, user.id)).toBe(140);
    const [adopted] = await listed(user.id);
    expect(adopted).toMatchObject({
      id: pending.id,
      status: 'succeeded',
      processor_charge_id: expect.any(String),
    });
    await app.topUps.reconcile(world.tenant.id, pending.id);
    expect(await balance(app.t, user.id)).toBe(140);

    const retried = await topUp(world.tenant, user.id, { minutes: 40 }, key);
    expect(retried.status, retried.raw).toBe(201);
    expect(retried.body.data).toEqual(adopted);
    expect(app.charges()).toBe(before + 1);
    expect(await balance(app.t, user.id)).toBe(140);
  });

  it('a top-up the processor never saw is abandoned by reconciliation: no charge, no credit, not listed', async () => {
    const user = await subscribedUser(app.t, world, world.cardPlan.id);
    const before = app.charges();
    fail('unreached');
    expect((await topUp(world.tenant, user.id, { minutes: 40 }, `abandon-${user.id}`)).status).toBe(503);
    const jobs = await app.t.services.database.db
      .selectFrom('jobs')
      .select(['payload', 'run_at'])
      .where('queue', '=', 'top_ups.reconcile')
      .execute();
    const job = jobs.find((j: any) => j.payload.top_up_id);
    expect(job?.run_at.getTime()).toBeGreaterThanOrEqual(
      clock.now().getTime() + TOP_UP_RECONCILE_AFTER_MS - 1000,
    );
    const [row] = await app.t.services.database.db
      .selectFrom('top_ups')
      .select('id')
      .where('user_id', '=', user.id)
      .execute();
    clock.advance(TOP_UP_RECONCILE_AFTER_MS);
    // The first look may come while a retried request is still charging: it looks again later.
    await expect(app.topUps.reconcile(world.tenant.id, row.id)).rejects.toThrow(/no charge found yet/);
    const statusOf = async () =>
      (
        await app.t.services.database.db
          .selectFrom('top_ups')
          .select('status')
          .where('id', '=', row.id)
          .execute()
      )[0].status;
    expect(await statusOf()).toBe('pending');
    clock.advance(30 * 60 * 1000);
    await app.topUps.reconcile(world.tenant.id, row.id);
    expect(await statusOf()).toBe('abandoned');
    expect(await listed(user.id)).toEqual([]);
    expect(await balance(app.t, user.id)).toBe(100);
    expect(app.charges()).toBe(before);
    // The partner's later retry with the key tops up once.
    const retried = await topUp(world.tenant, user.id, { minutes: 40 }, `abandon-${user.id}`);
    expect(retried.status, retried.raw).toBe(201);
    expect(app.charges()).toBe(before + 1);
    expect(await balance(app.t, user.id)).toBe(140);
  });

  it('a charge that lands after reconciliation gave the top-up up is still credited, once', async () => {
    const user = await subscribedUser(app.t, world, world.cardPlan.id);
    fail('unreached');
    expect((await topUp(world.tenant, user.id, { minutes: 25 }, `late-${user.id}`)).status).toBe(503);
    const db = app.t.services.database.db;
    const [row] = await db.selectFrom('top_ups').selectAll().where('user_id', '=', user.id).execute();
    clock.advance(31 * 60 * 1000);
    await app.topUps.reconcile(world.tenant.id, row.id);
    const charges = createTopUpCharges({
      db,
      clock,
      processor: app.t.services.processor,
      accounts: app.t.services.processorAccounts,
    });
    const charge = {
      id: 'pi_landed_late',
      status: 'succeeded' as const,
      amount: row.amount,
      currency: row.currency,
    };
    for (let i = 0; i < 2; i++) {
      const settled = await db.transaction().execute((tx) => charges.settle(tx, row, charge, clock.now()));
      expect(settled).toMatchObject({ status: 'succeeded', processor_charge_id: 'pi_landed_late' });
    }
    expect(await balance(app.t, user.id)).toBe(125);
  });

  it('10 concurrent identical requests with one key: one charge, one credit, the same answer', async () => {
    const user = await subscribedUser(app.t, world, world.cardPlan.id);
    const before = app.charges();
    const responses = await Promise.all(
      Array.from({ length: 10 }, () =>
        topUp(world.tenant, user.id, { minutes: 15 }, `concurrent-${user.id}`),
      ),
    );
    expect(responses.map((r) => r.status)).toEqual(Array(10).fill(201));
    for (const response of responses) expect(response.body).toEqual(responses[0].body);
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === 'true')).toHaveLength(9);
    expect(app.charges()).toBe(before + 1);
    expect(await balance(app.t, user.id)).toBe(115);
  });
});
