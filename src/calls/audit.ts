/** The audit entry of a call placed by a partner's key (docs/audit.md). */
import { type AuditEventsTable, auditRow } from '../core/audit/record.js';

/**
 * The entry of a call about to be placed, inserted by the call's own guarded statement
 * (`insertQueuedCalls`): one statement, no transaction. Undefined without an actor (the webhook).
 */
export function callCreatedRow(
  tenantId: string,
  callId: string,
  fields: string[] | undefined,
  at: Date,
): AuditEventsTable | undefined {
  if (!fields) return undefined;
  return auditRow({ action: 'call.created', tenantId, objectType: 'call', objectId: callId, fields, at });
}

/**
 * The CTE of `insertQueuedCalls` that inserts each call's entry (its input's `audit`, null without
 * an actor) with the call it names: only when the guard let the call in, in the same statement.
 */
export const AUDIT_OF_QUEUED = `audit AS (
        INSERT INTO audit_events (id, tenant_id, actor_type, actor_id, action, object_type, object_id, fields,
                                  ip, user_agent, request_id, created_at)
        SELECT a.id, queued.tenant_id, a.actor_type, a.actor_id, a.action, a.object_type, queued.id,
               ARRAY(SELECT jsonb_array_elements_text(a.fields)), a.ip, a.user_agent, a.request_id, a.created_at
        FROM queued JOIN input i ON i.id = queued.id
        CROSS JOIN LATERAL jsonb_to_record(i.audit) AS a(id text, actor_type text, actor_id text, action text,
          object_type text, fields jsonb, ip text, user_agent text, request_id text, created_at timestamptz)
        WHERE i.audit IS NOT NULL
      )`;
