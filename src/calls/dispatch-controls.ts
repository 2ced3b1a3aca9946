/**
 * The SQL of the call controls that hold a queued call back (pipeline.ts `admit`): the count of
 * active calls under the cap locks (the lock order: dispatch-repository.ts), and parking a
 * dispatch job until its call may start.
 */
import { type Executor, runPrepared } from '../core/db/database.js';
import { STILL_RUNNING_TEXT } from '../core/jobs/statements.js';
import type { CallStep } from './dispatch-repository.js';
import { dispatchKeyOf } from './repository.js';

/**
 * Takes the cap locks of a call's agent and tenant (agent first) when they have caps, then counts
 * the calls of each that are dialling or in progress. Call inside a transaction. The counts are a
 * statement of their own: under READ COMMITTED a statement that waited for a row lock still reads
 * other rows as of its start, so a count taken with the lock could miss the call that just ended
 * or started.
 */
export async function lockAndCountActive(
  tx: Executor,
  call: { tenantId: string; agentId: string },
): Promise<{ agentActive: number; tenantActive: number; agentCap: number | null; tenantCap: number | null }> {
  const [agent] = await runPrepared<{ cap: number | null }>(tx, {
    name: 'calls_lock_agent_cap',
    text: `
      SELECT (settings ->> 'max_concurrent_calls')::integer AS cap
      FROM agents WHERE id = $1 AND tenant_id = $2 FOR UPDATE`,
    values: [call.agentId, call.tenantId],
  });
  const [tenant] = await runPrepared<{ cap: number | null }>(tx, {
    name: 'calls_lock_tenant_cap',
    text: 'SELECT max_concurrent_calls AS cap FROM tenants WHERE id = $1 AND max_concurrent_calls IS NOT NULL FOR UPDATE',
    values: [call.tenantId],
  });
  const agentCap = agent?.cap ?? null;
  const tenantCap = tenant?.cap ?? null;
  const [active] = await runPrepared<{ agent_active: number; tenant_active: number }>(tx, {
    name: 'calls_count_active',
    text: `
      SELECT CASE WHEN $3 THEN (SELECT count(*)::integer FROM calls
                               WHERE agent_id = $1 AND status IN ('dialing', 'in_progress')) ELSE 0 END AS agent_active,
             CASE WHEN $4 THEN (SELECT count(*)::integer FROM calls
                               WHERE tenant_id = $2 AND status IN ('dialing', 'in_progress')) ELSE 0 END AS tenant_active`,
    values: [call.agentId, call.tenantId, agentCap !== null, tenantCap !== null],
  });
  return { agentCap, agentActive: active.agent_active, tenantCap, tenantActive: active.tenant_active };
}

/**
 * Gives a running dispatch job back to the queue until `runAt` (a call waiting for a slot or its
 * window), without counting the run as an attempt. The worker then acknowledges nothing: the job
 * is no longer running.
 */
export async function parkDispatchJob(
  tx: Executor,
  jobId: number,
  callId: string,
  runAt: Date,
): Promise<void> {
  await runPrepared(tx, {
    name: 'calls_park_dispatch_job',
    text: `
      UPDATE jobs SET status = 'queued', run_at = $2, attempts = attempts - 1, locked_by = NULL, locked_until = NULL
      WHERE id = $1 AND ${STILL_RUNNING_TEXT} AND (singleton_key = $3 OR singleton_key IS NULL)`,
    values: [jobId, runAt, dispatchKeyOf(callId)],
  });
}

/** Shows when a waiting call starts (calling hours); its job is parked until then by the caller. */
export async function setScheduledFor(tx: Executor, step: CallStep, scheduledFor: Date): Promise<void> {
  await runPrepared(tx, {
    name: 'calls_set_scheduled_for',
    text: `
      UPDATE calls SET scheduled_for = $3
      WHERE tenant_id = $1 AND id = $2 AND status = 'queued' AND scheduled_for IS DISTINCT FROM $3`,
    values: [step.tenantId, step.callId, scheduledFor],
  });
}

/**
 * Wakes the parked dispatch jobs of a tenant whose suspension was lifted, so its waiting calls
 * start now instead of at their next check; each is admitted again (hours, caps) as usual.
 */
export async function wakeTenantDispatches(db: Executor, tenantId: string, now: Date): Promise<number> {
  const rows = await runPrepared<{ id: number }>(db, {
    name: 'calls_wake_tenant_dispatches',
    text: `
      UPDATE jobs SET run_at = $2
      WHERE tenant_id = $1 AND queue = $3 AND status = 'queued' AND run_at > $2
      RETURNING id`,
    values: [tenantId, now, 'calls.dispatch'],
  });
  return rows.length;
}
