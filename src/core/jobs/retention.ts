/**
 * Retention of finished jobs: a job that is `done` or `failed` is kept for a while (to look at
 * what ran, and why something failed) and then deleted, so the `jobs` table does not grow forever.
 * Queued and running jobs are never touched.
 *
 * Deletion goes in small batches, each its own statement: a long backlog (the first purge after an
 * upgrade) never holds locks on many rows at once or builds one huge transaction, and the workers
 * claiming jobs meanwhile are not held up.
 */
import { sql } from 'kysely';
import type { Executor } from '../db/database.js';

export const DAY_MS = 24 * 60 * 60 * 1000;

export interface JobPurgeOptions {
  /** Finished jobs whose `finished_at` is before this are deleted. */
  cutoff: Date;
  /** Rows per statement. */
  batchSize?: number;
  /** Statements per call; the caller comes back for the rest (see `more`). */
  maxBatches?: number;
}

export interface JobPurgeResult {
  deleted: number;
  /** The last batch was full: more finished jobs may be past the cutoff. */
  more: boolean;
}

/** Deletes up to `batchSize` finished jobs older than `cutoff`; returns how many it deleted. */
async function purgeBatch(db: Executor, cutoff: Date, batchSize: number): Promise<number> {
  // Oldest ids first: finished jobs past the cutoff sit at the low end of the primary key.
  const result = await sql`
    DELETE FROM jobs WHERE id IN (
      SELECT id FROM jobs
      WHERE status IN ('done', 'failed') AND finished_at < ${cutoff}
      ORDER BY id
      LIMIT ${batchSize}
    )`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Deletes finished jobs older than `cutoff`, in batches. */
export async function purgeFinishedJobs(db: Executor, options: JobPurgeOptions): Promise<JobPurgeResult> {
  const batchSize = options.batchSize ?? 1000;
  const maxBatches = options.maxBatches ?? 100;
  let deleted = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const count = await purgeBatch(db, options.cutoff, batchSize);
    deleted += count;
    if (count < batchSize) return { deleted, more: false };
  }
  return { deleted, more: true };
}
