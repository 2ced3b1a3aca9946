/**
 * The telephony port: how the call pipeline places calls, whatever carrier is behind it.
 * Adapters (TELEPHONY=simulated today) implement it; the pipeline never knows which one runs.
 *
 * Idempotency: `dial` takes the call id as its idempotency key. Asking again with the same key
 * (a retried or taken-over dispatch) returns the first attempt's result and never dials twice.
 */

export interface DialRequest {
  /** The voiceplane call id, also the idempotency key (with `attempt`). */
  callId: string;
  /**
   * Which dial attempt this is, from 1: an unanswered call retried by its agent's `retry` setting
   * is dialled again under the same call id, so a carrier keys its idempotency on both. The
   * simulator keeps one record per call and answers every attempt like the first.
   */
  attempt?: number;
  tenantId: string;
  /** Caller ID: the agent's number (E.164). */
  from: string;
  /** The callee (E.164). */
  to: string;
  /** The rendered prompt and welcome message the voice agent speaks with. */
  prompt: string;
  welcomeMessage: string;
  context: Record<string, unknown>;
}

/** What happened when the number was dialled. */
export type DialResult =
  | { outcome: 'answered'; answeredAt: Date }
  | { outcome: 'no_answer' }
  | { outcome: 'failed'; reason: string };

/** Where an answered call is now. */
export type CallProgress =
  | { state: 'in_progress' /** When to ask again. */; checkAgainAt: Date }
  | { state: 'completed'; endedAt: Date; durationSeconds: number }
  | { state: 'failed'; reason: string };

export interface TelephonyAdapter {
  readonly name: string;
  /** Places the call (once per callId); throws TelephonyError when the carrier cannot be reached. */
  dial(request: DialRequest): Promise<DialResult>;
  /** The progress of an answered call. */
  progress(callId: string, tenantId: string): Promise<CallProgress>;
}

/**
 * The carrier could not be asked. `transient` errors are retried with back-off; others end the
 * call as failed at once.
 */
export class TelephonyError extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
    this.name = 'TelephonyError';
  }
}
