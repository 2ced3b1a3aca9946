/**
 * Subscription events: `subscription.created/updated/canceled` recorded in the transaction of the
 * change, with the subscription as GET /subscriptions/{id} then shows it — from requests (create,
 * upgrade, agency downgrade, user deletion) and from jobs (renewals, the end of a capped period,
 * reconciliation of a processor change whose answer was lost); nothing for a refused change.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type PaymentProcessor, ProcessorUnavailableError } from '../../src/billing/processor.js';
import { ManualClock } from '../../src/core/clock.js';
import { RECONCILE_AFTER_MS } from '../../src/subscriptions/service.js';
import {
  addCard,
  type BillingApp,
  changePlan,
  createUser,
  createWorld,
  startBillingApp,
  subscribe,
  type World,
} from '../subscriptions/helpers.js';
import { type Receiver, startReceiver } from './helpers.js';

interface StoredEvent {
  id: string;
  type: string;
  created_at: Date;
  object: Record<string, unknown>;
}

describe('subscription events', () => {
  const clock = new ManualClock('2026-03-10T09:00:00.000Z');
  /** The next processor call of this name acts, then its answer is lost (503 to the partner). */
  const lose = new Set<string>();
  let app: BillingApp;
  let world: World;
  let receiver: Receiver;

  beforeAll(async () => {
    app = await startBillingApp('simulated', {
      clock,
      env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
      wrap: (inner: PaymentProcessor) =>
        new Proxy(inner, {
          get(target, prop, receiverArg) {
            const value = Reflect.get(target, prop, receiverArg);
            if (typeof value !== 'function') return value;
            return async (...args: unknown[]) => {
              const result = await value.apply(target, args);
              if (lose.delete(String(prop))) throw new ProcessorUnavailableError('answer lost');
              return result;
            };
          },
        }),
    });
    world = await createWorld(app.t);
  });
  afterAll(async () => {
    await receiver?.close();
    await app.close();
  });

  /** The tenant's subscription events about one subscription, oldest first. */
  async function eventsOf(subscriptionId: string): Promise<StoredEvent[]> {
    const rows = await app.t.services.database.db
      .selectFrom('events')
      .select(['id', 'type', 'created_at', 'data'])
      .where('tenant_id', '=', world.tenant.id)
      .where('type', 'like', 'subscription.%')
      .orderBy('created_at')
      .execute();
    return rows
      .map((row) => ({ id: row.id, type: row.type, created_at: row.created_at, object: row.data.object }))
      .filter((event) => event.object.id === subscriptionId);
  }
  const shown = async (id: string) =>
    (await world.tenant.request('GET', `/api/v1/subscriptions/${id}`)).body.data;
  const at = async (iso: string) => {
    clock.set(iso);
    await app.t.services.jobRunner.drain();
  };

  it('records created, then updated on an upgrade, each with the subscription as GET shows it', async () => {
    clock.set('2026-03-10T09:00:00.000Z');
    const user = await createUser(world.tenant);
    const created = await subscribe(world.tenant, user.id, world.plans.agencyBasic.id);
    expect(created.status, created.raw).toBe(201);
    const id = created.body.data.id;
    const afterCreate = await eventsOf(id);
    expect(afterCreate.map((e) => e.type)).toEqual(['subscription.created']);
    expect(afterCreate[0].object).toEqual(await shown(id));
    expect(afterCreate[0].id).toMatch(/^evt_/);

    clock.set('2026-03-11T09:00:00.000Z');
    const upgraded = await changePlan(world.tenant, id, world.plans.agencyPro.id);
    expect(upgraded.status, upgraded.raw).toBe(200);
    const events = await eventsOf(id);
    expect(events.map((e) => e.type)).toEqual(['subscription.created', 'subscription.updated']);
    expect(events[1].object).toEqual(await shown(id));
    expect(events[1].object.plan_id).toBe(world.plans.agencyPro.id);
  });

  it('records nothing when the change is refused and rolls back', async () => {
    clock.set('2026-03-10T09:00:00.000Z');
    const user = await createUser(world.tenant);
    const id = (await subscribe(world.tenant, user.id, world.plans.agencyBasic.id)).body.data.id;
    const before = await eventsOf(id);
    // An inactive plan is refused; a processor plan without a card too (after the locks are taken).
    expect((await changePlan(world.tenant, id, world.plans.inactive.id)).status).toBe(404);
    expect((await changePlan(world.tenant, id, world.plans.cardPro.id)).status).toBe(422);
    expect(await eventsOf(id)).toEqual(before);
    expect(await shown(id)).toEqual(before[0].object);
  });

  it('a renewal and the end of a downgrade-capped period are recorded by the period job', async () => {
    clock.set('2026-03-10T09:00:00.000Z');
    const user = await createUser(world.tenant);
    const id = (await subscribe(world.tenant, user.id, world.plans.agencyPro.id)).body.data.id;
    const firstEnd = (await shown(id)).current_period_end;

    await at('2026-04-10T10:00:00.000Z'); // past the first period's end: renewed
    const renewed = (await eventsOf(id)).filter((e) => e.type === 'subscription.updated');
    expect(renewed).toHaveLength(1);
    expect(renewed[0].object).toEqual(await shown(id));
    expect(renewed[0].object.current_period_start).toBe(firstEnd);

    clock.set('2026-04-12T10:00:00.000Z');
    const downgraded = await changePlan(world.tenant, id, world.plans.agencyBasic.id);
    expect(downgraded.status, downgraded.raw).toBe(200);
    const next = downgraded.body.data;
    const capped = (await eventsOf(id)).at(-1)!;
    expect(capped.type).toBe('subscription.updated');
    expect(capped.object).toMatchObject({ cancel_at_period_end: true, status: 'active' });
    expect(capped.object).toEqual(await shown(id));
    const successor = await eventsOf(next.id);
    expect(successor.map((e) => e.type)).toEqual(['subscription.created']);
    expect(successor[0].object).toEqual(next);

    await at('2026-05-01T00:05:00.000Z'); // the capped period ended at 2026-04-30T23:59
    const ended = (await eventsOf(id)).at(-1)!;
    expect(ended.type).toBe('subscription.canceled');
    expect(ended.object).toEqual(await shown(id));
    expect(ended.object.status).toBe('canceled');
  });

  it('deleting the user cancels the subscription with the event in the same change', async () => {
    clock.set('2026-03-10T09:00:00.000Z');
    const user = await createUser(world.tenant);
    const id = (await subscribe(world.tenant, user.id, world.plans.agencyBasic.id)).body.data.id;
    expect((await world.tenant.request('DELETE', `/api/v1/users/${user.id}`)).status).toBe(200);
    const last = (await eventsOf(id)).at(-1)!;
    expect(last.type).toBe('subscription.canceled');
    expect(last.object).toEqual(await shown(id));
  });

  it('reconciliation of a lost processor answer records created, delivered to a receiver', async () => {
    receiver = await startReceiver();
    const endpoint = await world.tenant.request('POST', '/api/v1/webhook-endpoints', {
      url: receiver.url,
      events: ['subscription.created'],
    });
    expect(endpoint.status, endpoint.raw).toBe(201);
    receiver.secret = endpoint.body.data.secret;

    clock.set('2026-03-10T09:00:00.000Z');
    const user = await createUser(world.tenant);
    await addCard(app.t, user.id);
    lose.add('createSubscription');
    const lost = await subscribe(world.tenant, user.id, world.plans.cardBasic.id);
    expect(lost.status, lost.raw).toBe(503);
    const listed = async () =>
      (await world.tenant.request('GET', `/api/v1/subscriptions?user_id=${user.id}`)).body.data;
    expect(await listed()).toEqual([]);

    await at(new Date(clock.now().getTime() + RECONCILE_AFTER_MS + 1000).toISOString());
    const [sub] = await listed();
    expect(sub).toMatchObject({ provider: 'processor', plan_id: world.plans.cardBasic.id });
    const events = await eventsOf(sub.id);
    expect(events.map((e) => e.type)).toEqual(['subscription.created']);
    expect(events[0].object).toEqual(sub);

    const [delivered] = await receiver.waitFor(1);
    expect(delivered.error).toBeUndefined();
    expect(delivered.headers['webhook-id']).toBe(events[0].id);
    expect(delivered.verified).toMatchObject({ type: 'subscription.created', data: { object: sub } });
  });
});
