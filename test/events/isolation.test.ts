/**
 * One slow or dead endpoint never delays another endpoint's deliveries (platform contract §3):
 * a receiver that never answers, with many events queued to it ahead of a healthy receiver's,
 * holds at most ENDPOINT_CONCURRENCY of the job runner's slots; the healthy receiver's events are
 * all delivered (succeeded in the log) while the hung requests are still open.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { ENDPOINT_CONCURRENCY } from '../../src/events/delivery.js';
import { createTenant, createUser, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { type Receiver, startReceiver } from './helpers.js';

const clock = new ManualClock(new Date());
let t: TestApp;
let a: TestTenant;

beforeAll(async () => {
  t = await startTestApp({
    clock,
    env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
    adapters: () => ({ resolveHost: async () => [{ address: '93.184.215.14', family: 4 }] }),
  });
  a = await createTenant(t, { name: 'Isolation' });
});
afterAll(() => t.close());

async function endpointFor(receiver: Receiver, events: string[]) {
  const created = await a.request('POST', '/api/v1/webhook-endpoints', { url: receiver.url, events });
  expect(created.status, created.raw).toBe(201);
  receiver.secret = created.body.data.secret;
  return created.body.data.id as string;
}

async function deliveries(endpointId: string) {
  const log = await a.request('GET', `/api/v1/webhook-endpoints/${endpointId}/deliveries?limit=100`);
  expect(log.status).toBe(200);
  return log.body.data as { status: string; attempts: number }[];
}

describe('a hanging endpoint beside a healthy one', () => {
  it('the per-endpoint cap is at most a third of the default window: two hung endpoints leave a third', () => {
    expect(3 * ENDPOINT_CONCURRENCY).toBeLessThanOrEqual(t.config.jobConcurrency);
  });

  it('the healthy endpoint gets all its events while the hung one holds only its own slots', {
    timeout: 60_000,
  }, async () => {
    // Hangs for 30 s: each request is read, and answered only then (or cut when the test ends).
    const hung = await startReceiver('/hung');
    let answered = 0;
    hung.answer = () =>
      new Promise<number>((resolve) =>
        setTimeout(() => {
          answered++;
          resolve(200);
        }, 30_000).unref(),
      );
    const healthy = await startReceiver('/healthy');
    const hungId = await endpointFor(hung, ['user.created']);
    try {
      const healthyId = await endpointFor(healthy, ['user.deleted']);

      // More events for the hung endpoint than its cap, queued first; then 10 for the healthy one.
      const hungEvents = ENDPOINT_CONCURRENCY + 10;
      const users = [];
      for (let i = 0; i < hungEvents; i++) users.push(await createUser(a));
      clock.advance(1000);
      for (const user of users.slice(0, 10)) {
        expect((await a.request('DELETE', `/api/v1/users/${user.id}`)).status).toBe(200);
      }

      t.services.jobRunner.start();
      await healthy.waitFor(10);
      await expect
        .poll(async () => (await deliveries(healthyId)).map((d) => d.status), { timeout: 30_000 })
        .toEqual(Array(10).fill('succeeded'));
      expect(healthy.received.every((r) => r.error === undefined)).toBe(true);

      // Meanwhile the hung endpoint has exactly its cap of requests open, none answered.
      await expect.poll(() => hung.received.length, { timeout: 10_000 }).toBe(ENDPOINT_CONCURRENCY);
      expect(answered).toBe(0);
      const stuck = await deliveries(hungId);
      expect(stuck).toHaveLength(hungEvents);
      expect(stuck.every((d) => d.status === 'pending' && d.attempts === 0)).toBe(true);
    } finally {
      // Cutting the hung requests fails those attempts: they are retried on the §3 schedule.
      await hung.close();
      await t.services.jobRunner.stop();
      await healthy.close();
    }
    const after = await deliveries(hungId);
    expect(after.filter((d) => d.attempts === 1).every((d) => d.status === 'pending')).toBe(true);
  });
});
