import type { Selectable } from 'kysely';
import type { AgentSettings } from '../agents/settings.js';
import type { AuditEventsTable } from '../core/audit/record.js';
import { type Executor, runPrepared } from '../core/db/database.js';
import { INSERT_NEW_JOBS } from '../core/jobs/runner.js';
import { recordEventsFrom } from '../events/repository.js';
import type { AnsweredBy, CallAnalysis } from '../telephony/outcomes.js';
import { AUDIT_OF_QUEUED } from './audit.js';
import type { CallDirection, CallStatus } from './schemas.js';

export interface CallsTable {
  id: string;
  tenant_id: string;
  /** Null only for an inbound call declined before an agent could take it (migration 0041). */
  agent_id: string | null;
  agent_version: number | null;
  user_id: string | null;
  from_number: string;
  to_number: string;
  name: string;
  email: string | null;
  context: unknown;
  prompt: string;
  welcome_message: string;
  status: CallStatus;
  created_at: Date;
  started_at: Date | null;
  ended_at: Date | null;
  duration_seconds: number | null;
  failure_reason: string | null;
  updated_at: Date;
  /** When a waiting call may start (calling hours, retry delay); null: as soon as dispatch allows. */
  scheduled_for: Date | null;
  /** Dial attempts made so far. */
  attempts: number;
  billed_minutes: number | null;
  ended_reason: string | null;
  /** The voice engine that took the call (vapi, retell); null for the simulator's and not yet placed calls. */
  engine: string | null;
  engine_call_id: string | null;
  transcript: string | null;
  recording_url: string | null;
  /** human, voicemail or unknown (null: unknown; migration 0039). */
  answered_by: AnsweredBy | null;
  /** The engine's analysis fitted to the version's configured fields; null until reported. */
  analysis: CallAnalysis | null;
  /** Where the call was transferred (E.164). */
  transferred_to: string | null;
  /** The engine's own cost and duration: the operator's view only, never a partner's. */
  engine_cost_usd: number | null;
  engine_duration_seconds: number | null;
  /** outbound (placed by a trigger, the API or a campaign) or inbound (answered on a number; migration 0041). */
  direction: import('kysely').ColumnType<CallDirection, CallDirection | undefined, never>;
}

export interface CallEventsTable {
  id: import('kysely').Generated<number>;
  tenant_id: string;
  call_id: string;
  status: string;
  at: Date;
  detail: unknown;
}

declare module '../core/db/database.js' {
  interface Tables {
    calls: CallsTable;
    call_events: CallEventsTable;
  }
}

export type CallRow = Selectable<CallsTable>;

export interface NewCall {
  id: string;
  tenantId: string;
  agentId: string;
  agentVersion: number;
  userId: string;
  from: string;
  to: string;
  name: string;
  email: string | null;
  context: Record<string, unknown>;
  prompt: string;
  welcomeMessage: string;
  createdAt: Date;
}

export interface DispatchJob {
  queue: string;
  payload: unknown;
  maxAttempts: number;
}

/** The singleton key of a call's dispatch job: how a freed slot finds the job of a waiting call. */
export const dispatchKeyOf = (callId: string) => `dispatch:${callId}`;

/** One call for `insertQueuedCalls`: the call, its dispatch job, and for the webhook its id. */
export interface QueuedCallInsert {
  /** The webhook the call came through (the agent must still be behind it); null for the API. */
  webhookId: string | null;
  call: NewCall;
  job: DispatchJob;
  /** The audit entry (calls/audit.ts), inserted with the call or not at all. */
  audit?: AuditEventsTable | undefined;
}

