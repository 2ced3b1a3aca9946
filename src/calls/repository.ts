import { type Selectable, sql } from 'kysely';
import { type Executor, runPrepared } from '../core/db.js';
import { INSERT_NEW_JOBS } from '../core/jobs.js';
import { APPEND_CREDIT_ENTRIES } from '../credits/repository.js';
import type { CallStatus } from './schemas.js';

export interface CallsTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  agent_version: number;
  user_id: string;
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
}

declare module '../core/db.js' {
  interface Tables {
    calls: CallsTable;
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

/**
 * Stores a queued call and its dispatch job in one statement (so one transaction and one round
 * trip), provided the webhook still names this agent at this published version and the owner
 * may still call: not deleted, not blocked, a positive balance. Returns false when that no
 * longer holds (a rotation, publish, block or debit that raced the request): nothing is stored.
 * The call and its job come as one jsonb argument, read back by name with `jsonb_to_record`.
 */
export async function insertQueuedCall(
  db: Executor,
  webhookId: string,
  call: NewCall,
  job: DispatchJob,
): Promise<boolean> {
  const input = {
    id: call.id,
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
  };
  const rows = await runPrepared<{ id: number }>(db, {
    name: 'calls_insert_queued',
    text: `
      WITH input AS (
        SELECT * FROM jsonb_to_record($2::jsonb) AS i(
          id text, tenant_id text, agent_id text, agent_version integer, user_id text, from_number text,
          to_number text, name text, email text, context jsonb, prompt text, welcome_message text,
          created_at timestamptz, job_queue text, job_payload jsonb, job_max_attempts integer)
      ), allowed AS (
        SELECT a.tenant_id FROM input i
        JOIN agents a ON a.webhook_id = $1 AND a.id = i.agent_id AND a.tenant_id = i.tenant_id
          AND a.user_id = i.user_id AND a.published_version = i.agent_version AND a.deleted_at IS NULL
        JOIN users u ON u.id = a.user_id AND u.tenant_id = a.tenant_id
        WHERE u.deleted_at IS NULL AND u.status <> 'blocked' AND u.credit_balance_minutes > 0
      ), queued AS (
        INSERT INTO calls (id, tenant_id, agent_id, agent_version, user_id, from_number, to_number, name, email,
                           context, prompt, welcome_message, status, created_at, updated_at)
        SELECT i.id, allowed.tenant_id, i.agent_id, i.agent_version, i.user_id, i.from_number, i.to_number,
               i.name, i.email, i.context, i.prompt, i.welcome_message, 'queued', i.created_at, i.created_at
        FROM input i, allowed
        RETURNING tenant_id
      ), new_job AS (
        SELECT queued.tenant_id, i.job_queue AS queue, i.job_payload AS payload, i.created_at AS run_at,
               i.job_max_attempts AS max_attempts, NULL::text AS singleton_key
        FROM input i, queued
      )
      ${INSERT_NEW_JOBS}
      RETURNING id`,
    values: [webhookId, JSON.stringify(input)],
  });
  return rows.length === 1;
}

const CALL_COLUMNS = [
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
] as const satisfies readonly (keyof CallsTable)[];

/** The columns of a call, in the order of CallsTable (for statements written as SQL text). */
const CALL_COLUMN_LIST = CALL_COLUMNS.join(', ');

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

export interface CallFilter {
  /** Operator lists may span tenants; partner-facing reads always pass one. */
  tenantId?: string;
  agentId?: string;
  status?: CallStatus;
}

function filteredCalls(db: Executor, filter: CallFilter) {
  let query = db.selectFrom('calls');
  if (filter.tenantId !== undefined) query = query.where('tenant_id', '=', filter.tenantId);
  if (filter.agentId !== undefined) query = query.where('agent_id', '=', filter.agentId);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  return query;
}

/** Newest first, ties broken by id. */
export async function listCalls(db: Executor, filter: CallFilter, limit: number, offset: number) {
  return filteredCalls(db, filter)
    .selectAll()
    .select(sql<number>`count(*) over ()`.as('total'))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function countCalls(db: Executor, filter: CallFilter): Promise<number> {
  const row = await filteredCalls(db, filter)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

const QUALIFIED_CALL_COLUMN_LIST = CALL_COLUMNS.map((column) => `c.${column}`).join(', ');

export interface CallStep {
  tenantId: string;
  callId: string;
  at: Date;
}

/**
 * queued → dialing for a batch of calls in one statement, answering each call as it now is, or
 * undefined for a call that was not queued (in the order of `steps`).
 */
export async function startDialing(db: Executor, steps: CallStep[]): Promise<(CallRow | undefined)[]> {
  const rows = await runPrepared<CallRow>(db, {
    name: 'calls_start_dialing',
    text: `
      UPDATE calls c SET status = 'dialing', updated_at = i.at
      FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS i(tenant_id, id, at)
      WHERE c.tenant_id = i.tenant_id AND c.id = i.id AND c.status = 'queued'
      RETURNING ${QUALIFIED_CALL_COLUMN_LIST}`,
    values: [steps.map((s) => s.tenantId), steps.map((s) => s.callId), steps.map((s) => s.at)],
  });
  const byId = new Map(rows.map((row) => [row.id, row]));
  // A call named twice in one batch moved once: only its first step answers the row.
  return steps.map((s) => {
    const row = byId.get(s.callId);
    byId.delete(s.callId);
    return row?.tenant_id === s.tenantId ? row : undefined;
  });
}

/** dialing → in_progress for a batch of calls, each answered at its `startedAt`. */
export async function markInProgress(
  db: Executor,
  steps: (CallStep & { startedAt: Date })[],
): Promise<boolean[]> {
  const rows = await runPrepared<{ id: string }>(db, {
    name: 'calls_mark_in_progress',
    text: `
      UPDATE calls c SET status = 'in_progress', started_at = i.started_at, updated_at = i.at
      FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[]) AS i(tenant_id, id, started_at, at)
      WHERE c.tenant_id = i.tenant_id AND c.id = i.id AND c.status = 'dialing'
      RETURNING c.id`,
    values: [
      steps.map((s) => s.tenantId),
      steps.map((s) => s.callId),
      steps.map((s) => s.startedAt),
      steps.map((s) => s.at),
    ],
  });
  const moved = new Set(rows.map((row) => row.id));
  return steps.map((s) => moved.delete(s.callId));
}

export interface CallEnding {
  status: 'completed' | 'no_answer' | 'failed';
  endedAt: Date;
  durationSeconds?: number;
  failureReason?: string;
}

export interface CallFinish extends CallStep {
  ending: CallEnding;
  /** Minutes to debit from the call's owner (0: none). */
  minutes: number;
  ledgerId: string;
}

/**
 * Moves a batch of calls that are not final yet into their final states and, in the same
 * statement (one atomic round trip instead of a five-step transaction per call), debits each
 * completed call's minutes from its owner through APPEND_CREDIT_ENTRIES (credits/repository.ts),
 * with the reference `call:<id>` so a debit happens at most once; an owner's debits in one batch
 * change the balance once, by their sum. For each
 * finish, false when the call was already final: nothing changes.
 */
export async function finishCallsAndDebit(db: Executor, finishes: CallFinish[]): Promise<boolean[]> {
  const rows = await runPrepared<{ id: string }>(db, {
    name: 'calls_finish_and_debit',
    text: `
      WITH input AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::integer[], $6::text[],
                             $7::timestamptz[], $8::integer[], $9::text[])
          AS i(tenant_id, id, status, ended_at, duration_seconds, failure_reason, at, minutes, ledger_id)
      ), ended AS (
        UPDATE calls c SET status = i.status, ended_at = i.ended_at, duration_seconds = i.duration_seconds,
               failure_reason = i.failure_reason, updated_at = i.at
        FROM input i
        WHERE c.tenant_id = i.tenant_id AND c.id = i.id AND c.status IN ('queued', 'dialing', 'in_progress')
        RETURNING c.id, c.tenant_id, c.user_id, i.minutes, i.ledger_id, i.at
      ), credit_entry AS (
        SELECT ledger_id AS id, tenant_id, user_id, -minutes AS minutes, 'call' AS reason,
               'call:' || id AS reference, at AS created_at
        FROM ended WHERE minutes > 0
      ), ${APPEND_CREDIT_ENTRIES}
      SELECT ended.id FROM ended`,
    values: [
      finishes.map((f) => f.tenantId),
      finishes.map((f) => f.callId),
      finishes.map((f) => f.ending.status),
      finishes.map((f) => f.ending.endedAt),
      finishes.map((f) => f.ending.durationSeconds ?? null),
      finishes.map((f) => f.ending.failureReason ?? null),
      finishes.map((f) => f.at),
      finishes.map((f) => f.minutes),
      finishes.map((f) => f.ledgerId),
    ],
  });
  const ended = new Set(rows.map((row) => row.id));
  return finishes.map((f) => ended.delete(f.callId));
}
