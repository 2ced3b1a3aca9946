/**
 * At most one engine call per call attempt (platform.md §7). Voice engines (Vapi, Retell) take no
 * idempotency key, so before the pipeline asks one to place an attempt it commits a row in
 * `engine_dials` (migration 0026); a dispatch that runs again (a crash, a lease taken over) finds
 * the row and does not ask again. The row is released only when the engine's refusal proves that
 * nothing was created (a connection refused, a 4xx/5xx answer), never after an answer that may
 * have been lost on the way (a timeout): that call, if the engine placed it, still reports with
 * our call id in its metadata, and the backstop (engine-reports.ts) ends it if it never does.
 */
import { type Executor, runPrepared } from '../core/db/database.js';
import { enqueueJob } from '../core/jobs/runner.js';

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
  requested_at: Date;
  engine_call_id: string | null;
}

declare module '../core/db/database.js' {
  interface Tables {
    engine_dials: EngineDialsTable;
  }
}

/** Claims the request to the engine; false when an earlier run already made (or is making) it. */
export async function claimEngineDial(db: Executor, key: EngineDialKey, at: Date): Promise<boolean> {
  const rows = await runPrepared<{ call_id: string }>(db, {
    name: 'engine_dials_claim',
    text: `
      INSERT INTO engine_dials (call_id, attempt, tenant_id, engine, requested_at)
      VALUES ($1, $2, $3, $4, $5)
      ON CONFLICT (call_id, attempt) DO NOTHING
      RETURNING call_id`,
    values: [key.callId, key.attempt, key.tenantId, key.engine, at],
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

/** Queues the call's backstop once (a singleton per call), ENGINE_CHECK_EVERY_MS from `at`. */
export async function scheduleEngineCheck(db: Executor, call: EngineCheckPayload, at: Date): Promise<void> {
  await enqueueJob(db, {
    queue: ENGINE_CHECK_QUEUE,
    tenantId: call.tenantId,
    payload: { callId: call.callId, tenantId: call.tenantId } satisfies EngineCheckPayload,
    runAt: new Date(at.getTime() + ENGINE_CHECK_EVERY_MS),
    maxAttempts: ENGINE_CHECK_MAX_ATTEMPTS,
    singletonKey: `engine-check:${call.callId}`,
  });
}
