/**
 * Events are kept 30 days (platform contract §3): a recurring maintenance job deletes older
 * events with their deliveries, in bounded batches, and comes back after each run.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { purgeExpiredEvents } from '../../src/events/retention.js';
import { EVENT_PURGE_QUEUE, scheduleMaintenance } from '../../src/maintenance/jobs.js';
import { createTenant, createUser, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { type Receiver, startReceiver } from './helpers.js';

const DAY = 24 * 3_600_000;
const clock = new ManualClock(new Date('2026-03-01T12:00:00.000Z'));
let t: TestApp;
let a: TestTenant;
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestApp({
    clock,
    env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
    adapters: () => ({ resolveHost: async () => [{ address: '93.184.215.14', family: 4 }] }),
  });
  a = await createTenant(t, { name: 'Retention' });
  receiver = await startReceiver();
});
afterAll(async () => {
  await receiver.close();
  await t.close();
});

const db = () => t.services.database.db;

async function rowsOf(eventId: string) {
  const events = await db().selectFrom('events').select('id').where('id', '=', eventId).execute();
  const deliveries = await db()
    .selectFrom('event_deliveries')
    .select('status')
    .where('event_id', '=', eventId)
    .execute();
  return { events: events.length, deliveries: deliveries.map((d) => d.status) };
}

describe('event retention', () => {
  it('deletes events older than 30 days with their deliveries; newer ones stay; the job comes back', async () => {
    const created = await a.request('POST', '/api/v1/webhook-endpoints', {
      url: receiver.url,
      events: ['user.created'],
    });
    expect(created.status, created.raw).toBe(201);
    receiver.secret = created.body.data.secret;
    await createUser(a);
    await t.services.jobRunner.drain();
    const [first] = await receiver.waitFor(1);
    const oldId = String(first.headers['webhook-id']);
    expect(await rowsOf(oldId)).toEqual({ events: 1, deliveries: ['succeeded'] });

    clock.advance(29 * DAY);
    await createUser(a);
    await t.services.jobRunner.drain();
    const [, second] = await receiver.waitFor(2);
    const newId = String(second.headers['webhook-id']);

    // The first event is now 30 days and a minute old, the second a day and a minute.
    clock.advance(DAY + 60_000);
    await scheduleMaintenance(t.services);
    await t.services.jobRunner.drain();
    expect(await rowsOf(oldId)).toEqual({ events: 0, deliveries: [] });
    expect(await rowsOf(newId)).toEqual({ events: 1, deliveries: ['succeeded'] });
    const listed = await a.request('GET', '/api/v1/events');
    expect(listed.body.data.map((e: { id: string }) => e.id)).toEqual([newId]);

    const next = await db()
      .selectFrom('jobs')
      .select('run_at')
      .where('queue', '=', EVENT_PURGE_QUEUE)
      .where('status', '=', 'queued')
      .execute();
    expect(next.map((j) => j.run_at.getTime())).toEqual([clock.now().getTime() + 3_600_000]);

    // Once 30 days old, the second one goes too.
    clock.advance(29 * DAY);
    await t.services.jobRunner.drain();
    expect(await rowsOf(newId)).toEqual({ events: 0, deliveries: [] });
  });

  it('purges in bounded batches and says when more are left', async () => {
    const cutoff = new Date(clock.now().getTime() - 30 * DAY);
    const old = new Date(cutoff.getTime() - DAY);
    await sql`
      INSERT INTO events (id, tenant_id, type, created_at, data)
      SELECT 'evt_batch' || g, ${a.id}, 'user.created', ${old}, '{"object":{}}'::jsonb
      FROM generate_series(1, 5) g`.execute(db());
    expect(await purgeExpiredEvents(db(), { cutoff, batchSize: 2, maxBatches: 2 })).toEqual({
      deleted: 4,
      more: true,
    });
    expect(await purgeExpiredEvents(db(), { cutoff, batchSize: 2, maxBatches: 2 })).toEqual({
      deleted: 1,
      more: false,
    });
  });
});
