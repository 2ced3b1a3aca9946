/**
 * A wake (a job queued in this process) claims after a short delay (src/core/jobs/runner.ts
 * `wakeDelayMs`), so jobs queued close together share one claim and its statements; with 0 it
 * claims at once.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { createJobRunner, enqueueJob } from '../../src/core/jobs/runner.js';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

/** Queues five jobs one after another, waking the runner after each; when each job started. */
async function queueFive(wakeDelayMs: number, queue: string) {
  const db = t.services.database.db;
  const started = new Map<number, number>();
  const runner = createJobRunner({
    db,
    clock: systemClock,
    wakeDelayMs,
    pollIntervalMs: 60_000,
    handlers: {
      [queue]: async (job) => {
        started.set((job.payload as { n: number }).n, performance.now());
      },
    },
  });
  runner.start();
  // Let the start-up claim (which finds nothing) finish first.
  await new Promise((resolve) => setTimeout(resolve, 50));
  const queuedAt: number[] = [];
  for (let n = 0; n < 5; n++) {
    await enqueueJob(db, { queue, payload: { n }, runAt: new Date(Date.now() - 1000) });
    queuedAt.push(performance.now());
    runner.wake();
  }
  const deadline = Date.now() + 5_000;
  while (started.size < 5 && Date.now() < deadline) await new Promise((resolve) => setTimeout(resolve, 10));
  await runner.stop();
  return { started, queuedAt };
}

describe('job runner wake delay', () => {
  it('claims the jobs queued within the delay together, after the last of them', async () => {
    const { started, queuedAt } = await queueFive(400, 'test.wake.delayed');
    expect(started.size).toBe(5);
    const lastQueued = queuedAt[4];
    expect(lastQueued - queuedAt[0]).toBeLessThan(400);
    for (const at of started.values()) expect(at).toBeGreaterThan(lastQueued);
  });

  it('with no delay, a wake starts the job at once, without waiting for the poll', async () => {
    const { started, queuedAt } = await queueFive(0, 'test.wake.at-once');
    expect(started.size).toBe(5);
    // The poll is a minute away: only the wakes can have started them.
    for (const at of started.values()) expect(at - queuedAt[0]).toBeLessThan(5_000);
  });
});
