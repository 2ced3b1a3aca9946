/**
 * The recurring maintenance jobs: purges of expired idempotency keys, finished jobs, old events,
 * ended console sessions and the dial claims of long-ended calls, and the vacuum of the busiest
 * tables where autovacuum does not run.
 * Each run queues the next; `scheduleMaintenance` starts the chains at boot.
 */

import { Type } from '@sinclair/typebox';
import { purgeExpiredAuditEvents } from '../audit/retention.js';
import { ENGINE_DIAL_RETENTION_MS, purgeResolvedEngineDials } from '../calls/dial-retention.js';
import type { Clock } from '../core/clock.js';
import type { Database, Executor } from '../core/db/database.js';
import { maintainTables, VACUUM_EVERY_MS, VACUUM_QUEUE } from '../core/db/table-maintenance.js';
import type { IdempotencyStore } from '../core/idempotency/store.js';
import { defineJob, type JobDefinition } from '../core/jobs/definitions.js';
import { DAY_MS, purgeFinishedJobs } from '../core/jobs/retention.js';
import { enqueueJob } from '../core/jobs/runner.js';
import { purgeExpiredEvents } from '../events/retention.js';
import { EVENT_RETENTION_MS } from '../events/service.js';
import { purgeEndedMemberRecords } from '../members/retention.js';

export const PURGE_QUEUE = 'maintenance.purge_idempotency_keys';
export const JOB_PURGE_QUEUE = 'maintenance.purge_finished_jobs';
export const EVENT_PURGE_QUEUE = 'maintenance.purge_events';
export const MEMBER_PURGE_QUEUE = 'maintenance.purge_member_sessions';
export const ENGINE_DIAL_PURGE_QUEUE = 'maintenance.purge_engine_dials';
export const AUDIT_PURGE_QUEUE = 'maintenance.purge_audit_events';
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

/** A run's payload: which of the chain's two keys it holds (see scheduleRecurring). */
const RecurringPayload = Type.Object({
  slot: Type.Optional(Type.Union([Type.Literal('a'), Type.Literal('b')])),
});

function scheduleNext(db: Executor, job: { queue: string; payload: { slot?: 'a' | 'b' } }, runAt: Date) {
  return scheduleRecurring(db, job.queue, job.payload.slot === 'a' ? 'b' : 'a', runAt);
}

/** A recurring run: `run` does the work and says when the next run is due. */
function recurring(db: Executor, queue: string, run: () => Promise<Date>): JobDefinition {
  return defineJob({
    queue,
    payload: RecurringPayload,
    handle: async (job) => scheduleNext(db, job, await run()),
  });
}

/** Schedules the recurring maintenance jobs (idempotent across processes). */
export async function scheduleMaintenance(services: { database: Database; clock: Clock }): Promise<void> {
  const { db } = services.database;
  for (const queue of [
    PURGE_QUEUE,
    JOB_PURGE_QUEUE,
    EVENT_PURGE_QUEUE,
    MEMBER_PURGE_QUEUE,
    VACUUM_QUEUE,
    ENGINE_DIAL_PURGE_QUEUE,
    AUDIT_PURGE_QUEUE,
  ]) {
    await scheduleRecurring(db, queue, 'a', services.clock.now());
  }
}

/** The maintenance jobs. */
export function maintenanceJobs(deps: {
  database: Database;
  clock: Clock;
  idempotency: IdempotencyStore;
  jobRetentionDays: number;
  logger?: { warn(details: object, message: string): void };
}): JobDefinition[] {
  const { database, clock } = deps;
  const { db } = database;
  const after = (ms: number) => new Date(clock.now().getTime() + ms);
  const untilNext = (more: boolean) => after(more ? PURGE_AGAIN_MS : PURGE_EVERY_MS);
  return [
    recurring(db, PURGE_QUEUE, async () => {
      await deps.idempotency.purgeExpired();
      return after(PURGE_EVERY_MS);
    }),
    recurring(db, JOB_PURGE_QUEUE, async () => {
      const cutoff = new Date(clock.now().getTime() - deps.jobRetentionDays * DAY_MS);
      return untilNext((await purgeFinishedJobs(db, { cutoff })).more);
    }),
    recurring(db, EVENT_PURGE_QUEUE, async () => {
      const cutoff = new Date(clock.now().getTime() - EVENT_RETENTION_MS);
      return untilNext((await purgeExpiredEvents(db, { cutoff })).more);
    }),
    recurring(db, MEMBER_PURGE_QUEUE, async () =>
      untilNext((await purgeEndedMemberRecords(db, { now: clock.now() })).more),
    ),
    recurring(db, ENGINE_DIAL_PURGE_QUEUE, async () => {
      const cutoff = new Date(clock.now().getTime() - ENGINE_DIAL_RETENTION_MS);
      return untilNext((await purgeResolvedEngineDials(db, { cutoff })).more);
    }),
    recurring(db, AUDIT_PURGE_QUEUE, async () =>
      untilNext((await purgeExpiredAuditEvents(db, clock.now())).more),
    ),
    recurring(db, VACUUM_QUEUE, async () => {
      await maintainTables(database, (table, err) =>
        deps.logger?.warn({ err, table }, 'vacuum of a table failed (autovacuum does not run here)'),
      );
      return after(VACUUM_EVERY_MS);
    }),
  ];
}
