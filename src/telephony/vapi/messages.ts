/**
 * Vapi's server messages and Call objects translated into EngineReports. Pure functions.
 *
 * Vapi POSTs `{ message: { type, call, … } }` to the call's `server.url` (ServerMessage in its
 * OpenAPI document). Two types matter: `status-update` with status `in-progress` (the callee
 * answered: `started`) and `end-of-call-report` (`ended`, with `endedReason`, `startedAt`,
 * `endedAt`, `artifact.transcript`, `artifact.recordingUrl`, and the outcome: `analysis`,
 * `cost`, `durationSeconds`, the transfer's `destination`). A `status-update` with status `ended`
 * is not used: the end-of-call-report follows it with the transcript and recording, and a call ended
 * by the first would ignore the second. Every other type, and anything whose fields are missing or
 * not of the documented type, is ignored rather than refused: Vapi adds fields and types over time.
 */
import { e164Of } from '../outcomes.js';
import type { EngineReport } from '../port.js';

/** A body that is a Vapi server message: `{ message: { type: string, … } }`. */
export type VapiServerMessage = Record<string, unknown> & { type: string };

/** Where the adapter puts our ids in `assistant.metadata` (CreateCallDTO has no metadata of its own). */
export const CALL_ID_METADATA_KEY = 'voiceplane_call_id';
export const TENANT_ID_METADATA_KEY = 'voiceplane_tenant_id';
/** The call's dial attempt, as a string: how an attempt whose answer was lost finds its Vapi call. */
export const ATTEMPT_METADATA_KEY = 'voiceplane_attempt';

/** The ended reason recorded when an end-of-call-report carries none (documented as required). */
export const MISSING_ENDED_REASON = 'unknown';

type EndedReport = Extract<EngineReport, { kind: 'ended' }>;
type Outcome = EndedReport['outcome'];

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const recordOf = (value: unknown): Record<string, unknown> => (isRecord(value) ? value : {});

const MAX_ID_LENGTH = 200;

function idOf(value: unknown): string | undefined {
  return typeof value === 'string' && value.length > 0 && value.length <= MAX_ID_LENGTH ? value : undefined;
}

const textOf = (value: unknown): string | undefined =>
  typeof value === 'string' && value.trim() !== '' ? value : undefined;

/** Epoch milliseconds after 2001: a `timestamp` in any other unit is not trusted as a time. */
const EARLIEST_MILLISECONDS = 1e12;

/** An ISO 8601 string, or the epoch milliseconds of a message's `timestamp`. */
function dateOf(value: unknown): Date | undefined {
  if (typeof value === 'number' && !(value > EARLIEST_MILLISECONDS)) return undefined;
  if (typeof value !== 'string' && typeof value !== 'number') return undefined;
  const date = new Date(value);
  return Number.isNaN(date.getTime()) ? undefined : date;
}

function httpUrlOf(value: unknown): string | undefined {
  if (typeof value !== 'string') return undefined;
  try {
    const url = new URL(value);
    return url.protocol === 'https:' || url.protocol === 'http:' ? value : undefined;
  } catch {
    return undefined;
  }
}

/** The message inside a body Vapi posted, or undefined when the body is not a Vapi server message. */
export function serverMessageOf(body: unknown): VapiServerMessage | undefined {
  if (!isRecord(body) || !isRecord(body.message)) return undefined;
  const message = body.message;
  return typeof message.type === 'string' && message.type !== '' ? (message as VapiServerMessage) : undefined;
}

/**
 * Our call id, from the transient assistant's metadata: as the message carries it (`assistant`),
 * or inside its Call (`call.assistant`).
 */
function callIdOf(message: Record<string, unknown>): string | undefined {
  const call = recordOf(message.call);
  for (const assistant of [message.assistant, call.assistant]) {
    const id = idOf(recordOf(recordOf(assistant).metadata)[CALL_ID_METADATA_KEY]);
    if (id) return id;
  }
  return undefined;
}

/** Reasons Vapi documents as "phone rang but no answer" (calls/call-ended-reason), and voicemail. */
const NOT_ANSWERED = new Set([
  'customer-did-not-answer',
  'customer-busy',
  'voicemail',
  'call.in-progress.error-providerfault-outbound-sip-408-request-timeout',
  'call.in-progress.error-providerfault-outbound-sip-480-temporarily-unavailable',
]);

