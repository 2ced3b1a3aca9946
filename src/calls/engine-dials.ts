/**
 * Exactly one engine call per call attempt. No engine takes an idempotency key, so before the
 * pipeline asks one (the simulator, Vapi or Retell) to place an attempt it commits a claim in
 * `engine_dials` (migrations 0026, 0035); a dispatch that runs again (a crash, a lease taken over)
 * finds the claim and does not simply ask again. What it does instead depends on what the claim
 * says:
 *
 * - released: the engine's refusal proved that nothing was created (a refused connection, 408,
 *   429, 503, a 4xx): the claim is gone, and the queue's retry claims and asks again;
 * - known: the engine's id is recorded (`engine_call_id`): the call waits for its reports;
 * - unknown: the request was sent, or was about to be, and its answer never came (the process
 *   died with it, a timeout, a cut connection, a 5xx that does not say "not taken"). Once the
 *   request can no longer be creating anything (the engine's `dialSettleMs` after it was sent),
 *   the engine is asked what it holds for the attempt (`findDial`, by our call id and attempt in
 *   the call's metadata): its call is adopted (its id recorded), or, when it holds none, the claim
 *   is sent again. `requests` is the claim's version: only the run whose statement moves it from
 *   the value it read sends, so two runs resolving at once send one request.
 */
import { type Executor, runPrepared } from '../core/db/database.js';
import { enqueueJob } from '../core/jobs/runner.js';
import type { DialRequest } from '../telephony/port.js';
import type { CallRow } from './repository.js';

export interface EngineDialKey {
  tenantId: string;
  callId: string;
  /** The call's dial attempt (calls.attempts once it is dialing). */
  attempt: number;
  engine: string;
}

export interface EngineDialsTable {
  call_id: string;
  attempt: number;
  tenant_id: string;
  engine: string;
  /** When the latest request under this claim was sent (or about to be). */
  requested_at: Date;
  engine_call_id: string | null;
  /** Requests sent under this claim: 1, and one more each time the engine was found holding nothing. */
  requests: import('kysely').Generated<number>;
}

declare module '../core/db/database.js' {
  interface Tables {
    engine_dials: EngineDialsTable;
  }
}

/** A claim as a run that could not take it finds it. */
export interface EngineDial {
  requested_at: Date;
  engine_call_id: string | null;
  requests: number;
}

/**
 * Claims the requests of a batch of attempts in one statement; for each, false when an earlier run
 * already claimed it (then `findEngineDial` says what became of it).
 */
export async function claimEngineDials(
  db: Executor,
  claims: (EngineDialKey & { at: Date })[],
): Promise<boolean[]> {
  const rows = await runPrepared<{ call_id: string; attempt: number }>(db, {
    name: 'engine_dials_claim',
    text: `
      INSERT INTO engine_dials (call_id, attempt, tenant_id, engine, requested_at)
      SELECT * FROM unnest($1::text[], $2::integer[], $3::text[], $4::text[], $5::timestamptz[])
      ON CONFLICT (call_id, attempt) DO NOTHING
      RETURNING call_id, attempt`,
    values: [
      claims.map((claim) => claim.callId),
      claims.map((claim) => claim.attempt),
      claims.map((claim) => claim.tenantId),
      claims.map((claim) => claim.engine),
      claims.map((claim) => claim.at),
    ],
  });
  const claimed = new Set(rows.map((row) => `${row.call_id}/${row.attempt}`));
  // An attempt named twice in one batch is claimed once: only its first entry answers true.
  return claims.map((claim) => claimed.delete(`${claim.callId}/${claim.attempt}`));
}

/** The claim of an attempt, or undefined when there is none (never claimed, or released). */
export async function findEngineDial(db: Executor, key: EngineDialKey): Promise<EngineDial | undefined> {
  const rows = await runPrepared<EngineDial>(db, {
    name: 'engine_dials_find',
    text: `
      SELECT requested_at, engine_call_id, requests FROM engine_dials
      WHERE call_id = $1 AND attempt = $2 AND tenant_id = $3`,
    values: [key.callId, key.attempt, key.tenantId],
  });
  return rows[0];
}

/**
 * The engine holds nothing for an unknown claim: takes the claim for one more request, unless
 * another run took it first (`requests` no longer what this run read) or an id came meanwhile.
 */
