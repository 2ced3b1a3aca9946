/**
 * The telephony port: how the call pipeline places calls, whatever carrier or voice engine is
 * behind it. Adapters (TELEPHONY=simulated, vapi, retell) implement it; the pipeline never knows
 * which one runs.
 *
 * Two shapes of engine:
 * - a carrier that answers the dial itself (the simulator): `dial` says answered / no_answer /
 *   failed, and `progress` is polled until the call ends;
 * - a voice engine that places the call and reports later (Vapi, Retell): `dial` answers
 *   `placed` with the engine's call id, and the engine's callbacks, translated by the adapter's
 *   routes into EngineReports, move the call on (src/calls/engine-reports.ts). `lookup` asks the
 *   engine directly when its callbacks are late (the pipeline's backstop).
 *
 * Exactly one engine call per call attempt: no engine takes an idempotency key, so the pipeline
 * claims each request before it is sent (engine_dials, src/calls/engine-dials.ts). When the outcome
 * of a claimed request is unknown (the process died with it, or the answer was lost), the pipeline
 * waits until the request can no longer be creating anything (`dialSettleMs`) and asks the engine
 * what it holds for that attempt (`findDial`): it adopts the engine's call, or dials when there is
 * none. The simulator goes through the same path; it keeps one record per call attempt and counts
 * the requests it was sent, which is how the tests count calls asked twice.
 */

import type { AgentConfig } from './agent-config.js';
import type { AnsweredBy, CallEndDetails, EngineAnalysis, EngineUsage } from './outcomes.js';

export interface DialRequest {
  /** The voiceplane call id; with `attempt`, what the engine's call carries in its metadata. */
  callId: string;
  /**
   * Which dial attempt this is, from 1: an unanswered call retried by its agent's `retry` setting
   * is dialled again under the same call id, each attempt a call of its own at the engine.
   */
  attempt: number;
  tenantId: string;
  /** The agent and the published version the call was placed with (engines sync versions: Retell). */
  agentId: string;
  agentVersion: number;
  /** Caller ID: the agent's number (E.164). */
  from: string;
  /** The callee (E.164), and the name and email the call was placed with (template values, src/calls/input.ts). */
  to: string;
  name: string;
  email: string | null;
  /** The rendered prompt and welcome message the voice agent speaks with. */
  prompt: string;
  welcomeMessage: string;
  context: Record<string, unknown>;
}

/** What happened when the number was dialled. */
export type DialResult =
  | { outcome: 'answered'; answeredAt: Date }
  | {
      outcome: 'no_answer';
      /** The carrier's own word (the simulator's `voicemail`), and who answered, when it says. */
      endedReason?: string;
      answeredBy?: AnsweredBy;
    }
  | {
      outcome: 'failed';
      reason: string /** The engine's own reason, verbatim (ended_reason). */;
      endedReason?: string;
    }
  /** A voice engine took the call; its callbacks report how it goes (EngineReport). */
  | { outcome: 'placed'; engineCallId: string };

/** Where an answered call is now. */
export type CallProgress =
  | { state: 'in_progress' /** When to ask again. */; checkAgainAt: Date }
  | { state: 'completed'; endedAt: Date; durationSeconds: number; details?: CallEndDetails }
  | { state: 'failed'; reason: string };

/**
 * What a voice engine reported about a call it placed: its callback (Vapi's server messages,
 * Retell's webhooks) translated by the adapter's routes, or its answer to `lookup`.
 * `callId` is ours, as the engine carries it in the call's metadata; undefined when the message
 * does not carry it (the call is then found by `engineCallId`).
 */
export type EngineReport =
  | { kind: 'started'; callId: string | undefined; engineCallId: string; startedAt: Date }
  | {
      kind: 'ended';
      callId: string | undefined;
      engineCallId: string;
      /** completed: answered; no_answer: not answered, busy or voicemail (retried); failed: a dial or engine error. */
      outcome: 'completed' | 'no_answer' | 'failed';
      /** The engine's own reason, verbatim (`customer-did-not-answer`, `dial_no_answer`, …). */
      endedReason: string;
      /** In words, for a failed call. */
      failureReason?: string;
      /** When the callee answered; absent when they did not. */
      startedAt?: Date;
      endedAt: Date;
      /** Answered (billable) seconds; derived from startedAt and endedAt when absent. */
      durationSeconds?: number;
      transcript?: string;
      recordingUrl?: string;
      /** Who answered, when the engine says (a detected voicemail ends as the agent's setting says). */
      answeredBy?: Exclude<AnsweredBy, 'unknown'>;
      /** Where the engine transferred the call (E.164). */
      transferredTo?: string;
      /** The engine's analysis, when it comes with the end (Vapi's end-of-call-report). */
      analysis?: EngineAnalysis;
      /** The engine's own cost and duration (the operator's view). */
      usage?: EngineUsage;
    }
  /** The engine's analysis of an ended call, sent after its end (Retell's call_analyzed). */
  | {
      kind: 'analyzed';
      callId: string | undefined;
      engineCallId: string;
      analysis: EngineAnalysis;
      answeredBy?: Exclude<AnsweredBy, 'unknown'>;
      usage?: EngineUsage;
    };

/** Applies engine reports to calls (src/calls/engine-reports.ts); the adapters' routes call it. */
export interface EngineReports {
  /** `ignored`: an unknown call, one already past this point, or another engine's call. */
  apply(engine: string, report: EngineReport): Promise<'applied' | 'ignored'>;
}

