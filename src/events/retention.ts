/**
 * Retention of events: `GET /api/v1/events` reaches 30 days back (EVENT_RETENTION_MS), and older
 * events are deleted with their deliveries by a recurring maintenance job (src/services.ts), so
 * the events tables do not grow forever. Every delivery has long ended by then (the §3 retry
 * schedule spans about 33 hours); a delivery job that still names a deleted delivery finds
 * nothing to do.
 *
 * Deletion goes in small batches, each one statement (the events and their deliveries together):
 * a long backlog never builds one huge transaction nor holds locks on many rows at once.
 */
import { sql } from 'kysely';
import type { Executor } from '../core/db/database.js';

export interface EventPurgeOptions {
  /** Events created before this are deleted, with their deliveries. */
  cutoff: Date;
  /** Events per statement. */
  batchSize?: number;
  /** Statements per call; the caller comes back for the rest (see `more`). */
  maxBatches?: number;
}

export interface EventPurgeResult {
  deleted: number;
  /** The last batch was full: more events may be past the cutoff. */
  more: boolean;
}

/** Deletes up to `batchSize` of the oldest events before `cutoff` and their deliveries. */
async function purgeBatch(db: Executor, cutoff: Date, batchSize: number): Promise<number> {
  // The deliveries go in a sibling CTE of the same statement: the foreign key is checked at its end.
  const result = await sql<{ id: string }>`
    WITH old AS (
      SELECT id FROM events WHERE created_at < ${cutoff} ORDER BY created_at, id LIMIT ${batchSize}
    ), gone_deliveries AS (
      DELETE FROM event_deliveries WHERE event_id IN (SELECT id FROM old)
    )
    DELETE FROM events WHERE id IN (SELECT id FROM old)`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Deletes events older than `cutoff` with their deliveries, in batches. */
export async function purgeExpiredEvents(
  db: Executor,
  options: EventPurgeOptions,
): Promise<EventPurgeResult> {
  const batchSize = options.batchSize ?? 500;
  const maxBatches = options.maxBatches ?? 100;
  let deleted = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const count = await purgeBatch(db, options.cutoff, batchSize);
    deleted += count;
    if (count < batchSize) return { deleted, more: false };
  }
  return { deleted, more: true };
}