/**
 * Stores queued calls, each with its first timeline event, its `call.queued` event
 * (recordCallEvents) and its dispatch job, in one statement (so one transaction and one round trip
 * for the whole batch: calls placed together share it, calls/placement.ts), each provided the
 * agent still is at this published version (and, for the webhook, still behind `webhookId`), is not
 * deleted, its owner may still call (not deleted, not blocked, a positive balance), the tenant's
 * wholesale wallet, if it has one, is above zero (docs/wallets.md) and the number is not on the
 * tenant's do-not-call list. Answers, in input order, each call's agent settings, or undefined
 * when that no longer holds for it (a rotation, publish, block, debit or listing that raced the
 * request): nothing of that call is stored. The calls come as one jsonb array, read back by name
 * with `jsonb_to_recordset`.
 */
export async function insertQueuedCalls(
  db: Executor,
  inserts: readonly QueuedCallInsert[],
  /** The telephony engine's name, shown in the `call.queued` event's call. */
  engine: string,
): Promise<({ settings: AgentSettings } | undefined)[]> {
  const input = inserts.map(({ webhookId, call, job, audit }) => ({
    id: call.id,
    webhook_id: webhookId,
    tenant_id: call.tenantId,
    agent_id: call.agentId,
    agent_version: call.agentVersion,
    user_id: call.userId,
    from_number: call.from,
    to_number: call.to,
    name: call.name,
    email: call.email,
    context: call.context,
    prompt: call.prompt,
    welcome_message: call.welcomeMessage,
    created_at: call.createdAt,
    job_queue: job.queue,
    job_payload: job.payload,
    job_max_attempts: job.maxAttempts,
    job_key: dispatchKeyOf(call.id),
    audit: audit ?? null,
  }));
  const rows = await runPrepared<{ id: string; settings: AgentSettings }>(db, {
    name: 'calls_insert_queued',
    text: `
      WITH input AS (
        SELECT * FROM jsonb_to_recordset($1::jsonb) AS i(
          id text, webhook_id text, tenant_id text, agent_id text, agent_version integer, user_id text,
          from_number text, to_number text, name text, email text, context jsonb, prompt text,
          welcome_message text, created_at timestamptz, job_queue text, job_payload jsonb,
          job_max_attempts integer, job_key text, audit jsonb)
      ), allowed AS (
        SELECT i.id, a.tenant_id, a.settings FROM input i
        JOIN agents a ON a.id = i.agent_id AND a.tenant_id = i.tenant_id AND a.user_id = i.user_id
          AND a.published_version = i.agent_version AND a.deleted_at IS NULL
          AND (i.webhook_id IS NULL OR a.webhook_id = i.webhook_id)
        JOIN users u ON u.id = a.user_id AND u.tenant_id = a.tenant_id
        WHERE u.deleted_at IS NULL AND u.status <> 'blocked' AND u.credit_balance_minutes > 0
          AND NOT EXISTS (SELECT 1 FROM tenant_wallets w WHERE w.tenant_id = i.tenant_id AND w.balance_minutes <= 0)
          AND NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = i.tenant_id AND t.suspended_at IS NOT NULL)
          AND NOT EXISTS (SELECT 1 FROM do_not_call d WHERE d.tenant_id = i.tenant_id AND d.phone_number = i.to_number)
      ), queued AS (
        INSERT INTO calls (id, tenant_id, agent_id, agent_version, user_id, from_number, to_number, name, email,
                           context, prompt, welcome_message, status, created_at, updated_at)
        SELECT i.id, allowed.tenant_id, i.agent_id, i.agent_version, i.user_id, i.from_number, i.to_number,
               i.name, i.email, i.context, i.prompt, i.welcome_message, 'queued', i.created_at, i.created_at
        FROM input i JOIN allowed ON allowed.id = i.id
        RETURNING ${CALL_COLUMN_LIST}
      ), queued_event AS (
        INSERT INTO call_events (tenant_id, call_id, status, at, detail)
        SELECT tenant_id, id, 'queued', created_at, '{}'::jsonb FROM queued
        RETURNING id, call_id, status, at, detail
      ), ${recordCallEvents({ calls: 'queued', type: "'call.queued'", newEvents: 'queued_event', engine: '$2::text', earlierTimeline: false })},
      new_job AS (
        SELECT queued.tenant_id, i.job_queue AS queue, i.job_payload AS payload, i.created_at AS run_at,
               i.job_max_attempts AS max_attempts, i.job_key AS singleton_key
        FROM input i JOIN queued ON queued.id = i.id
      ), job AS (
        ${INSERT_NEW_JOBS}
      ), ${AUDIT_OF_QUEUED}
      SELECT queued.id, allowed.settings FROM queued JOIN allowed ON allowed.id = queued.id`,
    values: [JSON.stringify(input), engine],
  });
  const stored = new Map(rows.map((row) => [row.id, { settings: row.settings }]));
  return inserts.map((entry) => stored.get(entry.call.id));
}

