/**
 * The SQL of the dispatch pipeline (pipeline.ts): each status change of a call together with its
 * timeline event (call_events), in one statement per batch of calls.
 *
 * Concurrency caps (an agent's `settings.max_concurrent_calls`, a tenant's `max_concurrent_calls`)
 * are decided under row locks: whoever starts a capped call locks its agent (then its tenant)
 * row, counts the calls dialling or talking and either starts the call or parks its job; whoever
 * ends a call takes the same locks, in the same order (agents by id, then tenants by id), and
 * wakes the oldest waiting calls in the same transaction. So a wake can never fall between a
 * count and a park: either the park is committed and the wake moves it, or the count sees the
 * freed slot.
 *
 * The batch statements compare a call's status with a column (the status the statement read, or
 * the step's `from_status`), never with a literal, and not with `=` to a column that is compared
 * with a literal (the planner would carry the literal over): `status = 'queued'` lets it reach the
 * batch's calls through the partial index of every queued call (migration 0014) and filter them,
 * which behind a backlog of thousands costs thousands of rows per statement (dispatch fell from
 * ~600 to ~100 calls/s behind 17,000 queued calls, bench/README.md). A column proves nothing about
 * the partial indexes' predicates, so the primary key is the way in.
 */
import type { AgentSettings } from '../agents/settings.js';
import { type Db, type Executor, runPrepared } from '../core/db/database.js';
import { newId } from '../core/ids.js';
import { APPEND_CREDIT_ENTRIES } from '../credits/repository.js';
import type { AnsweredBy, CallAnalysis, EngineUsage } from '../telephony/outcomes.js';
import { APPEND_WALLET_CALL_DEBITS } from '../wallets/repository.js';
import { TELL_CAMPAIGNS_OF_ENDED_CALLS } from './campaign-ends.js';
import { CALL_COLUMNS, type CallRow, recordCallEvents } from './repository.js';

export const QUALIFIED_CALL_COLUMN_LIST = CALL_COLUMNS.map((column) => `c.${column}`).join(', ');
/** The columns dialing does not change, read from the statement's snapshot of the call. */
const UNCHANGED_COLUMN_LIST = CALL_COLUMNS.filter(
  (column) => column !== 'status' && column !== 'attempts' && column !== 'scheduled_for',
)
  .map((column) => `g.${column}`)
  .join(', ');

export interface CallStep {
  tenantId: string;
  callId: string;
  at: Date;
}

/** A call as dispatch finds it, with what decides whether it may start now. */
export interface DispatchRow extends CallRow {
  settings: AgentSettings;
  /** The tenant-wide cap; null: none. */
  tenant_cap: number | null;
  /** A queued call whose number is on the tenant's do-not-call list: never moved, to be ended. */
  listed: boolean;
  /**
   * The tenant is suspended: the unforced step never moves its queued call, which waits until
   * then (15 minutes on), or until the lift wakes it (wakeTenantDispatches); null otherwise.
   */
  held_until: Date | null;
  /** This statement moved it queued → dialing. */
  moved: boolean;
  /**
   * This statement also claimed the attempt's request to the engine (engine-dials.ts): the claim
   * commits with the move to dialing, so the first run sends without a claim statement of its own.
   */
  claimed: boolean;
}

/**
 * Wakes the dispatch jobs of the oldest waiting calls, one per slot freed, for capped agents and
 * tenants only: a statement defines `freed` (agent_id, tenant_id: one row per freed slot) before
 * it. A woken call that still cannot start (the other cap is full) parks again; a slot lost that
 * way is found by the parked job's backstop (pipeline.ts).
 */
