/**
 * Retell's call object, as its webhooks (`{ event, call }`) and GET /v2/get-call carry it,
 * translated to EngineReports. Pure, and defensive: a field of the wrong type is treated as absent,
 * never as a reason to fail; only a body that is not a Retell event at all is refused.
 *
 * Outcomes follow docs/engines.md: answered → completed; not answered, busy, declined, voicemail or
 * IVR → no_answer (retried per the agent's retry setting); a dial or engine error → failed. The
 * reasons are Retell's `disconnection_reason` values (DisconnectionReason in its OpenAPI document,
 * described at https://docs.retellai.com/reliability/debug-call-disconnect).
 */
import { type EngineUsage, e164Of } from '../outcomes.js';
import type { EngineReport } from '../port.js';
import type { RetellCall } from './client.js';

/** The metadata key our call id travels under (set by the adapter on every call it creates). */
export const CALL_ID_METADATA_KEY = 'voiceplane_call_id';
export const TENANT_ID_METADATA_KEY = 'voiceplane_tenant_id';
/** The call's dial attempt, as a string: how an attempt whose answer was lost finds its Retell call. */
export const ATTEMPT_METADATA_KEY = 'voiceplane_attempt';

type Outcome = 'completed' | 'no_answer' | 'failed';

export interface Disconnection {
  outcome: Outcome;
  /** Whether the callee was on the line: only then does the report carry startedAt and a duration. */
  answered: boolean;
  failureReason?: string;
}

/** The call connected and ended normally (hang-ups, transfers, limits the agent was given). */
const COMPLETED = new Set([
  'user_hangup',
  'agent_hangup',
  'call_transfer',
  'inactivity',
  'max_duration_reached',
  'transfer_bridged',
  'transfer_cancelled',
]);

/** Nobody took the call: worth another attempt. `machine_detected` is the older name of voicemail. */
const NOT_ANSWERED = new Set([
  'dial_no_answer',
  'dial_busy',
  'user_declined',
  'voicemail_reached',
  'ivr_reached',
  'machine_detected',
]);

/** The call never reached the callee because of the line, the carrier or the engine account. */
const NOT_CONNECTED_FAILURES: Record<string, string> = {
  dial_failed: 'The call could not be dialled (no or unknown SIP error).',
  invalid_destination: 'The number dialled is invalid.',
  telephony_provider_permission_denied: 'The telephony provider refused the SIP trunk credentials.',
  telephony_provider_unavailable: 'The telephony provider is unavailable.',
  sip_routing_error: 'The call could not be routed (a SIP routing loop or too many hops).',
  marked_as_spam: 'The carrier marked the call as spam.',
  concurrency_limit_reached: 'The voice engine’s concurrency limit was reached.',
  no_valid_payment: 'The voice engine account has no valid payment method.',
  scam_detected: 'The voice engine flagged the agent as a scam.',
  registered_call_timeout: 'The voice engine registered the call but it never started.',
  error_user_not_joined: 'The callee never joined the call.',
  error_inbound_webhook: 'The voice engine could not fetch the call’s dynamic variables.',
};

/** Errors of the engine itself, possibly in the middle of a conversation. */
const ENGINE_FAILURES: Record<string, string> = {
  error_llm_websocket_open: 'The voice engine could not reach its language model.',
  error_llm_websocket_lost_connection: 'The voice engine lost its language model connection.',
  error_llm_websocket_runtime: 'The voice engine’s language model connection failed.',
  error_llm_websocket_corrupt_payload: 'The voice engine’s language model sent a corrupt payload.',
  error_no_audio_received: 'No audio was received on the call.',
  error_asr: 'The voice engine’s speech recognition failed.',
  error_retell: 'The voice engine had an internal error.',
  error_unknown: 'The voice engine ended the call with an unknown error.',
};

/**
 * What a `disconnection_reason` means for the call. A reason this table does not know yet (Retell
 * adds some now and then) is judged by its `error_` prefix and by the call's status.
 */
