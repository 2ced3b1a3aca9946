/**
 * What voice engines (Vapi, Retell) report about the calls they placed, applied to the calls: the
 * adapters' routes translate each callback into an EngineReport and call
 * `apply`; the backstop job (`check`) asks the engine itself when its reports are late.
 *
 *   dialing ── started ──▶ in_progress ── ended ──▶ completed | no_answer | failed
 *   dialing ── ended (never answered) ──▶ no_answer (retried per settings.retry) | failed
 *   ended call ── analyzed ──▶ the same call with its analysis (`call.analyzed`, once)
 *
 * Voicemail ends as the agent's voicemail setting says (leave_message: completed and billed;
 * hang_up or none: no_answer), whatever outcome the engine's own reason implies.
 *
 * Each step is the pipeline's own conditional statement (dispatch-repository.ts), so a report
 * that comes twice, late, or after the call ended changes nothing and is acknowledged as
 * `ignored`; so is one for an earlier attempt of a retried call (engine_dials knows which engine
 * id belongs to which attempt), or for a call another engine placed.
 */
import type { AgentSettings } from '../agents/settings.js';
import type { Clock } from '../core/clock.js';
import { type Db, runPrepared } from '../core/db/database.js';
import { newId } from '../core/ids.js';
import { type Job, RetryJobError } from '../core/jobs/runner.js';
import { fitAnalysis, voicemailStatus } from '../telephony/outcomes.js';
import {
  type EngineReport,
  type EngineReports,
  type TelephonyAdapter,
  TelephonyError,
} from '../telephony/port.js';
import {
  answerAndFinishCalls,
  type CallEnding,
  type CallFinish,
  finishCallsAndDebit,
  markInProgress,
} from './dispatch-repository.js';
import {
  dialRequestOf,
  ENGINE_CHECK_EVERY_MS,
  type EngineCheckPayload,
  findEngineDial,
  recordEngineCall,
} from './engine-dials.js';
import { findOutcomeConfig, type OutcomeConfig, recordAnalysis } from './outcome-repository.js';
import { MAX_CALL_MS, minutesFor } from './pipeline.js';
import { DISPATCH_MAX_ATTEMPTS, DISPATCH_QUEUE } from './placement.js';
import { CALL_COLUMNS, type CallRow, dispatchKeyOf } from './repository.js';
import { requeueForRetry } from './retry-repository.js';

/**
 * A call still dialing this long after the engine took it, with no report and nothing from the
 * engine's own record, is ended as failed: a ringing call gives up within minutes.
 */
export const ENGINE_SILENCE_LIMIT_MS = 60 * 60 * 1000;

type ReportedCall = CallRow & { settings: AgentSettings; dial_attempt: number | null };

const CALL_COLUMN_LIST = CALL_COLUMNS.map((column) => `c.${column}`).join(', ');

/**
 * The call a report is about, by our id or else by the engine's, with its agent's settings and the
 * attempt the engine's id was requested for (null: no request recorded that id).
 */
async function findReportedCall(
  db: Db,
  engine: string,
  ids: { callId: string | undefined; engineCallId: string | null },
): Promise<ReportedCall | undefined> {
  // Two statements rather than one with a condition on the parameters: each keeps a generic plan
  // on its own index (the primary key, or calls_engine_call).
  const select = `
      SELECT ${CALL_COLUMN_LIST}, a.settings,
             (SELECT d.attempt FROM engine_dials d WHERE d.call_id = c.id AND d.engine_call_id = $2) AS dial_attempt
      FROM calls c JOIN agents a ON a.id = c.agent_id`;
  const rows = ids.callId
    ? await runPrepared<ReportedCall>(db, {
        name: 'engine_reports_find_call_by_id',
        text: `${select} WHERE c.id = $1`,
        values: [ids.callId, ids.engineCallId],
      })
    : await runPrepared<ReportedCall>(db, {
        name: 'engine_reports_find_call_by_engine_id',
        text: `${select} WHERE c.engine = $1 AND c.engine_call_id = $2`,
        values: [engine, ids.engineCallId],
      });
  return rows[0];
}

/** Whether the report is about the call's current attempt, placed by this engine. */
function isCurrentAttempt(call: ReportedCall, engine: string, report: EngineReport): boolean {
  if (call.engine !== null && call.engine !== engine) return false;
  if (call.dial_attempt !== null) return call.dial_attempt === call.attempts;
  // No request recorded this id (its answer was lost, or it overtook the answer): it can only be
  // the current attempt's when the call has no other id for it.
  return call.engine_call_id === null || call.engine_call_id === report.engineCallId;
}