/**
 * A queued call that must wait (calling hours): shows when it starts and holds its dispatch job
 * back until then. A no-op for a call that moved on meanwhile.
 */
export async function scheduleQueuedCall(
  db: Executor,
  tenantId: string,
  callId: string,
  scheduledFor: Date,
): Promise<void> {
  await runPrepared(db, {
    name: 'calls_schedule_queued',
    text: `
      WITH scheduled AS (
        UPDATE calls SET scheduled_for = $3 WHERE tenant_id = $1 AND id = $2 AND status = 'queued'
        RETURNING id
      )
      UPDATE jobs SET run_at = $3
      WHERE singleton_key = $4 AND status = 'queued' AND EXISTS (SELECT 1 FROM scheduled)`,
    values: [tenantId, callId, scheduledFor, dispatchKeyOf(callId)],
  });
}

export const CALL_COLUMNS = [
  'id',
  'tenant_id',
  'agent_id',
  'agent_version',
  'user_id',
  'from_number',
  'to_number',
  'name',
  'email',
  'context',
  'prompt',
  'welcome_message',
  'status',
  'created_at',
  'started_at',
  'ended_at',
  'duration_seconds',
  'failure_reason',
  'updated_at',
  'scheduled_for',
  'attempts',
  'billed_minutes',
  'ended_reason',
  'engine',
  'engine_call_id',
  'transcript',
  'recording_url',
  'answered_by',
  'analysis',
  'transferred_to',
  'engine_cost_usd',
  'engine_duration_seconds',
  'direction',
] as const satisfies readonly (keyof CallsTable)[];

/** The columns of a call, in the order of CallsTable (for statements written as SQL text). */
const CALL_COLUMN_LIST = CALL_COLUMNS.join(', ');

/** The analysis of a call not analysed yet, as the API shows it. */
const NO_ANALYSIS = `'{"summary": null, "successful": null, "data": null}'::jsonb`;

/** A timestamptz as the API shows times (toISOString: UTC, milliseconds). */
const isoTime = (expression: string) =>
  `to_char(${expression} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')`;

/**
 * The fields of a call as GET /api/v1/calls lists it (CallListItem, service.ts `toItem`) but
 * `engine`, as `json[b]_build_object` arguments over the row `c`: the event's object (below) and
 * the list's page (list-repository.ts) are built from it in SQL. Each caller adds
 * `'engine', coalesce(c.engine, <the configured engine>)`.
 */
export const CALL_ITEM_PAIRS = `'id', c.id, 'agent_id', c.agent_id, 'agent_version', c.agent_version, 'user_id', c.user_id,
             'from', c.from_number, 'to', c.to_number, 'name', c.name, 'email', c.email,
             'context', coalesce(c.context, '{}'::jsonb), 'prompt', c.prompt, 'welcome_message', c.welcome_message,
             'status', c.status, 'created_at', ${isoTime('c.created_at')},
             'started_at', ${isoTime('c.started_at')}, 'ended_at', ${isoTime('c.ended_at')},
             'duration_seconds', c.duration_seconds, 'failure_reason', c.failure_reason,
             'scheduled_for', ${isoTime('c.scheduled_for')}, 'attempts', c.attempts,
             'billed_minutes', c.billed_minutes, 'ended_reason', c.ended_reason,
             'engine_call_id', c.engine_call_id, 'transcript', c.transcript, 'recording_url', c.recording_url,
             'answered_by', coalesce(c.answered_by, 'unknown'), 'transferred_to', c.transferred_to,
             'analysis', coalesce(c.analysis, ${NO_ANALYSIS}), 'direction', c.direction`;