export function classifyDisconnection(reason: string, callStatus?: string): Disconnection {
  if (COMPLETED.has(reason)) return { outcome: 'completed', answered: true };
  if (NOT_ANSWERED.has(reason)) return { outcome: 'no_answer', answered: false };
  const notConnected = NOT_CONNECTED_FAILURES[reason];
  if (notConnected) return { outcome: 'failed', answered: false, failureReason: notConnected };
  const engine = ENGINE_FAILURES[reason];
  if (engine) return { outcome: 'failed', answered: callStatus !== 'not_connected', failureReason: engine };
  if (reason.startsWith('error_')) {
    return {
      outcome: 'failed',
      answered: callStatus !== 'not_connected',
      failureReason: `The voice engine ended the call with an error (${reason}).`,
    };
  }
  if (callStatus === 'ended') return { outcome: 'completed', answered: true };
  return {
    outcome: 'failed',
    answered: false,
    failureReason: `The voice engine ended the call without connecting it (${reason}).`,
  };
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const nonEmptyString = (value: unknown): string | undefined =>
  typeof value === 'string' && value !== '' ? value : undefined;

/** Milliseconds since the epoch, within years 2000-2200; anything else is absent. */
function timestamp(value: unknown): Date | undefined {
  if (typeof value !== 'number' || !Number.isFinite(value)) return undefined;
  if (value < 946_684_800_000 || value > 7_258_118_400_000) return undefined;
  return new Date(Math.round(value));
}

function ourCallId(call: RetellCall): string | undefined {
  return isRecord(call.metadata) ? nonEmptyString(call.metadata[CALL_ID_METADATA_KEY]) : undefined;
}

function answeredSeconds(call: RetellCall, startedAt: Date | undefined, endedAt: Date): number | undefined {
  const durationMs = call.duration_ms;
  if (typeof durationMs === 'number' && Number.isFinite(durationMs) && durationMs >= 0) {
    return Math.round(durationMs / 1000);
  }
  if (!startedAt) return undefined;
  return Math.max(0, Math.round((endedAt.getTime() - startedAt.getTime()) / 1000));
}

type IdentifiedCall = RetellCall & { call_id: string };

function startedReport(call: IdentifiedCall, receivedAt: Date, fallbackCallId?: string): EngineReport {
  return {
    kind: 'started',
    callId: ourCallId(call) ?? fallbackCallId,
    engineCallId: call.call_id,
    startedAt: timestamp(call.start_timestamp) ?? receivedAt,
  };
}

function endedReport(call: IdentifiedCall, receivedAt: Date, fallbackCallId?: string): EngineReport {
  const status = nonEmptyString(call.call_status);
  const endedReason = nonEmptyString(call.disconnection_reason) ?? status ?? 'unknown';
  const { outcome, answered: human, failureReason } = classifyDisconnection(endedReason, status);
  // A voicemail answered the line: its time counts when the agent's setting leaves a message.
  const voicemail = VOICEMAIL_REASONS.has(endedReason);
  const answered = human || voicemail;
  const endedAt = timestamp(call.end_timestamp) ?? receivedAt;
  const startedAt = answered ? timestamp(call.start_timestamp) : undefined;
  const report: EngineReport = {
    kind: 'ended',
    callId: ourCallId(call) ?? fallbackCallId,
    engineCallId: call.call_id,
    outcome,
    endedReason,
    endedAt,
  };
  if (failureReason) report.failureReason = failureReason;
  if (startedAt) report.startedAt = startedAt;
  const seconds = answered ? answeredSeconds(call, startedAt, endedAt) : undefined;
  if (seconds !== undefined) report.durationSeconds = seconds;
  const transcript = nonEmptyString(call.transcript);
  if (transcript) report.transcript = transcript;
  const recordingUrl = nonEmptyString(call.recording_url);
  if (recordingUrl) report.recordingUrl = recordingUrl;
  if (voicemail) report.answeredBy = 'voicemail';
  else if (human && outcome === 'completed') report.answeredBy = 'human';
  const transferredTo = TRANSFER_REASONS.has(endedReason)
    ? transferNumberOf(call.transfer_destination)
    : undefined;
  if (transferredTo) report.transferredTo = transferredTo;
  const usage = usageOf(call);
  if (usage) report.usage = usage;
  return report;
}

/** `voicemail_reached`, and `machine_detected`, its older name. */
const VOICEMAIL_REASONS = new Set(['voicemail_reached', 'machine_detected']);
const TRANSFER_REASONS = new Set(['call_transfer', 'transfer_bridged']);

/** `transfer_destination`: a number (with or without its `+`) or `{ number }`. */
function transferNumberOf(value: unknown): string | undefined {
  const number = isRecord(value) ? value.number : value;
  if (typeof number !== 'string') return undefined;
  return e164Of(/^\d{8,15}$/.test(number) ? `+${number}` : number);
}

const finite = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;

/** Retell's `call_cost`: `combined_cost` in cents, `total_duration_seconds`. */
function usageOf(call: RetellCall): EngineUsage | undefined {
  const cost = isRecord(call.call_cost) ? call.call_cost : undefined;
  if (!cost) return undefined;
  const cents = finite(cost.combined_cost);
  const durationSeconds = finite(cost.total_duration_seconds);
  if (cents === undefined && durationSeconds === undefined) return undefined;
  return { costUsd: cents === undefined ? undefined : cents / 100, durationSeconds };
}

/**
 * call_analyzed: Retell's `call_analysis` (`call_summary`, `call_successful`, `in_voicemail`,
 * `custom_analysis_data`) as an analysis report; undefined when the call carries none.
 */
function analyzedReport(call: IdentifiedCall): EngineReport | undefined {
  if (!isRecord(call.call_analysis)) return undefined;
  const analysis = call.call_analysis;
  const report: EngineReport = {
    kind: 'analyzed',
    callId: ourCallId(call),
    engineCallId: call.call_id,
    analysis: {
      summary: analysis.call_summary,
      successful: analysis.call_successful,
      data: isRecord(analysis.custom_analysis_data) ? analysis.custom_analysis_data : {},
    },
  };
  if (analysis.in_voicemail === true) report.answeredBy = 'voicemail';
  const usage = usageOf(call);
  if (usage) report.usage = usage;
  return report;
}

const hasCallId = (call: unknown): call is IdentifiedCall =>
  isRecord(call) && nonEmptyString(call.call_id) !== undefined;

/**
 * GET /v2/get-call's answer as a report (the pipeline's backstop, TelephonyAdapter.lookup):
 * ended, error or not_connected → ended; ongoing → started; registered (still dialling) → undefined.
 */
export function reportOfCall(call: unknown, receivedAt: Date, callId?: string): EngineReport | undefined {
  if (!hasCallId(call)) return undefined;
  switch (call.call_status) {
    case 'ended':
    case 'error':
    case 'not_connected':
      return endedReport(call, receivedAt, callId);
    case 'ongoing':
      return startedReport(call, receivedAt, callId);
    default:
      return undefined;
  }
}

export type RetellWebhookReading =
  /** Not a Retell event: answered 400. */
  | { ok: false; problem: string }
  /** A Retell event; `report` undefined when it concerns no call (transcripts, chats). */
  | { ok: true; event: string; report: EngineReport | undefined };

const CALL_EVENTS = new Set(['call_started', 'call_ended', 'call_analyzed']);

/** A webhook body (already parsed JSON) as a report; `receivedAt` stands in for missing times. */
export function readRetellWebhook(body: unknown, receivedAt: Date): RetellWebhookReading {
  if (!isRecord(body)) return { ok: false, problem: 'The body must be a JSON object.' };
  const event = nonEmptyString(body.event);
  if (!event) return { ok: false, problem: 'The body has no event.' };
  if (!CALL_EVENTS.has(event)) return { ok: true, event, report: undefined };
  // `data` is the older name of `call`, still sent alongside it.
  const call = body.call ?? body.data;
  if (!hasCallId(call)) return { ok: false, problem: `The ${event} event has no call with a call_id.` };
  if (event === 'call_started') return { ok: true, event, report: startedReport(call, receivedAt) };
  if (event === 'call_ended') return { ok: true, event, report: endedReport(call, receivedAt) };
  // call_analyzed follows call_ended, which already ended the call: it brings the analysis.
  return { ok: true, event, report: analyzedReport(call) };
}

/**
 * Whether a Retell call (from POST /v2/list-calls) is the one created for this attempt of our call:
 * its metadata carries our call id and the attempt (a call created before the attempt was recorded
 * there carries none: it matches by the call id alone).
 */
export function isCallOfAttempt(call: RetellCall, callId: string, attempt: number): boolean {
  if (!isRecord(call.metadata) || ourCallId(call) !== callId) return false;
  const recorded = call.metadata[ATTEMPT_METADATA_KEY];
  return recorded === undefined || recorded === String(attempt);
}
