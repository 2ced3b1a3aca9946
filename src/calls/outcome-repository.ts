/**
 * The SQL of a call's analysis (docs/calls.md, "Outcomes"): the engine's analysis, fitted to the
 * version's configured fields, stored once on the call with the `call.analyzed` event, in one
 * statement; and what the fitting needs to know of the call's published version.
 */
import { type Executor, runPrepared } from '../core/db/database.js';
import type { AgentConfig } from '../telephony/agent-config.js';
import {
  type AnsweredBy,
  type CallAnalysis,
  type CallEndDetails,
  type EngineAnalysis,
  type EngineUsage,
  fitAnalysis,
} from '../telephony/outcomes.js';
import type { CallEnding } from './dispatch-repository.js';
import { recordCallEvents } from './repository.js';

/** The parts of a call's published configuration that decide its outcome. */
export type OutcomeConfig = Pick<Partial<AgentConfig>, 'voicemail' | 'analysis' | 'transfer'>;

/**
 * The configuration the call's version froze (versions published before configurations existed
 * froze none: every field then takes its default).
 */
export async function findOutcomeConfig(
  db: Executor,
  tenantId: string,
  callId: string,
): Promise<OutcomeConfig> {
  const rows = await runPrepared<{ config: OutcomeConfig | null }>(db, {
    name: 'calls_find_outcome_config',
    text: `
      SELECT jsonb_build_object('voicemail', v.config -> 'voicemail', 'analysis', v.config -> 'analysis',
                                'transfer', v.config -> 'transfer') AS config
      FROM calls c
      JOIN agent_versions v ON v.tenant_id = c.tenant_id AND v.agent_id = c.agent_id AND v.version = c.agent_version
      WHERE c.tenant_id = $1 AND c.id = $2`,
    values: [tenantId, callId],
  });
  const config = rows[0]?.config ?? {};
  return {
    voicemail: config.voicemail ?? null,
    analysis: config.analysis ?? { summary: true, data: [] },
    transfer: config.transfer ?? [],
  };
}

export interface AnalysisRecord {
  tenantId: string;
  callId: string;
  at: Date;
  analysis: CallAnalysis;
  /** Who answered, when the analysis says and the end did not. */
  answeredBy?: Exclude<AnsweredBy, 'unknown'>;
  usage?: EngineUsage;
}

/**
 * Stores a call's analysis and records `call.analyzed` (the call as GET shows it), once: a call
 * already analysed, or not placed (queued), is left alone (false). Not a status change, so no
 * timeline row.
 */
export async function recordAnalysis(db: Executor, record: AnalysisRecord, engine: string): Promise<boolean> {
  const rows = await runPrepared<{ id: string }>(db, {
    name: 'calls_record_analysis',
    text: `
      WITH analyzed AS (
        UPDATE calls c SET analysis = $3::jsonb, updated_at = $4,
               answered_by = CASE WHEN c.answered_by IS NULL OR c.answered_by = 'unknown' THEN coalesce($5, c.answered_by)
                                  ELSE c.answered_by END,
               engine_cost_usd = coalesce($6, c.engine_cost_usd),
               engine_duration_seconds = coalesce($7, c.engine_duration_seconds)
        WHERE c.tenant_id = $1 AND c.id = $2 AND c.analysis IS NULL AND c.status <> 'queued'
        RETURNING c.*
      ), no_event AS (
        SELECT NULL::bigint AS id, NULL::text AS call_id, NULL::text AS status, NULL::timestamptz AS at,
               NULL::jsonb AS detail
        WHERE false
      ), ${recordCallEvents({ calls: 'analyzed', type: "'call.analyzed'", newEvents: 'no_event', engine: '$8::text' })}
      SELECT id FROM analyzed`,
    values: [
      record.tenantId,
      record.callId,
      JSON.stringify(record.analysis),
      record.at,
      record.answeredBy ?? null,
      record.usage?.costUsd ?? null,
      record.usage?.durationSeconds ?? null,
      engine,
    ],
  });
  return rows.length > 0;
}

/** A carrier's end details (the simulator's) as the fields of the call's ending. */
export function endDetailsOf(details: CallEndDetails | undefined): Partial<CallEnding> {
  if (!details) return {};
  const { endedReason, answeredBy, transferredTo, transcript, recordingUrl } = details;
  return { endedReason, answeredBy, transferredTo, transcript, recordingUrl };
}

/** The engine's analysis fitted to the call's version, stored with `call.analyzed` (once). */
export async function recordFittedAnalysis(
  db: Executor,
  at: Date,
  call: { tenant_id: string; id: string },
  analysis: EngineAnalysis,
  engine: string,
  extra: Pick<AnalysisRecord, 'answeredBy' | 'usage'> = {},
): Promise<boolean> {
  const config = await findOutcomeConfig(db, call.tenant_id, call.id);
  const fitted = fitAnalysis(analysis, config.analysis?.data ?? []);
  return recordAnalysis(
    db,
    { tenantId: call.tenant_id, callId: call.id, at, analysis: fitted, ...extra },
    engine,
  );
}