/**
 * The CTEs that record one call event (`call.queued`, `call.started`, `call.completed`,
 * `call.no_answer`, `call.failed`, `call.analyzed`) per row of `calls`, a CTE of the same statement holding the
 * changed calls as they now are (every column of CALL_COLUMNS), with deliveries to the tenant's
 * subscribed endpoints (events/repository.ts): so the event is written by the statement that
 * changes the status, in its transaction, without a round trip of its own. `type` is an SQL
 * expression over the row `c`.
 *
 * The event's object is the call as `GET /api/v1/calls/{id}` shows it (service.ts `detail`),
 * built here in SQL rather than read back in TypeScript, which would cost the batched statements
 * a round trip per batch. Keep the two in step: the fields of CallDetail, `engine` the bound
 * parameter `engine`, and the timeline the call_events rows the statement sees (those before it)
 * plus those of `newEvents`, the CTE inserting this change's timeline rows (RETURNING id, call_id,
 * status, at, detail): a statement does not see its own inserts.
 */
export function recordCallEvents(options: {
  calls: string;
  type: string;
  newEvents: string;
  engine: string;
  /** False for calls the statement itself creates: they have no earlier timeline to read. */
  earlierTimeline?: boolean;
  /** Names the CTEs (`<prefix>event`, …): a statement recording two kinds of call events gives each its own. */
  prefix?: string;
}): string {
  const { calls, type, newEvents, engine } = options;
  const prefix = options.prefix ?? 'call_';
  const earlier =
    options.earlierTimeline === false
      ? ''
      : `SELECT id, status, at, detail FROM call_events WHERE tenant_id = c.tenant_id AND call_id = c.id
                     UNION ALL
                     `;
  return `
  ${prefix}event AS (
    SELECT c.tenant_id, ${type} AS type, c.updated_at AS created_at,
           jsonb_build_object('object', jsonb_build_object(
             ${CALL_ITEM_PAIRS}, 'engine', coalesce(c.engine, ${engine}),
             'events', coalesce((
               SELECT jsonb_agg(jsonb_build_object('status', e.status, 'at', ${isoTime('e.at')},
                                                   'detail', coalesce(e.detail, '{}'::jsonb)) ORDER BY e.id)
               FROM (${earlier}SELECT id, status, at, detail FROM ${newEvents} WHERE call_id = c.id) e), '[]'::jsonb))) AS data
    FROM ${calls} c
  ), ${recordEventsFrom(`${prefix}event`, prefix)}`;
}

export async function findCall(db: Executor, tenantId: string, callId: string): Promise<CallRow | undefined> {
  const rows = await runPrepared<CallRow>(db, {
    name: 'calls_find',
    text: `SELECT ${CALL_COLUMN_LIST} FROM calls WHERE tenant_id = $1 AND id = $2`,
    values: [tenantId, callId],
  });
  return rows[0];
}

/** Operator API only: the tenant of a call. */
export async function findCallTenant(db: Executor, callId: string): Promise<string | undefined> {
  const row = await db.selectFrom('calls').select('tenant_id').where('id', '=', callId).executeTakeFirst();
  return row?.tenant_id;
}

export interface CallEventRow {
  status: string;
  at: Date;
  detail: unknown;
}

/** A call's timeline, oldest first. */
export async function listCallEvents(
  db: Executor,
  tenantId: string,
  callId: string,
): Promise<CallEventRow[]> {
  return db
    .selectFrom('call_events')
    .select(['status', 'at', 'detail'])
    .where('call_id', '=', callId)
    .where('tenant_id', '=', tenantId)
    .orderBy('id')
    .execute();
}
