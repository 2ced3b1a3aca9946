/**
 * The SQL of a call's analysis (docs/calls.md, "Outcomes"): the engine's analysis, fitted to the
 * version's configured fields, stored once on the call with the `call.analyzed` event, in one
 * statement; and what the fitting needs to know of the call's published version.
 */
import { type Executor, runPrepared } from '../core/db/database.js';
import type { AgentConfig } from '../telephony/agent-config.js';
import type {
  AnsweredBy,
  CallAnalysis,
  CallEndDetails,
  EngineAnalysis,
  EngineUsage,
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
 * Stores each call's analysis and records `call.analyzed` (the call as GET shows it), once: a call
 * already analysed, or not placed (queued), is left alone (false). One statement for a batch (the
 * simulator's calls of one turn). Not a status change, so no timeline row.
 */
export async function recordAnalyses(
  db: Executor,
  records: AnalysisRecord[],
  engine: string,
): Promise<boolean[]> {
  const rows = await runPrepared<{ id: string }>(db, {
    name: 'calls_record_analyses',
    text: `
      WITH input AS (
        SELECT * FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::timestamptz[], $5::text[], $6::float8[], $7::float8[])
          AS i(tenant_id, id, analysis, at, answered_by, engine_cost_usd, engine_duration_seconds)
      ), analyzed AS (
        UPDATE calls c SET analysis = i.analysis, updated_at = i.at,
               answered_by = CASE WHEN c.answered_by IS NULL OR c.answered_by = 'unknown'
                                  THEN coalesce(i.answered_by, c.answered_by) ELSE c.answered_by END,
               engine_cost_usd = coalesce(i.engine_cost_usd, c.engine_cost_usd),
               engine_duration_seconds = coalesce(i.engine_duration_seconds, c.engine_duration_seconds)
        FROM input i
        WHERE c.tenant_id = i.tenant_id AND c.id = i.id AND c.analysis IS NULL AND c.status <> 'queued'
        RETURNING c.*
      ), no_event AS (
        SELECT NULL::bigint AS id, NULL::text AS call_id, NULL::text AS status, NULL::timestamptz AS at,
               NULL::jsonb AS detail
        WHERE false
      ), ${recordCallEvents({ calls: 'analyzed', type: "'call.analyzed'", newEvents: 'no_event', engine: '$8::text' })}
      SELECT id FROM analyzed`,
    values: [
      records.map((r) => r.tenantId),
      records.map((r) => r.callId),
      records.map((r) => JSON.stringify(r.analysis)),
      records.map((r) => r.at),
      records.map((r) => r.answeredBy ?? null),
      records.map((r) => r.usage?.costUsd ?? null),
      records.map((r) => r.usage?.durationSeconds ?? null),
      engine,
    ],
  });
  const analyzed = new Set(rows.map((row) => row.id));
  return records.map((r) => analyzed.delete(r.callId));
}

export async function recordAnalysis(db: Executor, record: AnalysisRecord, engine: string): Promise<boolean> {
  const [recorded] = await recordAnalyses(db, [record], engine);
  return recorded ?? false;
}

/** A carrier's end details (the simulator's) as the fields of the call's ending. */
export function endDetailsOf(details: CallEndDetails | undefined): Partial<CallEnding> {
  if (!details) return {};
  const { endedReason, answeredBy, transferredTo, transcript, recordingUrl } = details;
  return { endedReason, answeredBy, transferredTo, transcript, recordingUrl };
}

/**
 * The analysis of a carrier that fills it from the version's configuration itself (the
 * simulator): its values already have the configured types, so it is only given the call's shape.
 */
export function carrierAnalysis(analysis: EngineAnalysis): CallAnalysis {
  const data: CallAnalysis['data'] = {};
  for (const [name, value] of Object.entries(analysis.data ?? {})) {
    data[name] =
      typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean' ? value : null;
  }
  return {
    summary: typeof analysis.summary === 'string' ? analysis.summary : null,
    successful: typeof analysis.successful === 'boolean' ? analysis.successful : null,
    data,
  };
}
