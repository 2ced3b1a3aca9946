/**
 * A queue's per-key limit (event deliveries: per endpoint) never lets one key hold more than a
 * third of the job runner's window, whatever the limit says and whatever JOB_CONCURRENCY is, so
 * two stuck keys (hung endpoints) always leave a third of the slots to everything else.
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

/** Runs 40 jobs of one key that hang until released; the most that ran at once. */
async function mostAtOnce(concurrency: number, keyMax: number, queue: string): Promise<number> {
  const db = t.services.database.db;
  let running = 0;
  let most = 0;
  let release!: () => void;
  const released = new Promise<void>((resolve) => {
    release = resolve;
  });
  for (let n = 0; n < 40; n++) {
    await enqueueJob(db, { queue, payload: { n }, runAt: new Date(Date.now() - 1000) });
  }
  const runner = createJobRunner({
    db,
    clock: systemClock,
    concurrency,
    batchSize: concurrency,
    pollIntervalMs: 20,
    keyPatienceMs: 60_000,
    limits: { [queue]: { key: () => 'one-endpoint', max: keyMax } },
    handlers: {
      [queue]: async () => {
        running++;
        most = Math.max(most, running);
        await released;
        running--;
      },
    },
  });
  runner.start();
  // Long enough for several claims: the window fills, and the key's extra jobs wait in line.
  await new Promise((resolve) => setTimeout(resolve, 500));
  release();
  await runner.stop();
  return most;
}

describe('per-key limits within the job window', () => {
  it('a key limited to 32 holds at most a third of a window of 30', async () => {
    expect(await mostAtOnce(30, 32, 'test.keycap.small-window')).toBe(10);
  });

  it('a key runs up to its own limit when that is below a third of the window', async () => {
    expect(await mostAtOnce(30, 4, 'test.keycap.own-limit')).toBe(4);
  });
});
