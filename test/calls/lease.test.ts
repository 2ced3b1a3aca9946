/**
 * The job lease the call pipeline relies on (src/core/jobs.ts): renewed while a job runs, so a
 * live worker keeps it; taken over once its worker stops renewing (a crash).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { createWorker, enqueueJob } from '../../src/core/jobs.js';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('job leases', () => {
  it('renews the lease of a running job, and lets another worker take over an abandoned one', async () => {
    const db = t.services.database.db;
    const runs: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const handlers = {
      'test.lease': async () => {
        runs.push('run');
        await held;
      },
    };
    const a = createWorker({ db, clock: systemClock, handlers, leaseMs: 300 });
    const b = createWorker({ db, clock: systemClock, handlers, leaseMs: 300 });
    await enqueueJob(db, { queue: 'test.lease', payload: {}, runAt: new Date(Date.now() - 1000) });

    const first = a.runOnce();
    await sleep(1000);
    // Three leases long, but still renewed by A: B finds nothing to take over.
    expect(await b.runOnce()).toBe(0);
    release();
    expect(await first).toBe(1);
    expect(runs).toEqual(['run']);

    // A job whose worker died (claimed, never renewed nor finished) is taken over after its lease.
    await enqueueJob(db, { queue: 'test.lease', payload: {}, runAt: new Date(Date.now() - 1000) });
    await db
      .updateTable('jobs')
      .set({ status: 'running', locked_by: 'wrk_dead', locked_until: new Date(Date.now() + 300) })
      .where('queue', '=', 'test.lease')
      .where('status', '=', 'queued')
      .execute();
    expect(await b.runOnce()).toBe(0);
    await sleep(400);
    expect(await b.runOnce()).toBe(1);
    expect(runs).toEqual(['run', 'run']);
  });
});