export const wakeWaiting = (now: string) => `
  waiting AS (
    SELECT w.id FROM (SELECT agent_id, count(*) AS n FROM freed GROUP BY agent_id) f
    JOIN agents a ON a.id = f.agent_id AND a.settings -> 'max_concurrent_calls' IS NOT NULL
    CROSS JOIN LATERAL (
      SELECT q.id FROM calls q
      WHERE q.agent_id = f.agent_id AND q.status = 'queued' AND (q.scheduled_for IS NULL OR q.scheduled_for <= ${now})
      ORDER BY q.created_at, q.id LIMIT f.n) w
    UNION
    SELECT w.id FROM (SELECT tenant_id, count(*) AS n FROM freed GROUP BY tenant_id) f
    JOIN tenants t ON t.id = f.tenant_id AND t.max_concurrent_calls IS NOT NULL
    CROSS JOIN LATERAL (
      SELECT q.id FROM calls q
      WHERE q.tenant_id = f.tenant_id AND q.status = 'queued' AND (q.scheduled_for IS NULL OR q.scheduled_for <= ${now})
      ORDER BY q.created_at, q.id LIMIT f.n) w
  ), woken AS (
    UPDATE jobs SET run_at = ${now}
    WHERE singleton_key IN (SELECT 'dispatch:' || id FROM waiting) AND status = 'queued' AND run_at > ${now}
    RETURNING id
  )`;

/**
 * queued → dialing for a batch of calls in one statement, each moved call's request to `engine`
 * claimed in `engine_dials` in the same statement (engine-dials.ts: the claim says the request
 * is sent or about to be; a run that crashes before sending leaves a claim its retry resolves by
 * asking the engine), and each call as it now is with its agent's settings and its tenant's cap. Unless `force`, only calls with nothing to wait for move
 * (no cap, no calling hours, not scheduled later, the tenant not suspended); the others come back unmoved for the pipeline
 * to decide (under locks, or in the agent's time zone) and start with `force`. A number on the
 * tenant's do-not-call list never moves, forced or not (`listed`): the list is read by the
 * statement that starts the dial, so a number listed while its call waited is never called.
 */
export async function startDialing(
  db: Executor,
  steps: CallStep[],
  engine: string,
  force = false,
): Promise<(DispatchRow | undefined)[]> {
  const rows = await runPrepared<DispatchRow>(db, {
    name: 'calls_start_dialing',
    text: `
      WITH input AS (
        SELECT DISTINCT ON (id) * FROM unnest($1::text[], $2::text[], $3::timestamptz[]) AS i(tenant_id, id, at)
      ), target AS (
        SELECT ${QUALIFIED_CALL_COLUMN_LIST}, a.settings, t.max_concurrent_calls AS tenant_cap, i.at AS step_at,
               t.suspended_at IS NOT NULL AS suspended,
               (c.status = 'queued' AND EXISTS (SELECT 1 FROM do_not_call d
                                                WHERE d.tenant_id = c.tenant_id AND d.phone_number = c.to_number)) AS listed
        FROM input i
        JOIN calls c ON c.tenant_id = i.tenant_id AND c.id = i.id
        JOIN agents a ON a.id = c.agent_id
        JOIN tenants t ON t.id = c.tenant_id
      ), moved AS (
        UPDATE calls c SET status = 'dialing', attempts = c.attempts + 1, scheduled_for = NULL, updated_at = g.step_at
        FROM target g
        WHERE c.tenant_id = g.tenant_id AND c.id = g.id AND g.status = 'queued' AND c.status IS NOT DISTINCT FROM g.status
          AND NOT g.listed AND ($4::boolean OR (g.settings -> 'max_concurrent_calls' IS NULL AND g.settings -> 'calling_hours' IS NULL
               AND g.tenant_cap IS NULL AND NOT g.suspended AND (g.scheduled_for IS NULL OR g.scheduled_for <= g.step_at)))
        RETURNING c.id, c.tenant_id, c.attempts, c.updated_at
      ), dialing_event AS (
        INSERT INTO call_events (tenant_id, call_id, status, at, detail)
        SELECT tenant_id, id, 'dialing', updated_at, jsonb_build_object('attempt', attempts) FROM moved
      ), claimed AS (
        INSERT INTO engine_dials (call_id, attempt, tenant_id, engine, requested_at)
        SELECT id, attempts, tenant_id, $5::text, updated_at FROM moved
        ON CONFLICT (call_id, attempt) DO NOTHING
        RETURNING call_id
      )
      SELECT ${UNCHANGED_COLUMN_LIST}, g.settings, g.tenant_cap, g.listed, m.id IS NOT NULL AS moved,
             CASE WHEN g.suspended THEN g.step_at + interval '15 minutes' END AS held_until,
             cl.call_id IS NOT NULL AS claimed,
             CASE WHEN m.id IS NULL THEN g.status ELSE 'dialing' END AS status,
             coalesce(m.attempts, g.attempts) AS attempts,
             CASE WHEN m.id IS NULL THEN g.scheduled_for END AS scheduled_for
      FROM target g LEFT JOIN moved m ON m.id = g.id LEFT JOIN claimed cl ON cl.call_id = g.id`,
    values: [steps.map((s) => s.tenantId), steps.map((s) => s.callId), steps.map((s) => s.at), force, engine],
  });
  const byId = new Map(rows.map((row) => [row.id, row]));
  // A call named twice in one batch moved (and claimed) once: only its first step answers so.
  return steps.map((s) => {
    const row = byId.get(s.callId);
    if (row?.tenant_id !== s.tenantId) return undefined;
    byId.set(s.callId, { ...row, moved: false, claimed: false });
    return row;
  });
}

