/**
 * The recurring maintenance jobs: purges of expired idempotency keys, finished jobs, old events
 * and ended console sessions, and the vacuum of the busiest tables where autovacuum does not run.
 * Each run queues the next; `scheduleMaintenance` starts the chains at boot.
 */
import type { Clock } from './core/clock.js';
import type { Database, Executor } from './core/db/database.js';
import { maintainTables, VACUUM_EVERY_MS, VACUUM_QUEUE } from './core/db/table-maintenance.js';
import type { IdempotencyStore } from './core/idempotency/store.js';
import { DAY_MS, purgeFinishedJobs } from './core/jobs/retention.js';
import { enqueueJob, type Job } from './core/jobs/runner.js';
import type { JobHandler } from './core/jobs/types.js';
import { purgeExpiredEvents } from './events/retention.js';
import { EVENT_RETENTION_MS } from './events/service.js';
import { purgeEndedMemberRecords } from './members/retention.js';

export const PURGE_QUEUE = 'maintenance.purge_idempotency_keys';
export const JOB_PURGE_QUEUE = 'maintenance.purge_finished_jobs';
export const EVENT_PURGE_QUEUE = 'maintenance.purge_events';
export const MEMBER_PURGE_QUEUE = 'maintenance.purge_member_sessions';
const PURGE_EVERY_MS = 60 * 60 * 1000;
/** A purge that stopped with more to delete comes back this soon, leaving the workers room between runs. */
const PURGE_AGAIN_MS = 60 * 1000;

/**
 * A recurring maintenance job is one queued job at a time, whichever process scheduled it: its
 * singleton key is `<queue>:a` or `<queue>:b`, and each run queues the next under the other letter.
 * (Under its own key the next run would collide with the running job and never be queued.) A second
 * chain, queued by a process starting while one runs, merges into the first at its next run.
 * A run that fails (the database is down) is retried with the job runner's back-off, capped at
 * 15 minutes, without a limit on attempts: only a run that succeeds queues the next, so a chain
 * that gave up after ten failures would end until a process restarted.
 */
const RECURRING_MAX_ATTEMPTS = 2_147_483_647;

function scheduleRecurring(db: Executor, queue: string, slot: 'a' | 'b', runAt: Date) {
  return enqueueJob(db, {
    queue,
    payload: { slot },
    runAt,
    singletonKey: `${queue}:${slot}`,
    maxAttempts: RECURRING_MAX_ATTEMPTS,
  });
}

function scheduleNext(db: Executor, job: Job, runAt: Date) {
  return scheduleRecurring(db, job.queue, job.payload?.slot === 'a' ? 'b' : 'a', runAt);
}

/** Schedules the recurring maintenance jobs (idempotent across processes). */
export async function scheduleMaintenance(services: { database: Database; clock: Clock }): Promise<void> {
  const { db } = services.database;
  for (const queue of [PURGE_QUEUE, JOB_PURGE_QUEUE, EVENT_PURGE_QUEUE, MEMBER_PURGE_QUEUE, VACUUM_QUEUE]) {
    await scheduleRecurring(db, queue, 'a', services.clock.now());
  }
}

/** The maintenance jobs' handlers by queue name. */
export function maintenanceHandlers(deps: {
  database: Database;
  clock: Clock;
  idempotency: IdempotencyStore;
  jobRetentionDays: number;
  logger?: { warn(details: object, message: string): void };
}): Record<string, JobHandler> {
  const { database, clock } = deps;
  const { db } = database;
  return {
    [PURGE_QUEUE]: async (job) => {
      await deps.idempotency.purgeExpired();
      await scheduleNext(db, job, new Date(clock.now().getTime() + PURGE_EVERY_MS));
    },
    [JOB_PURGE_QUEUE]: async (job) => {
      const now = clock.now().getTime();
      const { more } = await purgeFinishedJobs(db, {
        cutoff: new Date(now - deps.jobRetentionDays * DAY_MS),
      });
      await scheduleNext(db, job, new Date(now + (more ? PURGE_AGAIN_MS : PURGE_EVERY_MS)));
    },
    [EVENT_PURGE_QUEUE]: async (job) => {
      const now = clock.now().getTime();
      const { more } = await purgeExpiredEvents(db, { cutoff: new Date(now - EVENT_RETENTION_MS) });
      await scheduleNext(db, job, new Date(now + (more ? PURGE_AGAIN_MS : PURGE_EVERY_MS)));
    },
    [MEMBER_PURGE_QUEUE]: async (job) => {
      const now = clock.now();
      const { more } = await purgeEndedMemberRecords(db, { now });
      await scheduleNext(db, job, new Date(now.getTime() + (more ? PURGE_AGAIN_MS : PURGE_EVERY_MS)));
    },
    [VACUUM_QUEUE]: async (job) => {
      await maintainTables(database, (table, err) =>
        deps.logger?.warn({ err, table }, 'vacuum of a table failed (autovacuum does not run here)'),
      );
      await scheduleNext(db, job, new Date(clock.now().getTime() + VACUUM_EVERY_MS));
    },
  };
}
