/**
 * The state the database holds, read when /metrics is scraped: each queue's jobs, and the calls
 * not yet final. Both read only rows in partial indexes (jobs_due: queued and running jobs;
 * calls_tenant_waiting/calls_tenant_active: queued, dialing and in-progress calls), never the
 * finished history, so a scrape costs the size of the backlog, not of the tables.
 */
import { CompiledQuery } from 'kysely';
import type { Executor } from '../core/db/database.js';

export interface QueueState {
  queue: string;
  due: number;
  scheduled: number;
  running: number;
  oldestDueAt: Date | null;
}

const QUEUE_STATES = `
  SELECT queue,
         count(*) FILTER (WHERE status = 'queued' AND run_at <= $1)::int AS due,
         count(*) FILTER (WHERE status = 'queued' AND run_at > $1)::int AS scheduled,
         count(*) FILTER (WHERE status = 'running')::int AS running,
         min(run_at) FILTER (WHERE status = 'queued' AND run_at <= $1) AS oldest_due_at
  FROM jobs
  WHERE status IN ('queued', 'running')
  GROUP BY queue`;

export async function readQueueStates(db: Executor, now: Date): Promise<QueueState[]> {
  const { rows } = await db.executeQuery<{
    queue: string;
    due: number;
    scheduled: number;
    running: number;
    oldest_due_at: Date | null;
  }>(CompiledQuery.raw(QUEUE_STATES, [now]));
  return rows.map((row) => ({
    queue: row.queue,
    due: row.due,
    scheduled: row.scheduled,
    running: row.running,
    oldestDueAt: row.oldest_due_at,
  }));
}

export const LIVE_CALL_STATUSES = ['queued', 'dialing', 'in_progress'] as const;

/**
 * Written as the two partial indexes' predicates (`= 'queued'`, `IN ('dialing', 'in_progress')`):
 * the planner matches a predicate only as written, and `IN` of all three matched neither, so it
 * read the whole table (test/metrics/scrape-plans.test.ts).
 */
export async function countLiveCalls(
  db: Executor,
): Promise<Record<(typeof LIVE_CALL_STATUSES)[number], number>> {
  const { rows } = await db.executeQuery<{ status: (typeof LIVE_CALL_STATUSES)[number]; n: number }>(
    CompiledQuery.raw(`
      SELECT status, count(*)::int AS n FROM calls
      WHERE status = 'queued' OR status IN ('dialing', 'in_progress')
      GROUP BY status`),
  );
  const counts = { queued: 0, dialing: 0, in_progress: 0 };
  for (const row of rows) counts[row.status] = row.n;
  return counts;
}
