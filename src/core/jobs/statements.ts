/**
 * The statements the job runner (./runner.ts) sends, each one round trip whatever the number of
 * jobs it concerns: claim a batch, acknowledge finished jobs, record a failure, hand jobs back,
 * renew leases. Each write touches only jobs the runner (`runnerId`) still holds.
 */
import { sql } from 'kysely';
import { type Executor, runPrepared } from '../db/database.js';

export interface ClaimedRow {
  id: number;
  tenant_id: string | null;
  queue: string;
  payload: unknown;
  attempts: number;
  max_attempts: number;
}

/**
 * "Still running", written so that the planner cannot match it to jobs_due's predicate: the writes
 * about a few known jobs then reach them by the primary key. Stale statistics made a scan of the
 * whole jobs_due index for `id = ANY(…)` look as cheap, and it read every queued job of a burst
 * per acknowledgement (12 ms each behind 60,000; bench/README.md, "Stale queue plans").
 */
export const STILL_RUNNING_TEXT = "status = (SELECT 'running'::text)";
const STILL_RUNNING = sql<boolean>`${sql.raw(STILL_RUNNING_TEXT)}`;

/** Claims up to `limit` due jobs of `queues` (or running ones whose lease lapsed) under a lease. */
export function claimJobs(
  db: Executor,
  runnerId: string,
  queues: string[],
  now: Date,
  lockedUntil: Date,
  limit: number,
): Promise<ClaimedRow[]> {
  // claim_jobs (migration 0021) walks the jobs_due index and stops after `limit` rows, whatever
  // the backlog and whatever the table's statistics say.
  return runPrepared<ClaimedRow>(db, {
    name: 'jobs_claim',
    text: 'SELECT * FROM claim_jobs($1::text, $2::timestamptz, $3::text[], $4::timestamptz, $5::integer)',
    values: [runnerId, lockedUntil, queues, now, limit],
  });
}

/** Acknowledges finished jobs in one statement. */
export async function markJobsDone(db: Executor, runnerId: string, ids: number[], at: Date): Promise<void> {
  await runPrepared(db, {
    name: 'jobs_mark_done',
    text: `
      UPDATE jobs SET status = 'done', finished_at = $3::timestamptz, locked_until = NULL
      WHERE id = ANY($1::bigint[]) AND locked_by = $2 AND ${STILL_RUNNING_TEXT}`,
    values: [ids, runnerId, at],
  });
}

/** A failed run: failed for good (`runAt` null), or queued again at `runAt`. */
export async function recordJobFailure(
  db: Executor,
  runnerId: string,
  jobId: number,
  failure: { message: string; at: Date; runAt: Date | null; countsAsAttempt: boolean },
): Promise<void> {
  const mine = (qb: any) => qb.where('id', '=', jobId).where('locked_by', '=', runnerId).where(STILL_RUNNING);
  if (failure.runAt === null) {
    await mine(
      db.updateTable('jobs').set({
        status: 'failed',
        finished_at: failure.at,
        last_error: failure.message,
        locked_until: null,
      }),
    ).execute();
    return;
  }
  await mine(
    db.updateTable('jobs').set({
      status: 'queued',
      run_at: failure.runAt,
      ...(failure.countsAsAttempt ? {} : { attempts: sql<number>`attempts - 1` }),
      last_error: failure.message,
      locked_until: null,
      locked_by: null,
    }),
  ).execute();
}

/** Hands claimed jobs back unrun, each due at its time; the claim does not count as an attempt. */
export async function handBackJobs(
  db: Executor,
  runnerId: string,
  jobs: { id: number; runAt: Date }[],
): Promise<void> {
  await runPrepared(db, {
    name: 'jobs_hand_back',
    text: `
      UPDATE jobs SET status = 'queued', run_at = back.run_at, attempts = jobs.attempts - 1,
             locked_by = NULL, locked_until = NULL
      FROM unnest($1::bigint[], $2::timestamptz[]) AS back(id, run_at)
      WHERE jobs.id = back.id AND jobs.locked_by = $3 AND ${STILL_RUNNING_TEXT}`,
    values: [jobs.map((job) => job.id), jobs.map((job) => job.runAt), runnerId],
  });
}

/** Extends the leases of the jobs the runner holds. */
export async function renewJobLeases(
  db: Executor,
  runnerId: string,
  ids: number[],
  lockedUntil: Date,
): Promise<void> {
  await db
    .updateTable('jobs')
    .set({ locked_until: lockedUntil })
    .where('id', 'in', ids)
    .where('locked_by', '=', runnerId)
    .where(STILL_RUNNING)
    .execute();
}
