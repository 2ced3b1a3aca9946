/**
 * The SQL of a retried call (settings.retry): an unanswered call goes back to the queue for its
 * next attempt, with the locks and wakes of the dispatch statements (dispatch-repository.ts).
 */
import { type Db, type Executor, runPrepared } from '../core/db/database.js';
import { enqueueJob } from '../core/jobs/runner.js';
import { STILL_RUNNING_TEXT } from '../core/jobs/statements.js';
import type { EnqueueOptions } from '../core/jobs/types.js';
import {
  type CallStep,
  lockCapsOfCalls,
  QUALIFIED_CALL_COLUMN_LIST,
  wakeWaiting,
} from './dispatch-repository.js';
import { recordCallEvents } from './repository.js';

/**
 * The call's own dispatch job, when still running (a report that overtook the end of the dispatch
 * that placed the call), is queued again for the retry instead of a new one (a job of the same key
 * queued or running would refuse it; its acknowledgement then finds it queued and leaves it).
 */
async function rearmRunningJob(tx: Executor, job: EnqueueOptions): Promise<boolean> {
  const rows = await runPrepared<{ id: number }>(tx, {
    name: 'calls_rearm_running_dispatch',
    text: `
      UPDATE jobs SET status = 'queued', run_at = $2, attempts = greatest(attempts - 1, 0), locked_by = NULL, locked_until = NULL
      WHERE singleton_key = $1 AND ${STILL_RUNNING_TEXT}
      RETURNING id`,
    values: [job.singletonKey, job.runAt],
  });
  return rows.length > 0;
}

/**
 * An unanswered call with attempts left goes back to `queued` until `scheduledFor` (an event on
 * the same call), its slot wakes a waiting call, and its own dispatch job (`jobId`, running now)
 * is parked until then, all in one transaction. False when the call was no longer dialing.
 */
export async function requeueForRetry(
  db: Db,
  step: CallStep & { jobId: number | null; scheduledFor: Date },
  engine: string,
  /** A new dispatch job for the retry, when no running one is there to park (a voice engine's report). */
  redispatch?: EnqueueOptions,
): Promise<boolean> {
  return db.transaction().execute(async (tx) => {
    await lockCapsOfCalls(tx, [step.callId]);
    const rows = await runPrepared<{ id: string }>(tx, {
      name: 'calls_requeue_for_retry',
      text: `
        WITH requeued AS (
          UPDATE calls c SET status = 'queued', scheduled_for = $3, updated_at = $4, engine_call_id = NULL
          WHERE c.tenant_id = $1 AND c.id = $2 AND c.status IN ('dialing', 'in_progress')
          RETURNING ${QUALIFIED_CALL_COLUMN_LIST}
        ), requeued_event AS (
          INSERT INTO call_events (tenant_id, call_id, status, at, detail)
          SELECT tenant_id, id, 'queued', $4::timestamptz,
                 jsonb_build_object('reason', 'no_answer', 'attempt', attempts + 1, 'scheduled_for', $6::text)
          FROM requeued
          RETURNING id, call_id, status, at, detail
        ), ${recordCallEvents({ calls: 'requeued', type: "'call.queued'", newEvents: 'requeued_event', engine: '$7::text' })},
        freed AS (
          SELECT agent_id, tenant_id FROM requeued
        ), ${wakeWaiting('$4::timestamptz')},
        parked AS (
          UPDATE jobs SET status = 'queued', run_at = $3, attempts = attempts - 1, locked_by = NULL, locked_until = NULL
          WHERE id = $5 AND ${STILL_RUNNING_TEXT} AND EXISTS (SELECT 1 FROM requeued)
        )
        SELECT id FROM requeued`,
      // The event shows the time as the API does (ISO 8601 with milliseconds, UTC).
      values: [
        step.tenantId,
        step.callId,
        step.scheduledFor,
        step.at,
        step.jobId,
        step.scheduledFor.toISOString(),
        engine,
      ],
    });
    if (rows.length !== 1) return false;
    if (redispatch && !(await rearmRunningJob(tx, redispatch))) await enqueueJob(tx, redispatch);
    return true;
  });
}
