/**
 * The state the database holds, read when /metrics is scraped: each queue's jobs, and the calls
 * not yet final. Both read only rows in partial indexes (jobs_due: queued and running jobs;
 * calls_tenant_waiting/calls_tenant_active: queued, dialing and in-progress calls), never the
 * finished history, so a scrape costs the size of the backlog, not of the tables.
 */
import { sql } from 'kysely';
import type { Executor } from '../core/db.js';

export interface QueueState {
  queue: string;
  due: number;
  scheduled: number;
  running: number;
  oldestDueAt: Date | null;
}

export async function readQueueStates(db: Executor, now: Date): Promise<QueueState[]> {
  const { rows } = await sql<{
    queue: string;
    due: number;
    scheduled: number;
    running: number;
    oldest_due_at: Date | null;
  }>`
    SELECT queue,
           count(*) FILTER (WHERE status = 'queued' AND run_at <= ${now})::int AS due,
           count(*) FILTER (WHERE status = 'queued' AND run_at > ${now})::int AS scheduled,
           count(*) FILTER (WHERE status = 'running')::int AS running,
           min(run_at) FILTER (WHERE status = 'queued' AND run_at <= ${now}) AS oldest_due_at
    FROM jobs
    WHERE status IN ('queued', 'running')
    GROUP BY queue`.execute(db);
  return rows.map((row) => ({
    queue: row.queue,
    due: row.due,
    scheduled: row.scheduled,
    running: row.running,
    oldestDueAt: row.oldest_due_at,
  }));
}

export const LIVE_CALL_STATUSES = ['queued', 'dialing', 'in_progress'] as const;

export async function countLiveCalls(
  db: Executor,
): Promise<Record<(typeof LIVE_CALL_STATUSES)[number], number>> {
  const { rows } = await sql<{ status: (typeof LIVE_CALL_STATUSES)[number]; n: number }>`
    SELECT status, count(*)::int AS n FROM calls
    WHERE status IN ('queued', 'dialing', 'in_progress')
    GROUP BY status`.execute(db);
  const counts = { queued: 0, dialing: 0, in_progress: 0 };
  for (const row of rows) counts[row.status] = row.n;
  return counts;
}