/** A call ringing one of the tenants' numbers, as the engine announces it (src/phone-numbers/inbound.ts). */
export interface InboundCallRequest {
  /** The engine's id of the number rung (Vapi's `call.phoneNumberId`; Retell and the simulator: the number). */
  engineNumberId: string;
  /** The caller (E.164, when the engine knows it). */
  from: string;
  /** The engine's id for the call, when it gives one before the call is answered (Vapi). */
  engineCallId?: string;
  /**
   * `answer`: store the call now (Vapi, the simulator); `decide`: only say who answers, the call is
   * stored when the engine reports it started (Retell, whose inbound webhook carries no call id and
   * may be retried: an answer no call follows must leave nothing behind). Declines are stored at once.
   */
  mode: 'answer' | 'decide';
}

/** Who answers an inbound call, or why it is declined. */
export type InboundAnswer =
  | {
      kind: 'answer';
      /** Our call id (mode `answer`), else undefined: the engine's report creates the call. */
      callId: string | undefined;
      /** The call as a dial request: the agent's version, the rendered prompt and welcome message. */
      request: DialRequest;
      version: PublishedAgentVersion;
    }
  | {
      kind: 'decline';
      /** The failed call recorded for it (none for a number no tenant holds). */
      callId?: string;
      /** Why, as `ended_reason` says it (`no-inbound-agent`, `insufficient-credits`, …). */
      reason: string;
      /** What the caller hears, where the engine lets us say something. */
      message: string;
    };

/** The inbound path the engines' routes ask (src/phone-numbers/inbound.ts). */
export interface InboundCalls {
  answer(engine: string, request: InboundCallRequest): Promise<InboundAnswer>;
  /**
   * A call the engine reports started that `decide` answered (Retell): stored now, once per engine
   * call id, as in progress. Undefined when the number or its agent no longer answers.
   */
  started?(
    engine: string,
    request: InboundCallRequest & { engineCallId: string; startedAt: Date },
  ): Promise<string | undefined>;
}

/** An agent's published version, as an engine that keeps agents of its own (Retell) syncs it. */
export interface PublishedAgentVersion {
  tenantId: string;
  agentId: string;
  version: number;
  /** The prompt and welcome message as written, with `{key}` placeholders (src/calls/template.ts). */
  prompt: string;
  welcomeMessage: string;
  phoneNumber: string;
  /** The version's frozen configuration: voice, language, model, limits, voicemail, transfer, tools, analysis. */
  config: AgentConfig;
}

/** A number the voice engine holds (imported by the operator into Vapi or Retell, or the simulator's). */
export interface EnginePhoneNumber {
  /** The engine's id for the number (Vapi's id; Retell and the simulator key numbers by the number). */
  id: string;
  /** E.164. */
  number: string;
}

/**
 * The engine's side of the numbers the operator imports (src/phone-numbers/): finding a number the
 * engine holds, and pointing its inbound calls at this service.
 */
export interface EnginePhoneNumbers {
  /** The engine's number with these digits (E.164), or undefined when it holds none. */
  find(number: string): Promise<EnginePhoneNumber | undefined>;
  /**
   * Makes the engine ask this service who answers the number's inbound calls (Vapi: the number's
   * server URL is our route and it has no fixed assistant; Retell: its inbound webhook URL). Idempotent.
   */
  routeInbound(number: EnginePhoneNumber): Promise<void>;
}

export interface TelephonyAdapter {
  readonly name: string;
  /** Places the call (once per callId); throws TelephonyError when the carrier cannot be reached. */
  dial(request: DialRequest): Promise<DialResult>;
  /** The progress of an answered call (carriers that answer the dial; unused for `placed` calls). */
  progress(callId: string, tenantId: string): Promise<CallProgress>;
  /**
   * Voice engines: the engine's current view of a call it placed, as the report its callback
   * would carry (undefined: not answered or ended yet). The pipeline's backstop when callbacks are late.
   */
  lookup?(engineCallId: string, callId: string): Promise<EngineReport | undefined>;
  /**
   * What the engine holds for this attempt of the call (`request.callId` and `request.attempt`, as
   * the engine carries them in the call's metadata), asked when a dial's outcome is unknown: the
   * result its dial had (a voice engine: `placed` with the engine's id), or undefined when it holds
   * no call for it. `sentAt`: when the request was sent (engines look for calls created since).
   */
  findDial(request: DialRequest, sentAt: Date): Promise<DialResult | undefined>;
  /**
   * How long after a request was sent it may still create a call at the engine (its timeout and a
   * margin): only then does `findDial` answering nothing prove that no call was created.
   */
  readonly dialSettleMs: number;
  /**
   * Engines that keep agents of their own (Retell): makes a published version ready to call with.
   * Idempotent; run by a job after each publish, and before a dial when it has not run yet.
   */
  syncAgentVersion?(version: PublishedAgentVersion): Promise<void>;
  /** The engine's phone numbers, for the operator's imports. */
  readonly phoneNumbers?: EnginePhoneNumbers;
  /**
   * Engines that keep agents of their own (Retell): the engine's agent and version that answer an
   * inbound call with this published version (synced first when the publish job has not yet).
   */
  inboundAgentOf?(version: PublishedAgentVersion): Promise<{ agentId: string; version: number }>;
}

/**
 * The carrier could not be asked. `transient` errors are retried with back-off; others end the
 * call as failed at once. A `maybePlaced` error leaves the attempt's outcome unknown: the pipeline
 * resolves it with `findDial` once `dialSettleMs` have passed.
 */
export class TelephonyError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
    /**
     * The request may have reached the engine and created the call though no answer came back
     * (a timeout after sending, a cut connection, a 5xx that does not say "not taken").
     */
    readonly maybePlaced = false,
  ) {
    super(message);
    this.name = 'TelephonyError';
  }
}
