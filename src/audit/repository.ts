/** SQL of the audit log's reads and its retention purge (the one write is core/audit/record.ts). */
import { sql } from 'kysely';
import type { AuditEventsTable } from '../core/audit/record.js';
import type { Db, Executor } from '../core/db/database.js';

export interface AuditFilter {
  tenantId?: string;
  actorType?: string;
  actorId?: string;
  action?: string;
  objectType?: string;
  objectId?: string;
  createdAfter?: Date;
  createdBefore?: Date;
}

function filtered(db: Executor, filter: AuditFilter) {
  let query = db.selectFrom('audit_events');
  if (filter.tenantId !== undefined) query = query.where('tenant_id', '=', filter.tenantId);
  if (filter.actorType !== undefined) query = query.where('actor_type', '=', filter.actorType);
  if (filter.actorId !== undefined) query = query.where('actor_id', '=', filter.actorId);
  if (filter.action !== undefined) query = query.where('action', '=', filter.action);
  if (filter.objectType !== undefined) query = query.where('object_type', '=', filter.objectType);
  if (filter.objectId !== undefined) query = query.where('object_id', '=', filter.objectId);
  if (filter.createdAfter !== undefined) query = query.where('created_at', '>', filter.createdAfter);
  if (filter.createdBefore !== undefined) query = query.where('created_at', '<', filter.createdBefore);
  return query;
}

/** One page, newest first, ties broken by id so pages never repeat or skip an entry. */
export async function listAuditEvents(
  db: Executor,
  filter: AuditFilter,
  limit: number,
  offset: number,
): Promise<AuditEventsTable[]> {
  return filtered(db, filter)
    .selectAll()
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

/** One entry of the tenant's (undefined when another tenant's, platform-wide or purged). */
export async function findAuditEvent(
  db: Executor,
  tenantId: string,
  id: string,
): Promise<AuditEventsTable | undefined> {
  return db
    .selectFrom('audit_events')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

export async function countAuditEvents(db: Executor, filter: AuditFilter): Promise<number> {
  const row = await filtered(db, filter)
    .select((eb) => eb.fn.countAll<number>().as('total'))
    .executeTakeFirstOrThrow();
  return Number(row.total);
}

/**
 * Deletes up to `batchSize` of the oldest entries before `cutoff`, in a transaction that tells the
 * table's append-only trigger this is the retention purge (migration 0042).
 */
export async function purgeAuditBatch(db: Db, cutoff: Date, batchSize: number): Promise<number> {
  return db.transaction().execute(async (tx) => {
    await sql`SET LOCAL voiceplane.audit_purge = 'on'`.execute(tx);
    const result = await sql`
      DELETE FROM audit_events WHERE id IN (
        SELECT id FROM audit_events WHERE created_at < ${cutoff} ORDER BY created_at, id LIMIT ${batchSize}
      )`.execute(tx);
    return Number(result.numAffectedRows ?? 0);
  });
}
