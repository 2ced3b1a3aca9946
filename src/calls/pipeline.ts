/**
 * The durable call pipeline on the job queue (decisions.md §7):
 *   queued → dialing → in_progress → completed | no_answer | failed
 *
 * `calls.dispatch` (one job per call, written with the call) dials through the telephony port
 * and records the outcome; an answered call that is still talking gets a `calls.progress` job
 * that checks again when the carrier expects it to end. Every step is a conditional update
 * from the previous state, and the call id is the carrier's idempotency key, so a job that runs
 * twice (a crash before its acknowledgement, a lease taken over) neither dials twice nor
 * debits twice. A completed call debits ceil(duration / 60) minutes in the statement that
 * records its completion. The worker runs a claimed batch's jobs together, and each step they
 * take in the same turn is one statement for all of them (`coalesce`).
 */
import { coalesce } from '../core/batching.js';
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db.js';
import { newId } from '../core/ids.js';
import { enqueueJob, type Job, RetryJobError } from '../core/jobs.js';
import {
  type CallProgress,
  type DialResult,
  type TelephonyAdapter,
  TelephonyError,
} from '../telephony/port.js';
import {
  type CallEnding,
  type CallFinish,
  type CallRow,
  type CallStep,
  findCall,
  finishCallsAndDebit,
  markInProgress,
  startDialing,
} from './repository.js';
import { FINAL_STATUSES } from './schemas.js';

export const PROGRESS_QUEUE = 'calls.progress';
/** Failed progress checks (carrier errors) before a call is ended as failed; "still talking" is not one. */
const PROGRESS_MAX_ATTEMPTS = 50;
/**
 * A call the carrier still reports as talking this long after it was answered is ended as failed:
 * carriers cut calls long before (4 hours is the usual default limit), so the carrier has lost it.
 */
export const MAX_CALL_MS = 4 * 60 * 60 * 1000;

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
}) {
  const { db, clock } = deps;
  const toDialing = coalesce((steps: CallStep[]) => startDialing(db, steps));
  const toInProgress = coalesce((steps: (CallStep & { startedAt: Date })[]) => markInProgress(db, steps));
  const finish = coalesce((finishes: CallFinish[]) => finishCallsAndDebit(db, finishes));

  /** Ends a call that is not final yet, debiting a completed one; false when it already was final. */
  function end(call: Pick<CallRow, 'tenant_id' | 'id'>, ending: CallEnding): Promise<boolean> {
    const minutes = ending.status === 'completed' ? minutesFor(ending.durationSeconds ?? 0) : 0;
    return finish({
      tenantId: call.tenant_id,
      callId: call.id,
      at: clock.now(),
      ending,
      minutes,
      ledgerId: newId('cred'),
    });
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

  async function followProgress(call: CallRow, job: Job): Promise<void> {
    const progress = await ask<CallProgress>(call, job, () =>
      deps.telephony.progress(call.id, call.tenant_id),
    );
    if (!progress) return;
    if (progress.state === 'completed') {
      await end(call, {
        status: 'completed',
        endedAt: progress.endedAt,
        durationSeconds: progress.durationSeconds,
      });
    } else if (progress.state === 'failed') {
      await end(call, { status: 'failed', endedAt: clock.now(), failureReason: progress.reason });
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

  async function dispatch(job: Job<CallJobPayload>): Promise<void> {
    const { tenantId, callId } = job.payload;
    // The first run finds the call queued and moves it on in the same statement; a retry reads it.
    const call =
      (await toDialing({ tenantId, callId, at: clock.now() })) ?? (await findCall(db, tenantId, callId));
    if (!call || FINAL_STATUSES.includes(call.status)) return;
    const result = await ask<DialResult>(call, job, () =>
      deps.telephony.dial({
        callId: call.id,
        tenantId: call.tenant_id,
        from: call.from_number,
        to: call.to_number,
        prompt: call.prompt,
        welcomeMessage: call.welcome_message,
        context: (call.context ?? {}) as Record<string, unknown>,
      }),
    );
    if (!result) return;
    if (result.outcome === 'no_answer') {
      await end(call, { status: 'no_answer', endedAt: clock.now() });
      return;
    }
    if (result.outcome === 'failed') {
      await end(call, { status: 'failed', endedAt: clock.now(), failureReason: result.reason });
      return;
    }
    if (call.status !== 'in_progress')
      await toInProgress({
        tenantId: call.tenant_id,
        callId: call.id,
        startedAt: result.answeredAt,
        at: clock.now(),
      });
    await followProgress(call, job);
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