/** A conversation that ended normally: either side hung up, a limit was reached, or it was handed on. */
const ENDED_NORMALLY = [
  /^assistant-ended-call/,
  /^assistant-said-end-call-phrase$/,
  /^assistant-forwarded-call$/,
  /^customer-ended-call/,
  /^exceeded-max-duration$/,
  /^silence-timed-out$/,
  /completed/, // twilio-completed-call, sip-completed-call, vonage-completed
  /^call\.forwarding\./, // the customer was answered; a transfer target was not
  /hook-executed/,
];

/** Dial, setup and engine errors, and assistants Vapi could not load. */
const FAILED =
  /error|fault|failed|misdialed|rejected|not-found|not-valid|shutdown|join-timed-out|websocket|no-call-received|deleted|canceled/;

/** How a failed call's reason reads in words (failure_reason), most specific first. */
const FAILURE_WORDS: [RegExp, string][] = [
  [/misdialed/, 'The number is invalid or was misdialed'],
  [/^call\.start\.|^call-start-/, 'Vapi could not start the call'],
  [/failed-to-connect|outbound-sip|rejected|no-call-received/, 'The call could not be connected'],
  [/^assistant-/, 'Vapi could not run the call’s assistant'],
  [/transfer/, 'A transfer failed during the call'],
  [/canceled|deleted/, 'The call was canceled in Vapi'],
  [/pipeline-error|vapifault|providerfault|worker|websocket/, 'A voice engine error ended the call'],
];

/**
 * The outcome of a Vapi `endedReason` (docs/engines.md): answered → completed; not answered, busy
 * or voicemail → no_answer; a dial or engine error → failed, with the reason in words. A reason
 * Vapi adds later that names no error counts as completed when the call was answered.
 */
export function outcomeOfEndedReason(
  endedReason: string,
  answered: boolean,
): { outcome: Outcome; failureReason?: string } {
  if (NOT_ANSWERED.has(endedReason)) return { outcome: 'no_answer' };
  if (ENDED_NORMALLY.some((pattern) => pattern.test(endedReason))) return { outcome: 'completed' };
  if (!FAILED.test(endedReason) && answered) return { outcome: 'completed' };
  const words =
    FAILURE_WORDS.find(([pattern]) => pattern.test(endedReason))?.[1] ??
    (answered ? 'Vapi ended the call' : 'Vapi ended the call before it was answered');
  return { outcome: 'failed', failureReason: `${words} (Vapi: ${endedReason}).` };
}

interface EndedFields {
  callId: string | undefined;
  engineCallId: string;
  endedReason: unknown;
  startedAt: Date | undefined;
  endedAt: Date;
  artifact: Record<string, unknown>;
  /** The message or Call carrying `destination`, `analysis`, `cost` and `durationSeconds`. */
  outcome: Record<string, unknown>;
}

/** Vapi's reason for a call its voicemail detection answered (the assistant may have left a message). */
export const VOICEMAIL_ENDED_REASON = 'voicemail';

const finiteOf = (value: unknown): number | undefined =>
  typeof value === 'number' && Number.isFinite(value) && value >= 0 ? value : undefined;

/**
 * Who answered, the transfer, the analysis (`summary`, `successEvaluation`, `structuredData`) and
 * Vapi's own `cost` and `durationSeconds`, as the end-of-call-report or the Call carries them.
 */
function outcomeFields(report: EndedReport, fields: EndedFields, answered: boolean): void {
  const source = fields.outcome;
  if (report.endedReason === VOICEMAIL_ENDED_REASON) report.answeredBy = 'voicemail';
  else if (answered && report.outcome === 'completed') report.answeredBy = 'human';
  const destination = recordOf(source.destination);
  const transferredTo = e164Of(destination.number) ?? e164Of(destination.sipUri);
  if (transferredTo) report.transferredTo = transferredTo;
  if (isRecord(source.analysis) && Object.keys(source.analysis).length > 0) {
    const analysis = source.analysis;
    report.analysis = {
      summary: analysis.summary,
      successful: analysis.successEvaluation,
      data: recordOf(analysis.structuredData),
    };
  }
  const costUsd = finiteOf(source.cost);
  const durationSeconds = finiteOf(source.durationSeconds) ?? divided(finiteOf(source.durationMs), 1000);
  if (costUsd !== undefined || durationSeconds !== undefined) report.usage = { costUsd, durationSeconds };
}

const divided = (value: number | undefined, by: number) => (value === undefined ? undefined : value / by);

