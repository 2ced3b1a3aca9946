/**
 * Placing the dialing call's current attempt with the engine (the simulator, Vapi or Retell),
 * exactly once whatever crashes: the request is claimed before it is sent, and a run that finds
 * an earlier run's claim finds out what became of that request instead of sending another
 * (engine-dials.ts has the rules). Used by the call pipeline (pipeline.ts).
 */
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import { coalesce } from '../core/jobs/batching.js';
import { type Job, RetryJobError } from '../core/jobs/runner.js';
import { type DialResult, type TelephonyAdapter, TelephonyError } from '../telephony/port.js';
import type { CallEnding, DispatchRow } from './dispatch-repository.js';
import {
  claimEngineDials,
  dialRequestOf,
  type EngineDialKey,
  findEngineDial,
  releaseEngineDial,
  resendEngineDial,
  scheduleEngineCheck,
} from './engine-dials.js';
import type { CallRow } from './repository.js';

export interface DialPlacementDeps {
  db: Db;
  clock: Clock;
  /** Whose `telephony` is read at each step, so the adapter can be swapped (tests wrap it). */
  engine: { readonly telephony: TelephonyAdapter };
  /**
   * Asks the engine with the pipeline's rules: a transient failure is retried by the queue while
   * attempts are left; a permanent one, or one on the last attempt, ends the call as failed.
   */
  ask<T>(call: CallRow, job: Job, question: () => Promise<T>): Promise<T | undefined>;
  /** Ends a call that is not final yet. */
  end(call: Pick<CallRow, 'tenant_id' | 'id'>, ending: CallEnding): Promise<boolean>;
}

/** The payload of a dispatch job (pipeline.ts). */
interface DispatchPayload {
  callId: string;
  tenantId: string;
}

export function createDialPlacement(deps: DialPlacementDeps) {
  const { db, clock, ask, end } = deps;
  const claimDial = coalesce((claims: (EngineDialKey & { at: Date })[]) => claimEngineDials(db, claims));

  /** "Not yet": the job comes back after `ms` without spending an attempt. */
  const notYet = (why: string, ms: number) =>
    new RetryJobError(why, Math.max(0, Math.ceil(ms)), { countsAsAttempt: false });

  /**
   * Sends the claimed request. A refusal that proves nothing was created releases the claim (the
   * queue's retry claims again); an answer that may have been lost leaves the claim unknown, and
   * the job comes back to resolve it once the request can no longer be creating anything.
   */
  async function send(job: Job<DispatchPayload>, call: DispatchRow, key: EngineDialKey) {
    let unknown = false;
    const result = await ask<DialResult | undefined>(call, job, () =>
      deps.engine.telephony.dial(dialRequestOf(call)).catch(async (error: unknown) => {
        if (error instanceof TelephonyError && error.maybePlaced) {
          unknown = true;
          return undefined;
        }
        await releaseEngineDial(db, key);
        throw error;
      }),
    );
    if (unknown) throw notYet('the answer to the dial was lost', deps.engine.telephony.dialSettleMs);
    return result;
  }

  /**
   * What the engine holds for an attempt whose claim an earlier run took. A failure to ask is
   * retried while attempts are left; on the last one a voice engine's call is left to the
   * backstop (which adopts the engine's call if it has one, and ends it as silent otherwise), and
   * a carrier's is ended as failed.
   */
  async function findOnEngine(job: Job<DispatchPayload>, call: DispatchRow, sentAt: Date) {
    try {
      return { found: await deps.engine.telephony.findDial(dialRequestOf(call), sentAt) };
    } catch (error) {
      const permanent = error instanceof TelephonyError && !error.transient;
      if (!permanent && job.attempt < job.maxAttempts) throw error;
      if (deps.engine.telephony.lookup) {
        await scheduleEngineCheck(db, { tenantId: call.tenant_id, callId: call.id }, clock.now());
      } else {
        const reason = error instanceof Error ? error.message : String(error);
        await end(call, { status: 'failed', endedAt: clock.now(), failureReason: `telephony: ${reason}` });
      }
      return undefined;
    }
  }

  /**
   * Places the dialing call's current attempt, exactly once whatever crashes (engine-dials.ts):
   * claims the request and sends it or, when an earlier run holds the claim, finds out what became
   * of that run's request: an id recorded is the engine's call; otherwise the engine is asked what
   * it holds for the attempt, and once the request has settled, nothing there means the request
   * never created a call, and the claim is sent again. Answers the result (`adopted`: found at the
   * engine rather than answered to this run's request), or undefined when there is nothing to do.
   */
  async function placeAttempt(
    job: Job<DispatchPayload>,
    call: DispatchRow,
  ): Promise<{ result: DialResult; adopted: boolean } | undefined> {
    const key = {
      tenantId: call.tenant_id,
      callId: call.id,
      attempt: call.attempts,
      engine: deps.engine.telephony.name,
    };
    const sent = async () => {
      const result = await send(job, call, key);
      return result && { result, adopted: false };
    };
    // The statement that moved the call to dialing claimed its first request (startDialing).
    if (call.claimed || (await claimDial({ ...key, at: clock.now() }))) return sent();
    const dial = await findEngineDial(db, key);
    if (!dial) {
      // Released: the request before was refused, and this run is the queue's retry of it.
      // The statement that moved the call to dialing claimed its first request (startDialing).
      if (call.claimed || (await claimDial({ ...key, at: clock.now() }))) return sent();
      throw notYet('another run claimed the dial', 1_000);
    }
    if (dial.engine_call_id !== null)
      return { result: { outcome: 'placed', engineCallId: dial.engine_call_id }, adopted: false };
    const asked = await findOnEngine(job, call, dial.requested_at);
    if (!asked) return undefined;
    if (asked.found) return { result: asked.found, adopted: true };
    const now = clock.now();
    const settledAt = dial.requested_at.getTime() + deps.engine.telephony.dialSettleMs;
    if (now.getTime() < settledAt) throw notYet('the dial may still be under way', settledAt - now.getTime());
    if (await resendEngineDial(db, key, dial, now)) return sent();
    throw notYet('another run sent the dial again', 1_000);
  }

  return { placeAttempt };
}
