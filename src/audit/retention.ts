/** How long the audit log keeps an entry, and the purge the maintenance job runs (docs/audit.md). */
import type { Db } from '../core/db/database.js';
import { DAY_MS } from '../core/jobs/retention.js';
import { purgeAuditBatch } from './repository.js';

export const AUDIT_RETENTION_DAYS = 400;

/** Deletes entries older than AUDIT_RETENTION_DAYS before `now`, in batches; `more`: come back for the rest. */
export async function purgeExpiredAuditEvents(
  db: Db,
  now: Date,
  options: { batchSize?: number; maxBatches?: number } = {},
): Promise<{ deleted: number; more: boolean }> {
  const cutoff = new Date(now.getTime() - AUDIT_RETENTION_DAYS * DAY_MS);
  const batchSize = options.batchSize ?? 500;
  const maxBatches = options.maxBatches ?? 100;
  let deleted = 0;
  for (let batch = 0; batch < maxBatches; batch++) {
    const count = await purgeAuditBatch(db, cutoff, batchSize);
    deleted += count;
    if (count < batchSize) return { deleted, more: false };
  }
  return { deleted, more: true };
}
