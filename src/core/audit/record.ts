/**
 * The audit log's one write: an `audit_events` row for the change a service is making, in the
 * transaction that makes it (a write that fails or rolls back leaves no entry). Who, from where
 * and which request come from the audit scope (context.ts); the service says what changed.
 *
 * Only names of fields are stored, never values: a password, a secret or a card number cannot
 * reach the log whatever a caller passes.
 */
import type { Db, Executor } from '../db/database.js';
import { runPrepared } from '../db/database.js';
import { newId } from '../ids.js';
import { auditNothingChanged, currentAuditScope } from './context.js';

export interface AuditEventsTable {
  id: string;
  tenant_id: string | null;
  actor_type: string;
  actor_id: string;
  action: string;
  object_type: string;
  object_id: string | null;
  fields: string[];
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  created_at: Date;
}

declare module '../db/database.js' {
  interface Tables {
    audit_events: AuditEventsTable;
  }
}

export interface AuditChange {
  /** `<object>.<verb in the past>`, e.g. `user.created`, `plan.updated`, `agent.published`. */
  action: string;
  /** The tenant the object belongs to (null: a platform-wide object). */
  tenantId: string | null;
  objectType: string;
  objectId: string | null;
  /** Names of the fields the write set or changed (a body's keys); never their values. */
  fields?: Iterable<string>;
  /** The time of the change (the service's clock); now by default. */
  at?: Date;
}

const FIELD_NAME = /^[A-Za-z0-9_.[\]-]{1,100}$/;
const MAX_FIELDS = 100;
const USER_AGENT_MAX = 512;

/** Field names as stored: deduplicated, sorted, and only what looks like a name. */
export function fieldNames(fields: Iterable<string> | undefined): string[] {
  if (!fields) return [];
  return [...new Set([...fields].filter((name) => FIELD_NAME.test(name)))].sort().slice(0, MAX_FIELDS);
}

/**
 * Records `change` in `executor` (the write's own transaction). Outside a request or command with
 * an actor (a background job, the call-trigger webhook, a voice engine's callback) nothing is
 * recorded: the log is about what people and their keys did.
 */
export async function recordAudit(executor: Executor, change: AuditChange): Promise<void> {
  const row = auditRow(change);
  if (!row) return;
  await runPrepared(executor, {
    name: 'audit_events_insert',
    text:
      'INSERT INTO audit_events (id, tenant_id, actor_type, actor_id, action, object_type, object_id, fields, ip, user_agent, request_id, created_at) ' +
      'VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)',
    values: [
      row.id,
      row.tenant_id,
      row.actor_type,
      row.actor_id,
      row.action,
      row.object_type,
      row.object_id,
      row.fields,
      row.ip,
      row.user_agent,
      row.request_id,
      row.created_at,
    ],
  });
}

/**
 * The row `recordAudit` inserts, for a hot write that folds its entry into its own statement (the
 * partner API's call creation: no transaction, no extra round trip); undefined without an actor.
 * The caller must insert it in the statement that makes the change, or not at all.
 */
export function auditRow(change: AuditChange): AuditEventsTable | undefined {
  const scope = currentAuditScope();
  if (!scope?.actor) return undefined;
  scope.recorded++;
  return {
    id: newId('aud'),
    tenant_id: change.tenantId,
    actor_type: scope.actor.type,
    actor_id: scope.actor.id,
    action: change.action,
    object_type: change.objectType,
    object_id: change.objectId,
    fields: fieldNames(change.fields),
    ip: scope.ip,
    user_agent: scope.userAgent?.slice(0, USER_AGENT_MAX) ?? null,
    request_id: scope.requestId,
    created_at: change.at ?? new Date(),
  };
}

/**
 * A single-statement write made auditable: `write` and its entry run in one transaction, the
 * entry built from the write's result (`change` answers null when nothing changed). Without an
 * actor (a job) `write` runs alone, as before.
 */
export async function writeAudited<T>(
  db: Executor,
  write: (executor: Executor) => Promise<T>,
  change: (result: T) => AuditChange | false | null | undefined,
): Promise<T> {
  if (!currentAuditScope()?.actor) return write(db);
  const audited = async (executor: Executor) => {
    const result = await write(executor);
    const entry = change(result);
    if (entry) await recordAudit(executor, entry);
    else auditNothingChanged();
    return result;
  };
  return db.isTransaction ? audited(db) : (db as Db).transaction().execute(audited);
}
