/**
 * The durable call pipeline on the job queue:
 *   queued → dialing → in_progress → completed | no_answer | failed
 *
 * `calls.dispatch` (one job per call, written with the call) first applies the agent's call controls
 * (read at that moment: the agent's current settings) and the do-not-call list, in the statement
 * that starts the dial: a listed number ends the call unplaced. A call outside its calling hours, or
 * scheduled for a later retry, parks its job until then (`scheduled_for` shows when); a call over
 * its agent's or tenant's concurrency cap parks its job until a call of theirs ends, which wakes
 * it in the transaction that ends that call (dispatch-repository.ts), with a slow backstop in
 * case a wake went to a call that could not use it. Then it dials through the telephony port
 * and records the outcome; an answered call that is still talking gets a `calls.progress` job
 * that checks again when the carrier expects it to end. Every step is a conditional update
 * from the previous state, and each attempt's request to the engine is claimed before it is sent
 * and resolved by asking the engine when its outcome is unknown (engine-dials.ts), so a job that
 * runs twice (a crash before its acknowledgement, a lease taken over) neither dials twice nor
 * debits twice. A completed call debits ceil(duration / 60) minutes in the statement that
 * records its completion. The worker runs a claimed batch's jobs together, and each step they
 * take in the same turn is one statement for all of them (`coalesce`).
 */

import type { Clock } from '../core/clock.js';
import type { Db, Executor } from '../core/db/database.js';
import { newId } from '../core/ids.js';
import { coalesce } from '../core/jobs/batching.js';
import { enqueueJob, type Job, RetryJobError } from '../core/jobs/runner.js';
import {
  type CallProgress,
  type DialResult,
  type TelephonyAdapter,
  TelephonyError,
} from '../telephony/port.js';
import { nextOpening } from './calling-hours.js';
import { createDialPlacement } from './dial-placement.js';
import { lockAndCountActive, parkDispatchJob, setScheduledFor } from './dispatch-controls.js';
import {
  answerAndFinishCalls,
  type CallEnding,
  type CallFinish,
  type CallStep,
  type DispatchRow,
  finishCallsAndDebit,
  markInProgress,
  startDialing,
} from './dispatch-repository.js';
import { recordEngineCall, scheduleEngineCheck } from './engine-dials.js';
import { carrierAnalysis, endDetailsOf } from './outcome-repository.js';
import { type CallRow, findCall } from './repository.js';
import { requeueForRetry } from './retry-repository.js';
import { FINAL_STATUSES } from './schemas.js';

export const PROGRESS_QUEUE = 'calls.progress';
/** Failed progress checks (carrier errors) before a call is ended as failed; "still talking" is not one. */
const PROGRESS_MAX_ATTEMPTS = 50;
/**
 * A call the carrier still reports as talking this long after it was answered is ended as failed:
 * carriers cut calls long before (4 hours is the usual default limit), so the carrier has lost it.
 */
export const MAX_CALL_MS = 4 * 60 * 60 * 1000;
/**
 * How long a call parked by a concurrency cap waits at most before it looks again. Ends wake
 * waiting calls at once; this only catches a wake spent on a call the other cap still held back.
 */
export const CAP_BACKSTOP_MS = 30_000;

/**
 * How a call whose number was put on the do-not-call list while it waited ends: as refused, with
 * the reason of the refusals (`do_not_call`), never dialled and billed nothing.
 */
export const DO_NOT_CALL_REASON = 'do_not_call';
const DO_NOT_CALL_FAILURE = 'The number is on the tenant’s do-not-call list; no call was placed.';

export interface CallJobPayload {
  callId: string;
  tenantId: string;
}

/** Minutes a completed call costs. */
export function minutesFor(durationSeconds: number): number {
  return Math.ceil(durationSeconds / 60);
}

