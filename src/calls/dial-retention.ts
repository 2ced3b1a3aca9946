/**
 * Retention of the engine's dial claims (`engine_dials`, engine-dials.ts): a claim matters while
 * its call may still be dialled or reported on. Once the call has ended, a claim is only read by
 * an engine's late report (which attempt its id was requested for), and engines report within
 * minutes of the end. So the claims of calls that ended more than ENGINE_DIAL_RETENTION_MS ago
 * are deleted, in batches, by a recurring maintenance job (src/maintenance/jobs.ts); a call
 * still queued, dialing or talking keeps every claim.
 */
import { sql } from 'kysely';
import type { Executor } from '../core/db/database.js';

/** How long a claim is kept after its call ended. */
export const ENGINE_DIAL_RETENTION_MS = 7 * 24 * 60 * 60 * 1000;

export interface DialPurgeOptions {
  /** Claims of calls that ended before this (and requested before it) are deleted. */
  cutoff: Date;
  /** Claims per statement. */
  batchSize?: number;
  /** Statements per call; the caller comes back for the rest (see `more`). */
  maxBatches?: number;
}

async function purgeBatch(db: Executor, cutoff: Date, batchSize: number): Promise<number> {
  // No index on requested_at: claims are written in order, so the oldest are met first.
  const result = await sql`
    WITH resolved AS (
      SELECT d.call_id, d.attempt FROM engine_dials d
      JOIN calls c ON c.id = d.call_id AND c.tenant_id = d.tenant_id
      WHERE d.requested_at < ${cutoff} AND c.status IN ('completed', 'no_answer', 'failed') AND c.ended_at < ${cutoff}
      LIMIT ${batchSize}
    )
    DELETE FROM engine_dials d USING resolved r WHERE d.call_id = r.call_id AND d.attempt = r.attempt`.execute(
    db,
  );
  return Number(result.numAffectedRows ?? 0);
}

/** Deletes the claims of calls that ended before `cutoff`, in batches. */
export async function purgeResolvedEngineDials(
  db: Executor,
  options: DialPurgeOptions,
): Promise<{ deleted: number; more: boolean }> {
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
