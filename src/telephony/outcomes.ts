/**
 * What a call's end teaches beyond its status, the same for every engine (docs/calls.md,
 * "Outcomes"): who answered, where the call was transferred, the engine's analysis as the agent
 * configured it, and the engine's own cost. The adapters read their vendor's fields into these
 * shapes; the calls feature stores them. Pure functions.
 */
import type { AgentAnalysisField, AgentVoicemail } from './agent-config.js';

export const ANSWERED_BY = ['human', 'voicemail', 'unknown'] as const;
export type AnsweredBy = (typeof ANSWERED_BY)[number];

/** An analysis as the engine sent it, before it is fitted to the agent's configured fields. */
export interface EngineAnalysis {
  summary?: unknown;
  successful?: unknown;
  data?: Record<string, unknown>;
}

/** The analysis a call shows: the summary, the success judgement and one value per configured field. */
export interface CallAnalysis {
  summary: string | null;
  successful: boolean | null;
  data: Record<string, string | number | boolean | null>;
}

/** What the engine says the call cost it (US dollars) and how long it lasted by its count. */
export interface EngineUsage {
  costUsd?: number;
  durationSeconds?: number;
}

/** What a carrier that ends its own calls (the simulator) tells with an answered call's end. */
export interface CallEndDetails {
  /** The carrier's own word (`voicemail`, `transferred`, …); the status when absent. */
  endedReason?: string;
  /** A voicemail that was left a message still ends `completed`. */
  answeredBy?: Exclude<AnsweredBy, 'unknown'>;
  transferredTo?: string;
  transcript?: string;
  recordingUrl?: string;
  analysis?: EngineAnalysis;
}

/**
 * The status of a call voicemail answered follows the agent's voicemail setting, not the engine's
 * word: `leave_message` is a call that did its job (completed, billed for the answered time);
 * `hang_up`, or no setting, is a call nobody took (no_answer, retried, billed nothing).
 */
export function voicemailStatus(voicemail: AgentVoicemail | null | undefined): 'completed' | 'no_answer' {
  return voicemail?.action === 'leave_message' ? 'completed' : 'no_answer';
}

const E164 = /^\+[1-9]\d{6,14}$/;

/** A transfer destination as an E.164 number (`tel:` and `sip:` user parts too), else undefined. */
export function e164Of(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  const bare = value
    .trim()
    .replace(/^(tel|sip):/i, '')
    .replace(/@.*$/, '')
    .replace(/[\s().-]/g, '');
  return E164.test(bare) ? bare : undefined;
}

const TRUE_WORDS = new Set(['true', 'yes', 'pass', 'passed', 'success', 'successful', '1']);
const FALSE_WORDS = new Set(['false', 'no', 'fail', 'failed', 'failure', 'unsuccessful', '0']);

function booleanOf(value: unknown): boolean | null {
  if (typeof value === 'boolean') return value;
  if (typeof value === 'number') return value === 1 ? true : value === 0 ? false : null;
  if (typeof value !== 'string') return null;
  const word = value.trim().toLowerCase();
  if (TRUE_WORDS.has(word)) return true;
  if (FALSE_WORDS.has(word)) return false;
  return null;
}

function numberOf(value: unknown): number | null {
  if (typeof value === 'number') return Number.isFinite(value) ? value : null;
  if (typeof value !== 'string' || value.trim() === '') return null;
  const parsed = Number(value.trim());
  return Number.isFinite(parsed) ? parsed : null;
}

const MAX_TEXT = 4000;

function stringOf(value: unknown): string | null {
  if (typeof value === 'string') return value.trim() === '' ? null : value.slice(0, MAX_TEXT);
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return null;
}

/** One configured field's value, coerced to its type; null when the engine's value does not fit. */
export function fieldValueOf(field: AgentAnalysisField, value: unknown): string | number | boolean | null {
  switch (field.type) {
    case 'boolean':
      return booleanOf(value);
    case 'number':
      return numberOf(value);
    case 'string':
      return stringOf(value);
    case 'enum': {
      const text = stringOf(value);
      if (text === null) return null;
      const values = field.values ?? [];
      return (
        values.find((allowed) => allowed === text) ??
        values.find((allowed) => allowed.toLowerCase() === text.trim().toLowerCase()) ??
        null
      );
    }
  }
}

/**
 * The engine's analysis fitted to the agent's configuration: exactly the configured fields, each
 * of its type (null when missing or unfit); fields the engine invented are dropped.
 */
export function fitAnalysis(analysis: EngineAnalysis, fields: readonly AgentAnalysisField[]): CallAnalysis {
  const data: CallAnalysis['data'] = {};
  for (const field of fields) data[field.name] = fieldValueOf(field, analysis.data?.[field.name]);
  return { summary: stringOf(analysis.summary), successful: booleanOf(analysis.successful), data };
}