export async function resendEngineDial(
  db: Executor,
  key: EngineDialKey,
  read: Pick<EngineDial, 'requests'>,
  at: Date,
): Promise<boolean> {
  const rows = await runPrepared<{ call_id: string }>(db, {
    name: 'engine_dials_resend',
    text: `
      UPDATE engine_dials SET requested_at = $4, requests = requests + 1
      WHERE call_id = $1 AND attempt = $2 AND requests = $3 AND engine_call_id IS NULL
      RETURNING call_id`,
    values: [key.callId, key.attempt, read.requests, at],
  });
  return rows.length === 1;
}

/** The engine refused before creating anything: the attempt may be asked for again. */
export async function releaseEngineDial(db: Executor, key: EngineDialKey): Promise<void> {
  await runPrepared(db, {
    name: 'engine_dials_release',
    text: 'DELETE FROM engine_dials WHERE call_id = $1 AND attempt = $2 AND engine_call_id IS NULL',
    values: [key.callId, key.attempt],
  });
}

/**
 * Records the engine's id for the attempt, on its dial and on the call, unless the call has moved
 * on to a later attempt (a late answer must not overwrite the id of the attempt that follows).
 * The call may already be past dialing: a callback can overtake the answer to the request.
 */
export async function recordEngineCall(
  db: Executor,
  key: EngineDialKey,
  engineCallId: string,
): Promise<void> {
  await runPrepared(db, {
    name: 'engine_dials_record',
    text: `
      WITH dial AS (
        UPDATE engine_dials SET engine_call_id = $5 WHERE call_id = $2 AND attempt = $3
      )
      UPDATE calls SET engine = $4, engine_call_id = $5
      WHERE tenant_id = $1 AND id = $2 AND attempts = $3 AND status <> 'queued'
        AND engine_call_id IS DISTINCT FROM $5`,
    values: [key.tenantId, key.callId, key.attempt, key.engine, engineCallId],
  });
}

/** What the engine is asked to place for the call's current attempt (and asked about, findDial). */
export function dialRequestOf(
  call: Pick<
    CallRow,
    | 'id'
    | 'attempts'
    | 'tenant_id'
    | 'agent_id'
    | 'agent_version'
    | 'from_number'
    | 'to_number'
    | 'name'
    | 'email'
    | 'prompt'
    | 'welcome_message'
    | 'context'
  >,
): DialRequest {
  return {
    callId: call.id,
    attempt: call.attempts,
    tenantId: call.tenant_id,
    // A dialled call always has its agent: only an inbound call declined at once has none.
    agentId: call.agent_id ?? '',
    agentVersion: call.agent_version ?? 0,
    from: call.from_number,
    to: call.to_number,
    name: call.name,
    email: call.email,
    prompt: call.prompt,
    welcomeMessage: call.welcome_message,
    context: (call.context ?? {}) as Record<string, unknown>,
  };
}

/** The backstop of a call a voice engine placed: its reports are looked up when late (engine-reports.ts). */
export const ENGINE_CHECK_QUEUE = 'calls.engine_check';
/** How long after placing a call, and then between looks, the backstop asks the engine. */
export const ENGINE_CHECK_EVERY_MS = 10 * 60 * 1000;
/** Failed looks (the engine unreachable) before the backstop gives up on the call as failed. */
export const ENGINE_CHECK_MAX_ATTEMPTS = 50;

export interface EngineCheckPayload {
  callId: string;
  tenantId: string;
}

/**
 * Queues the call's backstop once (a singleton per call), `afterMs` from `at`: ENGINE_CHECK_EVERY_MS
 * after a call the engine took, at once after one adopted from the engine's list (its record, which
 * may already say how it ended, is applied by the check).
 */
export async function scheduleEngineCheck(
  db: Executor,
  call: EngineCheckPayload,
  at: Date,
  afterMs = ENGINE_CHECK_EVERY_MS,
): Promise<void> {
  await enqueueJob(db, {
    queue: ENGINE_CHECK_QUEUE,
    tenantId: call.tenantId,
    payload: { callId: call.callId, tenantId: call.tenantId } satisfies EngineCheckPayload,
    runAt: new Date(at.getTime() + afterMs),
    maxAttempts: ENGINE_CHECK_MAX_ATTEMPTS,
    singletonKey: `engine-check:${call.callId}`,
  });
}