/**
 * The cap locks of the agents and tenants of `callIds`, in the one lock order (see the header), in
 * one statement: each sub-select is a sub-plan run when the select list needs it, and the list is
 * evaluated left to right, so the agents are locked before the tenants.
 */
export async function lockCapsOfCalls(tx: Executor, callIds: string[]): Promise<void> {
  await runPrepared(tx, {
    name: 'calls_lock_caps_of_calls',
    text: `
      SELECT (SELECT count(*) FROM (
                SELECT a.id FROM agents a
                WHERE a.id IN (SELECT agent_id FROM calls WHERE id = ANY($1::text[]))
                  AND a.settings -> 'max_concurrent_calls' IS NOT NULL
                ORDER BY a.id FOR UPDATE) agent_lock) AS agents,
             (SELECT count(*) FROM (
                SELECT t.id FROM tenants t
                WHERE t.id IN (SELECT tenant_id FROM calls WHERE id = ANY($1::text[]))
                  AND t.max_concurrent_calls IS NOT NULL
                ORDER BY t.id FOR UPDATE) tenant_lock) AS tenants`,
    values: [callIds],
  });
}

/** dialing → in_progress for a batch of calls, each answered at its `startedAt`. */
export async function markInProgress(
  db: Executor,
  steps: (CallStep & { startedAt: Date })[],
  engine: string,
): Promise<boolean[]> {
  const rows = await runPrepared<{ id: string }>(db, {
    name: 'calls_mark_in_progress',
    text: `
      WITH moved AS (
        UPDATE calls c SET status = 'in_progress', started_at = i.started_at, updated_at = i.at
        FROM unnest($1::text[], $2::text[], $3::timestamptz[], $4::timestamptz[], $6::text[])
               AS i(tenant_id, id, started_at, at, from_status)
        WHERE c.tenant_id = i.tenant_id AND c.id = i.id AND c.status = i.from_status
        RETURNING ${QUALIFIED_CALL_COLUMN_LIST}
      ), answered_event AS (
        INSERT INTO call_events (tenant_id, call_id, status, at, detail)
        SELECT tenant_id, id, 'in_progress', started_at, '{}'::jsonb FROM moved
        RETURNING id, call_id, status, at, detail
      ), ${recordCallEvents({ calls: 'moved', type: "'call.started'", newEvents: 'answered_event', engine: '$5::text' })}
      SELECT id FROM moved`,
    values: [
      steps.map((s) => s.tenantId),
      steps.map((s) => s.callId),
      steps.map((s) => s.startedAt),
      steps.map((s) => s.at),
      engine,
      steps.map(() => 'dialing'),
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
  /** The engine's own reason, verbatim; the status when absent. */
  endedReason?: string;
  /** What a voice engine reported with the end (the call keeps earlier values when absent). */
  transcript?: string;
  recordingUrl?: string;
  /** Who answered (unknown when absent), where the call was transferred, the engine's own usage. */
  answeredBy?: AnsweredBy;
  transferredTo?: string;
  usage?: EngineUsage;
}

export interface CallFinish extends CallStep {
  ending: CallEnding;
  /** Minutes to debit from the call's owner (0: none). */
  minutes: number;
  ledgerId: string;
  /**
   * The call's analysis, when the carrier gave it with the end (the simulator's): stored by the
   * same statement with `call.analyzed` stamped `at` (after the finish's own `at`, so the event
   * follows the end's), unless the call already has one.
   */
  analysis?: { value: CallAnalysis; at: Date };
}

/**
 * The ended calls as their end event shows them: stamped with the finish's time, and without the
 * analysis this statement stored (that one is `call.analyzed`'s, which follows).
 */
const ENDED_AS_ENDING = CALL_COLUMNS.map((column) =>
  column === 'updated_at'
    ? 'at AS updated_at'
    : column === 'analysis'
      ? 'CASE WHEN analyzed_now THEN NULL ELSE analysis END AS analysis'
      : column,
).join(', ');

/**
 * Moves a batch of calls that are not final yet into their final states with their
 * `ended_reason`, `billed_minutes` and timeline event (and the carrier's analysis given with the
 * end, with `call.analyzed`) and, in the same statement, debits each
 * completed call's minutes from its owner through APPEND_CREDIT_ENTRIES (credits/repository.ts),
 * with the reference `call:<id>` so a debit happens at most once (an owner's debits in one batch
 * change the balance once, by their sum), debits the tenant's wholesale wallet the same minutes
 * when it has one (APPEND_WALLET_CALL_DEBITS, wallets/repository.ts), wakes the waiting calls
 * the ended ones make room for, and tells each campaign whose call ended (campaign-ends.ts). For
 * each finish, false when the call was already final: nothing changes.
 */
export async function finishCallsAndDebit(
  db: Db,
  finishes: CallFinish[],
  engine: string,
): Promise<boolean[]> {
  return db.transaction().execute(async (tx) => {
    await lockCapsOfCalls(
      tx,
      finishes.map((f) => f.callId),
    );
    return finishLocked(tx, finishes, engine);
  });
}

/**
 * dialing → in_progress and then into a final state, for calls whose carrier already reported
 * the end when it was first asked (a call over within the answer): markInProgress and
 * finishCallsAndDebit in one transaction, so one commit, with both timeline events and both
 * `call.*` events. For each answer, whether its finish ended the call.
 */
export async function answerAndFinishCalls(
  db: Db,
  answers: (CallStep & { startedAt: Date })[],
  finishes: CallFinish[],
  engine: string,
): Promise<boolean[]> {
  return db.transaction().execute(async (tx) => {
    await lockCapsOfCalls(
      tx,
      finishes.map((f) => f.callId),
    );
    await markInProgress(tx, answers, engine);
    return finishLocked(tx, finishes, engine);
  });
}

/** The finish statement of finishCallsAndDebit; the caller holds the cap locks (lockCapsOfCalls). */
async function finishLocked(tx: Executor, finishes: CallFinish[], engine: string): Promise<boolean[]> {
  const rows = await runPrepared<{ id: string }>(tx, {
    name: 'calls_finish_and_debit',
    text: `
        WITH input AS (
          SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::integer[], $6::text[],
                               $7::timestamptz[], $8::integer[], $9::text[], $11::text[], $12::text[], $13::text[],
                               $14::text[], $15::text[], $16::text[], $17::float8[], $18::float8[],
                               $19::jsonb[], $20::timestamptz[])
            AS i(tenant_id, id, status, ended_at, duration_seconds, failure_reason, at, minutes, ledger_id,
                 ended_reason, transcript, recording_url, wallet_ledger_id, answered_by, transferred_to,
                 engine_cost_usd, engine_duration_seconds, analysis, analyzed_at)
        ), ended AS (
          UPDATE calls c SET status = i.status, ended_at = i.ended_at, duration_seconds = i.duration_seconds,
                 failure_reason = i.failure_reason, ended_reason = coalesce(i.ended_reason, i.status),
                 analysis = CASE WHEN c.analysis IS NULL THEN i.analysis ELSE c.analysis END,
                 updated_at = CASE WHEN c.analysis IS NULL AND i.analysis IS NOT NULL THEN i.analyzed_at ELSE i.at END,
                 billed_minutes = i.minutes, scheduled_for = NULL,
                 transcript = coalesce(i.transcript, c.transcript), recording_url = coalesce(i.recording_url, c.recording_url),
                 answered_by = coalesce(i.answered_by, c.answered_by), transferred_to = coalesce(i.transferred_to, c.transferred_to),
                 engine_cost_usd = coalesce(i.engine_cost_usd, c.engine_cost_usd), engine_duration_seconds = coalesce(i.engine_duration_seconds, c.engine_duration_seconds)
          FROM input i
          WHERE c.tenant_id = i.tenant_id AND c.id = i.id AND c.status IN ('queued', 'dialing', 'in_progress')
          RETURNING ${QUALIFIED_CALL_COLUMN_LIST}, i.minutes, i.ledger_id, i.wallet_ledger_id, i.at,
                    -- analyzed_at is after at: the call's time is analyzed_at only when the analysis was stored.
                    (i.analysis IS NOT NULL AND c.updated_at = i.analyzed_at) AS analyzed_now
        ), ended_as_ending AS (
          SELECT ${ENDED_AS_ENDING} FROM ended
        ), analyzed AS (
          SELECT * FROM ended WHERE analyzed_now
        ), ended_event AS (
          INSERT INTO call_events (tenant_id, call_id, status, at, detail)
          SELECT tenant_id, id, status, ended_at, jsonb_strip_nulls(jsonb_build_object(
                   'duration_seconds', duration_seconds, 'failure_reason', failure_reason, 'billed_minutes', minutes)) FROM ended
          RETURNING id, call_id, status, at, detail
        ), ${recordCallEvents({ calls: 'ended_as_ending', type: "'call.' || c.status", newEvents: 'ended_event', engine: '$10::text' })},
        ${recordCallEvents({ calls: 'analyzed', type: "'call.analyzed'", newEvents: 'ended_event', engine: '$10::text', prefix: 'analyzed_' })},
        freed AS (
          SELECT agent_id, tenant_id FROM ended
        ), ${wakeWaiting('(SELECT max(at) FROM input)')},
        credit_entry AS (
          SELECT ledger_id AS id, tenant_id, user_id, -minutes AS minutes, 'call' AS reason,
                 'call:' || id AS reference, at AS created_at
          FROM ended WHERE minutes > 0
        ), ${APPEND_CREDIT_ENTRIES},
        wallet_call AS (
          SELECT wallet_ledger_id AS id, tenant_id, user_id, id AS call_id, minutes, at AS created_at
          FROM ended WHERE minutes > 0
        ), ${APPEND_WALLET_CALL_DEBITS}, ${TELL_CAMPAIGNS_OF_ENDED_CALLS}
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
      engine,
      finishes.map((f) => f.ending.endedReason ?? null),
      finishes.map((f) => f.ending.transcript ?? null),
      finishes.map((f) => f.ending.recordingUrl ?? null),
      // The tenant's wholesale row, if it has a wallet (wallets/repository.ts).
      finishes.map(() => newId('wled')),
      finishes.map((f) => f.ending.answeredBy ?? null),
      finishes.map((f) => f.ending.transferredTo ?? null),
      finishes.map((f) => f.ending.usage?.costUsd ?? null),
      finishes.map((f) => f.ending.usage?.durationSeconds ?? null),
      finishes.map((f) => (f.analysis ? JSON.stringify(f.analysis.value) : null)),
      finishes.map((f) => f.analysis?.at ?? null),
    ],
  });
  const ended = new Set(rows.map((row) => row.id));
  return finishes.map((f) => ended.delete(f.callId));
}
