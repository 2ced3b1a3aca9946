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

const qualifiedCallColumns = sql.raw(CALL_COLUMNS.map((column) => `c.${column}`).join(', '));

const startDialingCompiled = compileOnce(3, (db, tenantIds: string[], callIds: string[], ats: Date[]) =>
  sql<CallRow>`
    UPDATE calls c SET status = 'dialing', updated_at = i.at
    FROM unnest(${tenantIds}::text[], ${callIds}::text[], ${ats}::timestamptz[]) AS i(tenant_id, id, at)
    WHERE c.tenant_id = i.tenant_id AND c.id = i.id AND c.status = 'queued'
    RETURNING ${qualifiedCallColumns}`.compile(db),
);

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
  const rows = await startDialingCompiled(
    db,
    steps.map((s) => s.tenantId),
    steps.map((s) => s.callId),
    steps.map((s) => s.at),
  );
  const byId = new Map(rows.map((row) => [row.id, row]));
  // A call named twice in one batch moved once: only its first step answers the row.
  return steps.map((s) => {
    const row = byId.get(s.callId);
    byId.delete(s.callId);
    return row?.tenant_id === s.tenantId ? row : undefined;
  });
}

const markInProgressCompiled = compileOnce(
  4,
  (db, tenantIds: string[], callIds: string[], startedAts: Date[], ats: Date[]) =>
    sql<{ id: string }>`
    UPDATE calls c SET status = 'in_progress', started_at = i.started_at, updated_at = i.at
    FROM unnest(${tenantIds}::text[], ${callIds}::text[], ${startedAts}::timestamptz[], ${ats}::timestamptz[])
      AS i(tenant_id, id, started_at, at)
    WHERE c.tenant_id = i.tenant_id AND c.id = i.id AND c.status = 'dialing'
    RETURNING c.id`.compile(db),
);

/** dialing → in_progress for a batch of calls, each answered at its `startedAt`. */
export async function markInProgress(
  db: Executor,
  steps: (CallStep & { startedAt: Date })[],
): Promise<boolean[]> {
  const rows = await markInProgressCompiled(
    db,
    steps.map((s) => s.tenantId),
    steps.map((s) => s.callId),
    steps.map((s) => s.startedAt),
    steps.map((s) => s.at),
  );
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

const finishCallsAndDebitCompiled = compileOnce(
  9,
  (
    db,
    tenantIds: string[],
    callIds: string[],
    statuses: string[],
    endedAts: Date[],
    durations: (number | null)[],
    failureReasons: (string | null)[],
    ats: Date[],
    minutes: number[],
    ledgerIds: string[],
  ) =>
    sql<{ id: string }>`
    WITH input AS (
      SELECT * FROM unnest(${tenantIds}::text[], ${callIds}::text[], ${statuses}::text[],
                           ${endedAts}::timestamptz[], ${durations}::integer[], ${failureReasons}::text[],
                           ${ats}::timestamptz[], ${minutes}::integer[], ${ledgerIds}::text[])
        AS i(tenant_id, id, status, ended_at, duration_seconds, failure_reason, at, minutes, ledger_id)
    ), ended AS (
      UPDATE calls c SET status = i.status, ended_at = i.ended_at, duration_seconds = i.duration_seconds,
             failure_reason = i.failure_reason, updated_at = i.at
      FROM input i
      WHERE c.tenant_id = i.tenant_id AND c.id = i.id AND c.status IN ('queued', 'dialing', 'in_progress')
      RETURNING c.id, c.tenant_id, c.user_id, i.minutes, i.ledger_id, i.at
    ), debit AS (
      INSERT INTO credit_ledger (id, tenant_id, user_id, minutes, reason, reference, created_at)
      SELECT ledger_id, tenant_id, user_id, -minutes, 'call', 'call:' || id, at
      FROM ended WHERE minutes > 0
      ON CONFLICT (reference) DO NOTHING
      RETURNING tenant_id, user_id, minutes
    ), balance AS (
      UPDATE users u SET credit_balance_minutes = u.credit_balance_minutes + owed.minutes
      FROM (SELECT tenant_id, user_id, sum(minutes)::integer AS minutes FROM debit GROUP BY tenant_id, user_id) owed
      WHERE u.tenant_id = owed.tenant_id AND u.id = owed.user_id
      RETURNING u.id
    )
    SELECT ended.id FROM ended`.compile(db),
);

/**
 * Moves a batch of calls that are not final yet into their final states and, in the same
 * statement (one atomic round trip instead of a five-step transaction per call), debits each
 * completed call's minutes from its owner: the ledger entry and balance change that
 * credits/repository.ts addCreditEntry makes, with the reference `call:<id>` so a debit happens at
 * most once; an owner's debits in one batch change the balance once, by their sum. For each
 * finish, false when the call was already final: nothing changes.
 */
export async function finishCallsAndDebit(db: Executor, finishes: CallFinish[]): Promise<boolean[]> {
  const rows = await finishCallsAndDebitCompiled(
    db,
    finishes.map((f) => f.tenantId),
    finishes.map((f) => f.callId),
    finishes.map((f) => f.ending.status),
    finishes.map((f) => f.ending.endedAt),
    finishes.map((f) => f.ending.durationSeconds ?? null),
    finishes.map((f) => f.ending.failureReason ?? null),
    finishes.map((f) => f.at),
    finishes.map((f) => f.minutes),
    finishes.map((f) => f.ledgerId),
  );
  const ended = new Set(rows.map((row) => row.id));
  return finishes.map((f) => ended.delete(f.callId));
}
