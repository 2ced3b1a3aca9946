/**
 * The audit log's readers and its retention (docs/audit.md): partners and agency owners read
 * their tenant's entries, the operator everyone's; entries older than AUDIT_RETENTION_DAYS
 * (retention.ts) are purged by a maintenance job.
 */

import type { AuditEventsTable } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import { listPageCountedApart } from '../core/db/pagination.js';
import { notFound } from '../core/errors.js';
import { type AuditFilter, countAuditEvents, findAuditEvent, listAuditEvents } from './repository.js';
import { purgeExpiredAuditEvents } from './retention.js';
import type { AuditEvent, ListAuditEventsQuery, ListOperatorAuditEventsQuery } from './schemas.js';

export function toAuditEvent(row: AuditEventsTable): AuditEvent {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    actor: { type: row.actor_type as AuditEvent['actor']['type'], id: row.actor_id },
    action: row.action,
    object: { type: row.object_type, id: row.object_id },
    fields: row.fields,
    ip: row.ip,
    user_agent: row.user_agent,
    request_id: row.request_id,
    created_at: row.created_at.toISOString(),
  };
}

function filterOf(query: ListAuditEventsQuery): AuditFilter {
  return {
    actorType: query.actor_type,
    actorId: query.actor_id,
    action: query.action,
    objectType: query.object_type,
    objectId: query.object_id,
    createdAfter: query.created_after ? new Date(query.created_after) : undefined,
    createdBefore: query.created_before ? new Date(query.created_before) : undefined,
  };
}

export function createAuditService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;

  const page = (query: ListAuditEventsQuery, filter: AuditFilter) =>
    listPageCountedApart(
      query,
      (limit, offset) => listAuditEvents(db, filter, limit, offset),
      () => countAuditEvents(db, filter),
      toAuditEvent,
    );

  return {
    /** One tenant's entries (partners, the console's owners). */
    listForTenant: (tenantId: string, query: ListAuditEventsQuery) =>
      page(query, { ...filterOf(query), tenantId }),

    /** One of the tenant's entries; 404 for any other. */
    async getForTenant(tenantId: string, id: string): Promise<AuditEvent> {
      const row = await findAuditEvent(db, tenantId, id);
      if (!row) throw notFound('Audit event');
      return toAuditEvent(row);
    },

    /** Every entry, optionally one tenant's (the operator). */
    list: (query: ListOperatorAuditEventsQuery) =>
      page(query, { ...filterOf(query), tenantId: query.tenant_id }),

    /** Deletes entries past the retention, in batches; `more`: come back for the rest. */
    purgeExpired: (options: { batchSize?: number; maxBatches?: number } = {}) =>
      purgeExpiredAuditEvents(db, clock.now(), options),
  };
}

export type AuditService = ReturnType<typeof createAuditService>;