export function createEngineReports(deps: {
  db: Db;
  clock: Clock;
  telephony: TelephonyAdapter;
  /** Told once for each call a report moves to a final status (the metrics' counter). */
  onCallEnded?: (status: CallEnding['status']) => void;
}): EngineReports & { check(job: Job<EngineCheckPayload>): Promise<void> } {
  const { db, clock } = deps;

  async function started(engine: string, call: ReportedCall, startedAt: Date): Promise<boolean> {
    if (call.status !== 'dialing') return false;
    const [moved] = await markInProgress(
      db,
      [{ tenantId: call.tenant_id, callId: call.id, at: clock.now(), startedAt }],
      engine,
    );
    return moved ?? false;
  }

  /** Stores the engine's analysis fitted to the version's fields, with `call.analyzed`, once. */
  async function analyzed(
    engine: string,
    call: ReportedCall,
    report: Pick<Extract<EngineReport, { kind: 'analyzed' }>, 'analysis' | 'answeredBy' | 'usage'>,
    config?: OutcomeConfig,
  ): Promise<boolean> {
    const fields = (config ?? (await findOutcomeConfig(db, call.tenant_id, call.id))).analysis?.data ?? [];
    const record = { tenantId: call.tenant_id, callId: call.id, at: clock.now() };
    const analysis = fitAnalysis(report.analysis, fields);
    return recordAnalysis(
      db,
      { ...record, analysis, answeredBy: report.answeredBy, usage: report.usage },
      engine,
    );
  }

  async function ended(engine: string, call: ReportedCall, report: Extract<EngineReport, { kind: 'ended' }>) {
    if (call.status !== 'dialing' && call.status !== 'in_progress') return false;
    const at = clock.now();
    const voicemail = report.answeredBy === 'voicemail' && report.outcome !== 'failed';
    const config =
      voicemail || report.analysis ? await findOutcomeConfig(db, call.tenant_id, call.id) : undefined;
    // Voicemail ends as the agent's setting says, whatever the engine's word (docs/calls.md).
    const status = voicemail ? voicemailStatus(config?.voicemail) : report.outcome;
    const retry = call.settings.retry;
    if (status === 'no_answer' && retry && call.attempts < retry.max_attempts) {
      const scheduledFor = new Date(at.getTime() + retry.delay_minutes * 60_000);
      const payload = { callId: call.id, tenantId: call.tenant_id };
      return requeueForRetry(
        db,
        { tenantId: call.tenant_id, callId: call.id, at, jobId: null, scheduledFor },
        engine,
        {
          queue: DISPATCH_QUEUE,
          tenantId: call.tenant_id,
          payload,
          runAt: scheduledFor,
          maxAttempts: DISPATCH_MAX_ATTEMPTS,
          singletonKey: dispatchKeyOf(call.id),
        },
      );
    }
    const answeredAt =
      status === 'completed'
        ? (report.startedAt ??
          call.started_at ??
          new Date(report.endedAt.getTime() - (report.durationSeconds ?? 0) * 1000))
        : undefined;
    const durationSeconds = !answeredAt
      ? status === 'no_answer'
        ? undefined
        : report.durationSeconds
      : (report.durationSeconds ??
        Math.max(0, Math.round((report.endedAt.getTime() - answeredAt.getTime()) / 1000)));
    const ending: CallEnding = {
      status,
      endedAt: report.endedAt,
      durationSeconds,
      failureReason: status === 'failed' ? (report.failureReason ?? report.endedReason) : undefined,
      endedReason: report.endedReason,
      transcript: report.transcript,
      recordingUrl: report.recordingUrl,
      answeredBy: report.answeredBy,
      transferredTo: report.transferredTo,
      usage: report.usage,
    };
    const finish: CallFinish = {
      tenantId: call.tenant_id,
      callId: call.id,
      at,
      ending,
      minutes: status === 'completed' ? minutesFor(durationSeconds ?? 0) : 0,
      ledgerId: newId('cred'),
    };
    const [moved] =
      call.status === 'dialing' && answeredAt
        ? await answerAndFinishCalls(
            db,
            [{ tenantId: call.tenant_id, callId: call.id, at, startedAt: answeredAt }],
            [finish],
            engine,
          )
        : await finishCallsAndDebit(db, [finish], engine);
    if (moved) deps.onCallEnded?.(ending.status);
    if (moved && report.analysis) await analyzed(engine, call, { analysis: report.analysis }, config);
    return moved ?? false;
  }

  async function apply(engine: string, report: EngineReport): Promise<'applied' | 'ignored'> {
    const call = await findReportedCall(db, engine, report);
    if (!call || !isCurrentAttempt(call, engine, report)) return 'ignored';
    if (
      call.engine_call_id !== report.engineCallId &&
      call.status !== 'queued' &&
      report.kind !== 'analyzed'
    ) {
      await recordEngineCall(
        db,
        { tenantId: call.tenant_id, callId: call.id, attempt: call.attempts, engine },
        report.engineCallId,
      );
    }
    const moved =
      report.kind === 'started'
        ? await started(engine, call, report.startedAt)
        : report.kind === 'analyzed'
          ? await analyzed(engine, call, report)
          : await ended(engine, call, report);
    return moved ? 'applied' : 'ignored';
  }

  /** Unanswered past ENGINE_SILENCE_LIMIT_MS, or talking past MAX_CALL_MS. */
  function pastLimit(call: ReportedCall): boolean {
    const talking = call.status === 'in_progress' && call.started_at;
    const since = talking ? (call.started_at as Date) : call.updated_at;
    return clock.now().getTime() - since.getTime() >= (talking ? MAX_CALL_MS : ENGINE_SILENCE_LIMIT_MS);
  }

  /**
   * A dialing call without the engine's id (its dispatch could not find out what became of its
   * request): the engine's call for the attempt, if it lists one, is adopted. Never dials.
   */
  async function adopt(call: ReportedCall): Promise<void> {
    const { telephony } = deps;
    const key = { tenantId: call.tenant_id, callId: call.id, attempt: call.attempts, engine: telephony.name };
    const dial = await findEngineDial(db, key);
    if (!dial) return;
    let found: Awaited<ReturnType<TelephonyAdapter['findDial']>>;
    try {
      found = await telephony.findDial(dialRequestOf(call), dial.requested_at);
    } catch (error) {
      const permanent = error instanceof TelephonyError && !error.transient;
      if (!permanent && !pastLimit(call)) throw error;
      return;
    }
    if (found?.outcome !== 'placed') return;
    await recordEngineCall(db, key, found.engineCallId);
    call.engine_call_id = found.engineCallId;
  }

  /**
   * The backstop of a placed call: asks the engine for its record of the call and applies it as a
   * report (a call without the engine's id first adopts the engine's call for its attempt, if the
   * engine lists one). A call that stays unanswered past ENGINE_SILENCE_LIMIT_MS, or talking past
   * MAX_CALL_MS, is ended as failed; otherwise the job looks again later (not counted as an attempt).
   */
  async function check(job: Job<EngineCheckPayload>): Promise<void> {
    const { telephony } = deps;
    const engine = telephony.name;
    const ids = { callId: job.payload.callId, engineCallId: null };
    let call = await findReportedCall(db, engine, ids);
    if (!call || call.tenant_id !== job.payload.tenantId) return;
    if (call.status !== 'dialing' && call.status !== 'in_progress') return;
    if (!call.engine_call_id && call.status === 'dialing') await adopt(call);
    if (call.engine_call_id && telephony.lookup) {
      let report: EngineReport | undefined;
      try {
        report = await telephony.lookup(call.engine_call_id, call.id);
      } catch (error) {
        // The engine unreachable: asked again with back-off, until the call is past its limit. An
        // engine that does not know the call (a permanent refusal) has nothing more to say.
        const permanent = error instanceof TelephonyError && !error.transient;
        if (!permanent && !pastLimit(call)) throw error;
      }
      if (report && (await apply(engine, report)) === 'applied' && report.kind === 'ended') return;
      call = (await findReportedCall(db, engine, ids)) ?? call;
      if (call.status !== 'dialing' && call.status !== 'in_progress') return;
    }
    const now = clock.now();
    if (pastLimit(call)) {
      const talking = call.status === 'in_progress';
      const reason = talking
        ? `the engine still reported the call in progress ${MAX_CALL_MS / 3_600_000} hours after it was answered`
        : `the engine reported nothing about the call for ${ENGINE_SILENCE_LIMIT_MS / 60_000} minutes`;
      const finish: CallFinish = {
        tenantId: call.tenant_id,
        callId: call.id,
        at: now,
        ending: {
          status: 'failed',
          endedAt: now,
          failureReason: `telephony: ${reason}`,
          endedReason: 'engine-silent',
        },
        minutes: 0,
        ledgerId: newId('cred'),
      };
      const [moved] = await finishCallsAndDebit(db, [finish], engine);
      if (moved) deps.onCallEnded?.('failed');
      return;
    }
    throw new RetryJobError('the engine has not ended the call yet', ENGINE_CHECK_EVERY_MS, {
      countsAsAttempt: false,
    });
  }

  return { apply, check };
}