function endedReport(fields: EndedFields): EndedReport {
  const endedReason = textOf(fields.endedReason) ?? MISSING_ENDED_REASON;
  const { outcome, failureReason } = outcomeOfEndedReason(endedReason, fields.startedAt !== undefined);
  // Not answered: Vapi's startedAt (when the line opened) is no answer time, and nothing is billed;
  // voicemail answered it (the agent's voicemail setting decides whether that is billed).
  const voicemail = endedReason === VOICEMAIL_ENDED_REASON;
  const startedAt = outcome === 'no_answer' && !voicemail ? undefined : fields.startedAt;
  const recording = recordOf(fields.artifact.recording);
  const report: EndedReport = {
    kind: 'ended',
    callId: fields.callId,
    engineCallId: fields.engineCallId,
    outcome,
    endedReason,
    endedAt: fields.endedAt,
  };
  if (failureReason) report.failureReason = failureReason;
  if (startedAt) {
    report.startedAt = startedAt;
    report.durationSeconds = Math.max(0, Math.round((fields.endedAt.getTime() - startedAt.getTime()) / 1000));
  }
  const transcript = textOf(fields.artifact.transcript);
  if (transcript) report.transcript = transcript;
  // recordingUrl is deprecated in favour of recording.mono.combinedUrl; both are documented.
  const recordingUrl =
    httpUrlOf(fields.artifact.recordingUrl) ?? httpUrlOf(recordOf(recording.mono).combinedUrl);
  if (recordingUrl) report.recordingUrl = recordingUrl;
  outcomeFields(report, fields, startedAt !== undefined);
  return report;
}

/**
 * The report a server message carries, or undefined: another type, a status other than
 * in-progress, or a message without the call's id (nothing to apply it to).
 */
export function reportFromServerMessage(
  message: VapiServerMessage,
  receivedAt: Date,
): EngineReport | undefined {
  const call = recordOf(message.call);
  const engineCallId = idOf(call.id);
  if (!engineCallId) return undefined;
  const callId = callIdOf(message);
  const sentAt = dateOf(message.timestamp);

  if (message.type === 'status-update') {
    if (message.status !== 'in-progress') return undefined;
    const startedAt = dateOf(call.startedAt) ?? sentAt ?? receivedAt;
    return { kind: 'started', callId, engineCallId, startedAt };
  }
  if (message.type === 'end-of-call-report') {
    return endedReport({
      callId,
      engineCallId,
      endedReason: message.endedReason ?? call.endedReason,
      startedAt: dateOf(message.startedAt) ?? dateOf(call.startedAt),
      endedAt: dateOf(message.endedAt) ?? dateOf(call.endedAt) ?? sentAt ?? receivedAt,
      artifact: isRecord(message.artifact) ? message.artifact : recordOf(call.artifact),
      outcome: { ...call, ...message },
    });
  }
  return undefined;
}

/**
 * A Call object from `GET /call/{id}` as the report its callbacks would carry: ended → `ended`;
 * in progress (or being forwarded) → `started`; scheduled, queued or ringing → undefined.
 */
export function reportFromCall(
  call: Record<string, unknown>,
  known: { engineCallId: string; callId: string },
  now: Date,
): EngineReport | undefined {
  const { engineCallId, callId } = known;
  if (call.status === 'in-progress' || call.status === 'forwarding') {
    return { kind: 'started', callId, engineCallId, startedAt: dateOf(call.startedAt) ?? now };
  }
  if (call.status !== 'ended') return undefined;
  return endedReport({
    callId,
    engineCallId,
    endedReason: call.endedReason,
    startedAt: dateOf(call.startedAt),
    endedAt: dateOf(call.endedAt) ?? now,
    artifact: recordOf(call.artifact),
    outcome: call,
  });
}

/**
 * Whether a Vapi Call (from `GET /call`) is the one created for this attempt of our call: its
 * transient assistant's metadata carries our call id and the attempt (a call created before the
 * attempt was recorded there carries none: it matches by the call id alone).
 */
export function isCallOfAttempt(call: Record<string, unknown>, callId: string, attempt: number): boolean {
  const metadata = recordOf(recordOf(call.assistant).metadata);
  if (metadata[CALL_ID_METADATA_KEY] !== callId) return false;
  const recorded = metadata[ATTEMPT_METADATA_KEY];
  return recorded === undefined || recorded === String(attempt);
}
