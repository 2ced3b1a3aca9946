/**
 * The job lease the call pipeline relies on (src/core/jobs/runner.ts): renewed while a job runs, so a
 * live worker keeps it; taken over once its worker stops renewing (a crash); still renewed for
 * the jobs that run on when another job's outcome could not be recorded (the database went away).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import type { Db } from '../../src/core/db/database.js';
import { createJobRunner, enqueueJob } from '../../src/core/jobs/runner.js';
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
    const a = createJobRunner({ db, clock: systemClock, handlers, leaseMs: 300 });
    const b = createJobRunner({ db, clock: systemClock, handlers, leaseMs: 300 });
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

/** `db`, except that its first `failures` calls of updateTable throw as a dropped connection does. */
function failingUpdates(db: Db, failures: number): Db {
  return new Proxy(db, {
    get(target, property) {
      if (property === 'updateTable' && failures-- > 0) {
        return () => {
          throw new Error('Connection terminated unexpectedly');
        };
      }
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

describe('a batch whose failure could not be recorded', () => {
  it('keeps renewing the leases of its jobs still running, so no other worker runs them twice', async () => {
    const db = t.services.database.db;
    const runs: string[] = [];
    let release!: () => void;
    const held = new Promise<void>((resolve) => {
      release = resolve;
    });
    const handlers = {
      'test.fails': async () => {
        runs.push('fails');
        throw new Error('carrier said no');
      },
      'test.long': async () => {
        runs.push('long');
        await held;
      },
    };
    const past = new Date(Date.now() - 1000);
    await enqueueJob(db, { queue: 'test.fails', payload: {}, runAt: past });
    await enqueueJob(db, { queue: 'test.long', payload: {}, runAt: past });
    // A's first write after its claim is recording test.fails' failure: that one fails.
    const a = createJobRunner({ db: failingUpdates(db, 1), clock: systemClock, handlers, leaseMs: 300 });
    const b = createJobRunner({
      db,
      clock: systemClock,
      handlers: { ...handlers, 'test.long': async () => void runs.push('long, again') },
      leaseMs: 300,
    });

    const first = a.runOnce();
    first.catch(() => {});
    await sleep(1000);
    // Three leases long: A still renews both (the unrecorded one is run again after A lets go).
    expect(await b.runOnce()).toBe(0);
    release();
    await expect(first).rejects.toThrow('Connection terminated unexpectedly');
    expect(runs.sort()).toEqual(['fails', 'long']);
    await sleep(400);
    // Only the job whose failure was lost comes back; the long one was acknowledged.
    expect(await b.runOnce()).toBe(1);
    expect(runs.sort()).toEqual(['fails', 'fails', 'long']);
  });
});
