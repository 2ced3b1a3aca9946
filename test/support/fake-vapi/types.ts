/** The fake Vapi's options and its handle (../fake-vapi.ts describes what it speaks). */
import type { VapiToolCallOutcome } from '../fake-engine-tools.js';
import type { InboundRing } from './phone-numbers.js';

export const FAKE_VAPI_API_KEY = 'vapi-test-private-key';

export interface FakeVapiOptions {
  apiKey?: string;
  /** The numbers imported into the fake Vapi organization (E.164, or Vonage-style digits). */
  phoneNumbers?: string[];
  /** The token of the Custom Credential: what playCall sends as `Authorization: Bearer …`. */
  serverSecret?: string;
  /** POST /call creates the call, then waits this long before answering. */
  answerDelayMs?: number;
  /** Plays every created call `afterMs` after its creation, retrying each message until it is taken. */
  autoPlay?: { afterMs: number; script?: (call: FakeVapiCall) => PlayCallScript; retryForMs?: number };
}

export interface RecordedVapiRequest {
  method: string;
  path: string;
  query: URLSearchParams;
  authorization: string | undefined;
  body: unknown;
  status: number;
  /** Why the body failed CreateCallDTO (Ajv's messages), when it did. */
  schemaErrors: string[];
}

export interface VapiFault {
  method: string;
  path: RegExp;
  /** status: answer `status` with Vapi's error shape; drop: cut the connection; hang: never answer. */
  mode?: 'status' | 'drop' | 'hang';
  status?: number;
  message?: string;
  /** How many matching requests it affects (default 1). */
  times?: number;
}

export interface PlayCallScript {
  /** Whether the callee picks up (status-update in-progress); default true. */
  answered?: boolean;
  /** Default customer-ended-call when answered, customer-did-not-answer otherwise. */
  endedReason?: string;
  startedAt?: Date;
  endedAt?: Date;
  transcript?: string;
  recordingUrl?: string;
  /** Overrides the bearer token the messages carry (default: the fake's serverSecret). */
  secret?: string;
  /** The end-of-call-report's outcome fields, as Vapi documents them (default: an empty analysis). */
  analysis?: { summary?: string; successEvaluation?: string; structuredData?: Record<string, unknown> };
  cost?: number;
  durationSeconds?: number;
  /** Where the assistant transferred the call (Call.destination). */
  destination?: { type: 'number'; number: string };
}

export interface FakeVapiCall {
  /** The CreateCallDTO the call was created with. */
  request: Record<string, any>;
  /** The Call object GET /call/{id} answers. */
  call: Record<string, any>;
}

export interface FakeVapi {
  url: string;
  apiKey: string;
  requests: RecordedVapiRequest[];
  calls: Map<string, FakeVapiCall>;
  /** Replaces the imported numbers (an operator importing or removing one). */
  setPhoneNumbers(numbers: string[]): void;
  /** One of the numbers as Vapi holds it (its server URL, its assistant), by its digits. */
  phoneNumber(number: string): Record<string, any> | undefined;
  /**
   * A caller rings one of the numbers: Vapi posts `assistant-request` to the number's server URL
   * and, when the answer names an assistant, holds the inbound Call (`playCall` plays it).
   */
  ringInbound(to: string, from: string): Promise<InboundRing>;
  fail(fault: VapiFault): void;
  /** POSTs one server message about the call to its server.url; answers the HTTP status. */
  sendServerMessage(engineCallId: string, message: Record<string, unknown>, secret?: string): Promise<number>;
  /** Plays the call to its end; answers the status of each message posted, in order. */
  playCall(engineCallId: string, script?: PlayCallScript): Promise<number[]>;
  /** During the call, the model calls one of the assistant's function tools (./fake-engine-tools.ts). */
  callTool(
    engineCallId: string,
    name: string,
    args: Record<string, unknown>,
    options?: { argumentsAs?: 'string' | 'object' },
  ): Promise<VapiToolCallOutcome>;
  /** Auto-played calls not played to their end yet. */
  readonly playing: number;
  /** POST /call answers that never reached the client (its connection closed first). */
  readonly lostAnswers: number;
  close(): Promise<void>;
}