export function createCallPipeline(deps: {
  db: Db;
  clock: Clock;
  /** Read at each step, so the adapter can be swapped (tests wrap it). */
  telephony: TelephonyAdapter;
  /** Told once for each call this pipeline moves to a final status (the metrics' counter). */
  onCallEnded?: (status: CallEnding['status']) => void;
}) {
  const { db, clock } = deps;
  const toDialing = coalesce((steps: CallStep[]) => startDialing(db, steps, deps.telephony.name));
  /** The call the forced start answers, when it moved or was found listed (the caller ends it). */
  const startedOrListed = (row: DispatchRow | undefined) => (row?.moved || row?.listed ? row : undefined);
  const forceStart = async (executor: Executor, step: CallStep) =>
    startedOrListed((await startDialing(executor, [step], deps.telephony.name, true))[0]);
  const admittedNow = (step: CallStep) => forceStart(db, step);
  const toInProgress = coalesce((steps: (CallStep & { startedAt: Date })[]) =>
    markInProgress(db, steps, deps.telephony.name),
  );
  const finish = coalesce((finishes: CallFinish[]) => finishCallsAndDebit(db, finishes, deps.telephony.name));
  const answerAndFinish = coalesce(
    (items: { answer: CallStep & { startedAt: Date }; finish: CallFinish }[]) =>
      answerAndFinishCalls(
        db,
        items.map((item) => item.answer),
        items.map((item) => item.finish),
        deps.telephony.name,
      ),
  );

  /** A call's finish; the analysis of the carrier's ending report (the simulator's) goes with it. */
  function finishOf(
    call: Pick<CallRow, 'tenant_id' | 'id'>,
    ending: CallEnding,
    progress?: CallProgress,
  ): CallFinish {
    const minutes = ending.status === 'completed' ? minutesFor(ending.durationSeconds ?? 0) : 0;
    const at = clock.now();
    const analysis = progress?.state === 'completed' ? progress.details?.analysis : undefined;
    return {
      tenantId: call.tenant_id,
      callId: call.id,
      at,
      ending,
      minutes,
      ledgerId: newId('cred'),
      ...(analysis ? { analysis: { value: carrierAnalysis(analysis), at: new Date(at.getTime() + 1) } } : {}),
    };
  }

  /** Ends a call that is not final yet, debiting a completed one; false when it already was final. */
  async function end(
    call: Pick<CallRow, 'tenant_id' | 'id'>,
    ending: CallEnding,
    progress?: CallProgress,
  ): Promise<boolean> {
    return ended(ending, await finish(finishOf(call, ending, progress)));
  }

  function ended(ending: CallEnding, moved: boolean): boolean {
    if (moved) deps.onCallEnded?.(ending.status);
    return moved;
  }

  /** How the carrier's first report ends an answered call, if it already does. */
  function endingOf(progress: CallProgress): CallEnding | undefined {
    if (progress.state === 'completed')
      return {
        status: 'completed',
        endedAt: progress.endedAt,
        durationSeconds: progress.durationSeconds,
        ...endDetailsOf(progress.details),
      };
    if (progress.state === 'failed')
      return { status: 'failed', endedAt: clock.now(), failureReason: progress.reason };
    return undefined;
  }

  /**
   * Asks the carrier; a transient failure is retried by the queue with back-off, unless this was
   * the job's last attempt: then, like a permanent failure, it ends the call as failed.
   */
  async function ask<T>(call: CallRow, job: Job, question: () => Promise<T>): Promise<T | undefined> {
    try {
      return await question();
    } catch (error) {
      const transient = !(error instanceof TelephonyError) || error.transient;
      if (transient && job.attempt < job.maxAttempts) throw error;
      const reason = error instanceof TelephonyError ? error.message : 'telephony error';
      await end(call, { status: 'failed', endedAt: clock.now(), failureReason: `telephony: ${reason}` });
      return undefined;
    }
  }

  const { placeAttempt } = createDialPlacement({ db, clock, engine: deps, ask, end });

  /** Acts on the carrier's report (`known`: already asked), asking it when not given. */
  async function followProgress(call: CallRow, job: Job, known?: CallProgress): Promise<void> {
    const progress =
      known ?? (await ask<CallProgress>(call, job, () => deps.telephony.progress(call.id, call.tenant_id)));
    if (!progress) return;
    const ending = endingOf(progress);
    if (ending) {
      await end(call, ending, progress);
    } else if (progress.state !== 'in_progress') {
      return;
    } else if (job.queue === PROGRESS_QUEUE) {
      const now = clock.now();
      if (call.started_at && now.getTime() - call.started_at.getTime() >= MAX_CALL_MS) {
        await end(call, {
          status: 'failed',
          endedAt: now,
          failureReason: `telephony: the carrier still reported the call in progress ${MAX_CALL_MS / 3_600_000} hours after it was answered`,
        });
        return;
      }
      throw new RetryJobError(
        'call still in progress',
        Math.max(0, progress.checkAgainAt.getTime() - now.getTime()),
        { countsAsAttempt: false },
      );
    } else {
      await enqueueJob(db, {
        queue: PROGRESS_QUEUE,
        tenantId: call.tenant_id,
        payload: { callId: call.id, tenantId: call.tenant_id } satisfies CallJobPayload,
        runAt: progress.checkAgainAt,
        maxAttempts: PROGRESS_MAX_ATTEMPTS,
        singletonKey: `call-progress:${call.id}`,
      });
    }
  }

  /**
   * A call that was answered 202 must reach a final state even when its job gives up for a reason
   * that is not the carrier's (the database refused a step, a bug): on the last attempt such a
   * failure ends the call as failed, with the reason, instead of leaving it queued or dialing. If
   * even that cannot be written, the error goes on to the queue, whose lease brings the job back.
   */
  async function finalOnLastAttempt(job: Job<CallJobPayload>, step: () => Promise<void>): Promise<void> {
    try {
      await step();
    } catch (error) {
      if (job.attempt < job.maxAttempts || error instanceof RetryJobError) throw error;
      const reason = error instanceof Error ? error.message : String(error);
      const call = { tenant_id: job.payload.tenantId, id: job.payload.callId };
      const ending: CallEnding = {
        status: 'failed',
        endedAt: clock.now(),
        failureReason: `dispatch: ${reason}`.slice(0, 500),
      };
      if (!(await end(call, ending))) throw error;
    }
  }

  /**
   * A queued call that the batched step left waiting: starts it now if its controls allow, or
   * parks its job until they may (undefined). A call found listed meanwhile comes back unmoved.
   */
  async function admit(job: Job<CallJobPayload>, call: DispatchRow): Promise<DispatchRow | undefined> {
    const now = clock.now();
    const step: CallStep = { tenantId: call.tenant_id, callId: call.id, at: now };
    const held = call.held_until ?? call.scheduled_for; // a suspended tenant's: until its lift wakes it
    let waitUntil = held && held > now ? held : undefined;
    const hours = call.settings.calling_hours;
    if (!waitUntil && hours) {
      const opens = nextOpening(now, hours);
      if (opens > now) {
        waitUntil = opens;
        await setScheduledFor(db, step, opens);
      }
    }
    if (waitUntil) {
      await parkDispatchJob(db, job.id, call.id, waitUntil);
      return undefined;
    }
    if (call.settings.max_concurrent_calls === undefined && call.tenant_cap === null)
      return admittedNow(step);
    return db.transaction().execute(async (tx) => {
      const active = await lockAndCountActive(tx, { tenantId: call.tenant_id, agentId: call.agent_id ?? '' });
      const full =
        (active.agentCap !== null && active.agentActive >= active.agentCap) ||
        (active.tenantCap !== null && active.tenantActive >= active.tenantCap);
      if (full) {
        await parkDispatchJob(tx, job.id, call.id, new Date(now.getTime() + CAP_BACKSTOP_MS));
        return undefined;
      }
      return forceStart(tx, step);
    });
  }

  function failedEnding(result: Extract<DialResult, { outcome: 'failed' }>): CallEnding {
    return {
      status: 'failed',
      endedAt: clock.now(),
      failureReason: result.reason,
      endedReason: result.endedReason,
    };
  }

  /**
   * A voice engine (Vapi, Retell) places the dialing call and reports how it goes by callback
   * (engine-reports.ts); the call waits for its reports, with a backstop that asks the engine when
   * they are late. A call adopted from the engine's list is looked up at once: it may have ended
   * while nobody knew its id.
   */
  async function placeWithEngine(job: Job<CallJobPayload>, call: DispatchRow): Promise<void> {
    const placed = await placeAttempt(job, call);
    if (!placed) return;
    const { result, adopted } = placed;
    if (result.outcome === 'failed' || result.outcome === 'no_answer') {
      await end(
        call,
        result.outcome === 'failed' ? failedEnding(result) : { status: 'no_answer', endedAt: clock.now() },
      );
      return;
    }
    if (result.outcome !== 'placed') throw new Error(`a voice engine answered "${result.outcome}" to a dial`);
    const key = {
      tenantId: call.tenant_id,
      callId: call.id,
      attempt: call.attempts,
      engine: deps.telephony.name,
    };
    await recordEngineCall(db, key, result.engineCallId);
    await scheduleEngineCheck(
      db,
      { tenantId: call.tenant_id, callId: call.id },
      clock.now(),
      adopted ? 0 : undefined,
    );
  }

  async function dispatch(job: Job<CallJobPayload>): Promise<void> {
    const { tenantId, callId } = job.payload;
    // The first run finds the call queued and, when nothing holds it back, moves it on in the same
    // statement; a retry (a crash after dialing) finds it dialing and asks the carrier again.
    let call = await toDialing({ tenantId, callId, at: clock.now() });
    if (!call || FINAL_STATUSES.includes(call.status)) return;
    if (call.status === 'queued' && !call.listed) {
      call = await admit(job, call);
      if (!call) return;
    }
    if (call.status === 'queued') {
      await end(call, {
        status: 'failed',
        endedAt: clock.now(),
        failureReason: DO_NOT_CALL_FAILURE,
        endedReason: DO_NOT_CALL_REASON,
      });
      return;
    }
    if (deps.telephony.lookup) {
      await placeWithEngine(job, call);
      return;
    }
    const placed = await placeAttempt(job, call);
    if (!placed) return;
    const { result } = placed;
    if (result.outcome === 'no_answer') {
      const retry = call.settings.retry;
      if (retry && call.attempts < retry.max_attempts) {
        const at = clock.now();
        const scheduledFor = new Date(at.getTime() + retry.delay_minutes * 60_000);
        if (
          await requeueForRetry(
            db,
            { tenantId, callId, at, jobId: job.id, scheduledFor },
            deps.telephony.name,
          )
        )
          return;
      }
      const { endedReason, answeredBy } = result;
      await end(call, { status: 'no_answer', endedAt: clock.now(), endedReason, answeredBy });
      return;
    }
    if (result.outcome === 'failed') {
      await end(call, failedEnding(result));
      return;
    }
    if (result.outcome === 'placed') throw new Error('a carrier without lookup answered "placed"');
    if (call.status === 'in_progress') {
      await followProgress(call, job);
      return;
    }
    const answer = {
      tenantId: call.tenant_id,
      callId: call.id,
      startedAt: result.answeredAt,
      at: clock.now(),
    };
    // The carrier is asked before the answer is recorded: a call already over (or failed) then
    // records its answer and its end in one transaction. A question that fails is asked again,
    // with its error handling, once the answer is recorded.
    const first = await deps.telephony.progress(call.id, call.tenant_id).catch(() => undefined);
    const ending = first && endingOf(first);
    if (ending) {
      ended(ending, await answerAndFinish({ answer, finish: finishOf(call, ending, first) }));
      return;
    }
    await toInProgress(answer);
    await followProgress(call, job, first);
  }

  async function progress(job: Job<CallJobPayload>): Promise<void> {
    const call = await findCall(db, job.payload.tenantId, job.payload.callId);
    if (call?.status !== 'in_progress') return;
    await followProgress(call, job);
  }

  return {
    dispatch: (job: Job<CallJobPayload>) => finalOnLastAttempt(job, () => dispatch(job)),
    progress: (job: Job<CallJobPayload>) => finalOnLastAttempt(job, () => progress(job)),
  };
}

export type CallPipeline = ReturnType<typeof createCallPipeline>;
