import { type Selectable, sql } from 'kysely';
import { compileOnce, type Executor } from '../core/db.js';
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
 *
 * The job row is the same one core/jobs.ts enqueueJob writes; it is inlined here to keep the
 * webhook's hot path to a single statement.
 */
const insertQueuedCallCompiled = compileOnce(
  17,
  (
    db,
    webhookId: string,
    callId: string,
    tenantId: string,
    agentId: string,
    agentVersion: number,
    userId: string,
    from: string,
    to: string,
    name: string,
    email: string | null,
    contextJson: string,
    prompt: string,
    welcomeMessage: string,
    createdAt: Date,
    jobQueue: string,
    jobPayloadJson: string,
    jobMaxAttempts: number,
  ) =>
    sql<{ id: number }>`
    WITH allowed AS (
      SELECT a.tenant_id FROM agents a
      JOIN users u ON u.id = a.user_id AND u.tenant_id = a.tenant_id
      WHERE a.webhook_id = ${webhookId} AND a.id = ${agentId} AND a.tenant_id = ${tenantId}
        AND a.user_id = ${userId} AND a.published_version = ${agentVersion}::integer
        AND u.deleted_at IS NULL AND u.status <> 'blocked' AND u.credit_balance_minutes > 0
    ), queued AS (
      INSERT INTO calls (id, tenant_id, agent_id, agent_version, user_id, from_number, to_number, name, email,
                         context, prompt, welcome_message, status, created_at, updated_at)
      SELECT ${callId}, allowed.tenant_id, ${agentId}, ${agentVersion}::integer, ${userId},
             ${from}, ${to}, ${name}, ${email}::text, ${contextJson}::jsonb,
             ${prompt}, ${welcomeMessage}, 'queued', ${createdAt}::timestamptz, ${createdAt}::timestamptz
      FROM allowed
      RETURNING tenant_id
    )
    INSERT INTO jobs (tenant_id, queue, payload, status, run_at, max_attempts, created_at)
    SELECT queued.tenant_id, ${jobQueue}, ${jobPayloadJson}::jsonb, 'queued',
           ${createdAt}::timestamptz, ${jobMaxAttempts}::integer, ${createdAt}::timestamptz
    FROM queued
    RETURNING id`.compile(db),
);

export async function insertQueuedCall(
  db: Executor,
  webhookId: string,
  call: NewCall,
  job: DispatchJob,
): Promise<boolean> {
  const rows = await insertQueuedCallCompiled(
    db,
    webhookId,
    call.id,
    call.tenantId,
    call.agentId,
    call.agentVersion,
    call.userId,
    call.from,
    call.to,
    call.name,
    call.email,
    JSON.stringify(call.context),
    call.prompt,
    call.welcomeMessage,
    call.createdAt,
    job.queue,
    JSON.stringify(job.payload),
    job.maxAttempts,
  );
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

const findCallCompiled = compileOnce(2, (db, tenantId: string, callId: string) =>
  db
    .selectFrom('calls')
    .select(CALL_COLUMNS)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', callId)
    .compile(),
);

export async function findCall(db: Executor, tenantId: string, callId: string): Promise<CallRow | undefined> {
  return (await findCallCompiled(db, tenantId, callId))[0];
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

const startDialingCompiled = compileOnce(3, (db, tenantId: string, callId: string, at: Date) =>
  db
    .updateTable('calls')
    .set({ status: 'dialing', updated_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', callId)
    .where('status', '=', 'queued')
    .returning(CALL_COLUMNS)
    .compile(),
);

/** queued → dialing, answering the call as it now is; undefined when it was not queued. */
export async function startDialing(
  db: Executor,
  tenantId: string,
  callId: string,
  at: Date,
): Promise<CallRow | undefined> {
  return (await startDialingCompiled(db, tenantId, callId, at))[0];
}

const markInProgressCompiled = compileOnce(
  4,
  (db, tenantId: string, callId: string, startedAt: Date, at: Date) =>
    db
      .updateTable('calls')
      .set({ status: 'in_progress', started_at: startedAt, updated_at: at })
      .where('tenant_id', '=', tenantId)
      .where('id', '=', callId)
      .where('status', '=', 'dialing')
      .returning('id')
      .compile(),
);

/** dialing → in_progress, answered at `startedAt`. */
export async function markInProgress(
  db: Executor,
  tenantId: string,
  callId: string,
  startedAt: Date,
  at: Date,
): Promise<boolean> {
  return (await markInProgressCompiled(db, tenantId, callId, startedAt, at)).length === 1;
}

export interface CallEnding {
  status: 'completed' | 'no_answer' | 'failed';
  endedAt: Date;
  durationSeconds?: number;
  failureReason?: string;
}

const finishCallAndDebitCompiled = compileOnce(
  10,
  (
    db,
    tenantId: string,
    callId: string,
    status: CallEnding['status'],
    endedAt: Date,
    durationSeconds: number | null,
    failureReason: string | null,
    at: Date,
    minutes: number,
    ledgerId: string,
    reference: string,
  ) =>
    sql<{ id: string }>`
    WITH ended AS (
      UPDATE calls SET status = ${status}, ended_at = ${endedAt}::timestamptz,
             duration_seconds = ${durationSeconds}::integer, failure_reason = ${failureReason}::text,
             updated_at = ${at}::timestamptz
      WHERE tenant_id = ${tenantId} AND id = ${callId} AND status IN ('queued', 'dialing', 'in_progress')
      RETURNING id, user_id
    ), debit AS (
      INSERT INTO credit_ledger (id, tenant_id, user_id, minutes, reason, reference, created_at)
      SELECT ${ledgerId}, ${tenantId}, ended.user_id, -${minutes}::integer, 'call', ${reference}, ${at}::timestamptz
      FROM ended WHERE ${minutes}::integer > 0
      ON CONFLICT (reference) DO NOTHING
      RETURNING user_id, minutes
    ), balance AS (
      UPDATE users SET credit_balance_minutes = credit_balance_minutes + debit.minutes
      FROM debit WHERE users.tenant_id = ${tenantId} AND users.id = debit.user_id
      RETURNING users.id
    )
    SELECT ended.id FROM ended`.compile(db),
);

/**
 * Moves a call that is not final yet into its final state and, in the same statement (one
 * atomic round trip instead of a five-step transaction on the dispatch path), debits `minutes`
 * from its owner: the ledger entry and balance change that credits/repository.ts addCreditEntry
 * makes, with the reference `call:<id>` so a debit happens at most once. False when the call
 * was already final: nothing changes.
 */
export async function finishCallAndDebit(
  db: Executor,
  tenantId: string,
  callId: string,
  ending: CallEnding,
  minutes: number,
  ledgerId: string,
  at: Date,
): Promise<boolean> {
  const rows = await finishCallAndDebitCompiled(
    db,
    tenantId,
    callId,
    ending.status,
    ending.endedAt,
    ending.durationSeconds ?? null,
    ending.failureReason ?? null,
    at,
    minutes,
    ledgerId,
    `call:${callId}`,
  );
  return rows.length === 1;
}
