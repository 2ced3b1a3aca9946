/**
 * Finished jobs are kept JOB_RETENTION_DAYS and then deleted in batches by a recurring
 * maintenance job (src/core/jobs/retention.ts); queued and running jobs are never deleted, and the
 * maintenance jobs keep coming back.
 */
import fs from 'node:fs';
import path from 'node:path';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { DAY_MS, purgeFinishedJobs } from '../../src/core/jobs/retention.js';
import { createJobRunner } from '../../src/core/jobs/runner.js';
import { JOB_PURGE_QUEUE, PURGE_QUEUE, scheduleMaintenance } from '../../src/maintenance/jobs.js';
import { startTestApp, type TestApp } from '../support/app.js';

const NOW = new Date('2026-03-10T12:00:00.000Z');
const daysAgo = (days: number) => new Date(NOW.getTime() - days * DAY_MS);

describe('finished job retention', () => {
  let t: TestApp;
  const clock = new ManualClock(NOW.toISOString());

  beforeAll(async () => {
    t = await startTestApp({ clock, env: { JOB_RETENTION_DAYS: '7' } });
  });
  afterAll(() => t.close());

  const db = () => t.services.database.db;

  /** Inserts jobs of a queue no worker handles, in the given state. */
  async function insertJobs(
    queue: string,
    count: number,
    status: 'queued' | 'running' | 'done' | 'failed',
    finishedAt: Date | null,
  ) {
    await sql`
      INSERT INTO jobs (queue, payload, status, run_at, created_at, finished_at)
      SELECT ${queue}, '{}'::jsonb, ${status}, ${daysAgo(30)}, ${daysAgo(30)}, ${finishedAt}
      FROM generate_series(1, ${count})`.execute(db());
  }

  const countOf = async (queue: string) =>
    Number(
      (
        await db()
          .selectFrom('jobs')
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .where('queue', '=', queue)
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('deletes done and failed jobs past the retention in batches, keeps fresh ones and never touches queued or running ones', async () => {
    await insertJobs('test.old_done', 25, 'done', daysAgo(8));
    await insertJobs('test.old_failed', 5, 'failed', daysAgo(7.5));
    await insertJobs('test.fresh_done', 4, 'done', daysAgo(6.9));
    await insertJobs('test.queued', 3, 'queued', null);
    await insertJobs('test.running', 2, 'running', null);

    const cutoff = daysAgo(7);
    // Three statements of 10 leave the last batch full: the caller is told to come back.
    expect(await purgeFinishedJobs(db(), { cutoff, batchSize: 10, maxBatches: 3 })).toEqual({
      deleted: 30,
      more: true,
    });
    expect(await purgeFinishedJobs(db(), { cutoff, batchSize: 10, maxBatches: 3 })).toEqual({
      deleted: 0,
      more: false,
    });
    expect(await countOf('test.old_done')).toBe(0);
    expect(await countOf('test.old_failed')).toBe(0);
    expect(await countOf('test.fresh_done')).toBe(4);
    expect(await countOf('test.queued')).toBe(3);
    expect(await countOf('test.running')).toBe(2);
  });

  it('the maintenance job purges with JOB_RETENTION_DAYS, and both maintenance jobs come back after each run', async () => {
    await insertJobs('test.maintained_old', 3, 'done', daysAgo(7.1));
    await insertJobs('test.maintained_fresh', 2, 'done', daysAgo(6));
    await scheduleMaintenance(t.services);
    await t.services.jobRunner.drain();
    expect(await countOf('test.maintained_old')).toBe(0);
    expect(await countOf('test.maintained_fresh')).toBe(2);

    const queuedRuns = async (queue: string) =>
      db()
        .selectFrom('jobs')
        .select(['run_at'])
        .where('queue', '=', queue)
        .where('status', '=', 'queued')
        .execute();
    for (let hour = 1; hour <= 3; hour++) {
      for (const queue of [PURGE_QUEUE, JOB_PURGE_QUEUE]) {
        const next = await queuedRuns(queue);
        expect(next, `${queue} after run ${hour}`).toHaveLength(1);
        expect(next[0].run_at.getTime()).toBe(clock.now().getTime() + 60 * 60 * 1000);
      }
      clock.set(new Date(clock.now().getTime() + 60 * 60 * 1000));
      await t.services.jobRunner.drain();
    }
    // A process starting while the chain is queued adds no second one.
    await scheduleMaintenance(t.services);
    await t.services.jobRunner.drain();
    clock.set(new Date(clock.now().getTime() + 60 * 60 * 1000));
    await t.services.jobRunner.drain();
    for (const queue of [PURGE_QUEUE, JOB_PURGE_QUEUE]) expect(await queuedRuns(queue)).toHaveLength(1);
  });

  it('a maintenance chain outlives a database outage of hours: its run is retried, back-off capped at 15 minutes, until it succeeds', async () => {
    await db().deleteFrom('jobs').where('queue', '=', JOB_PURGE_QUEUE).execute();
    await scheduleMaintenance(t.services);
    let databaseDown = true;
    const runner = createJobRunner({
      db: db(),
      clock,
      handlers: {
        [JOB_PURGE_QUEUE]: async (job) => {
          if (databaseDown) throw new Error('Connection terminated unexpectedly');
          return t.services.jobHandlers[JOB_PURGE_QUEUE](job);
        },
      },
    });
    const chain = () =>
      db()
        .selectFrom('jobs')
        .select(['id', 'status', 'attempts', 'run_at'])
        .where('queue', '=', JOB_PURGE_QUEUE)
        .where('status', 'in', ['queued', 'running'])
        .execute();
    const [failing] = await chain();
    // Four hours of failed runs: far more than a job's default ten attempts.
    for (let failure = 1; failure <= 20; failure++) {
      clock.set((await chain())[0].run_at);
      expect(await runner.runOnce()).toBe(1);
      const [queued] = await chain();
      expect(queued).toMatchObject({ id: failing.id, status: 'queued', attempts: failure });
      expect(queued.run_at.getTime() - clock.now().getTime()).toBeLessThanOrEqual(15 * 60 * 1000);
    }
    databaseDown = false;
    clock.set((await chain())[0].run_at);
    expect(await runner.runOnce()).toBe(1);
    const [next] = await chain();
    expect(next.id).not.toBe(failing.id);
    expect(next.run_at.getTime()).toBe(clock.now().getTime() + 60 * 60 * 1000);
  });

  it('migration 0025 lifts the ten-attempt limit of maintenance runs queued by an earlier version, and only theirs', async () => {
    await sql`
      INSERT INTO jobs (queue, payload, status, run_at, created_at, max_attempts, finished_at)
      VALUES ('maintenance.legacy_probe', '{}', 'queued', now(), now(), 10, NULL),
             ('maintenance.legacy_probe', '{}', 'done', now(), now(), 10, now()),
             ('test.not_maintenance', '{}', 'queued', now(), now(), 10, NULL)`.execute(db());
    const migration = fs.readFileSync(
      path.join(import.meta.dirname, '../../migrations/0025_recurring_jobs_unlimited_attempts.sql'),
      'utf8',
    );
    await sql.raw(migration).execute(db());
    const rows = await db()
      .selectFrom('jobs')
      .select(['queue', 'status', 'max_attempts'])
      .where('queue', 'in', ['maintenance.legacy_probe', 'test.not_maintenance'])
      .orderBy('queue')
      .orderBy('status')
      .execute();
    expect(rows).toEqual([
      { queue: 'maintenance.legacy_probe', status: 'done', max_attempts: 10 },
      { queue: 'maintenance.legacy_probe', status: 'queued', max_attempts: 2_147_483_647 },
      { queue: 'test.not_maintenance', status: 'queued', max_attempts: 10 },
    ]);
  });

  it('refuses a JOB_RETENTION_DAYS that is not a whole number of days from 1 to 3650', async () => {
    const { loadConfig } = await import('../../src/core/config/config.js');
    expect(loadConfig({}).jobRetentionDays).toBe(7);
    expect(loadConfig({ JOB_RETENTION_DAYS: '30' }).jobRetentionDays).toBe(30);
    for (const bad of ['0', '3651', '1.5', 'week']) {
      expect(() => loadConfig({ JOB_RETENTION_DAYS: bad })).toThrow(/JOB_RETENTION_DAYS/);
    }
  });
});
