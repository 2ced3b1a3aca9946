/** The fake Retell's options and its handle (../fake-retell.ts describes what it speaks). */
import type { ErrorObject } from 'ajv';
import type { RetellToolCallOutcome } from '../fake-engine-tools.js';
import type { RetellInboundRing } from './phone-numbers.js';

export interface RecordedRetellRequest {
  method: string;
  path: string;
  authorization: string | undefined;
  body: unknown;
  status: number;
  /** Ajv's errors when the body failed the operation's schema. */
  schemaErrors?: ErrorObject[];
}

export interface FakeRetellFault {
  method?: string;
  path: string | RegExp;
  status: number;
  message?: string;
  /** How many matching requests it answers (default 1). */
  times?: number;
}

export interface PlayCallScript {
  /** Retell's disconnection_reason (default user_hangup). */
  disconnectionReason?: string;
  /** Whether the callee picked up: call_started is sent only then (default: by the reason). */
  connected?: boolean;
  /** Milliseconds since the epoch (default: now, so signatures are fresh). */
  startTimestamp?: number;
  /** Default 42 s for a connected call, 0 otherwise. */
  durationMs?: number;
  transcript?: string;
  recordingUrl?: string;
  /** Which events to send, in order (default: call_started when connected, call_ended, call_analyzed). */
  events?: ('call_started' | 'call_ended' | 'call_analyzed')[];
  /** valid (default), bad (wrong key), stale (ten minutes old) or none. */
  signature?: 'valid' | 'bad' | 'stale' | 'none';
  /** The call's outcome fields as Retell documents them: call_analysis.custom_analysis_data, transfer_destination, call_cost. */
  customAnalysisData?: Record<string, unknown>;
  transferDestination?: string;
  callCost?: { combined_cost: number; total_duration_seconds: number };
}

export interface WebhookDelivery {
  event: string;
  status: number;
  body: string;
}

export interface FakeRetellOptions {
  apiKey?: string;
  /** The numbers the fake Retell account holds (E.164), no agent bound, no inbound webhook. */
  phoneNumbers?: string[];
  /** create-phone-call creates the call, then waits this long before answering. */
  answerDelayMs?: number;
  /** Plays every created call `afterMs` after its creation, retrying each webhook until it is taken. */
  autoPlay?: {
    afterMs: number;
    script?: (call: Record<string, unknown>) => PlayCallScript;
    retryForMs?: number;
  };
  /**
   * How a webhook reaches the app (default: fetch to the agent's webhook_url). Tests that drive
   * the app with `inject` pass one that injects instead.
   */
  deliver?: (
    url: string,
    body: string,
    headers: Record<string, string>,
  ) => Promise<{ status: number; body: string }>;
}

export interface FakeRetell {
  url: string;
  apiKey: string;
  requests: RecordedRetellRequest[];
  /** What was created, in order: each LLM and agent as its latest version stands. */
  llms: Record<string, unknown>[];
  agents: Record<string, unknown>[];
  /** Every version of each agent (by agent_id), oldest first, as Retell keeps them. */
  agentVersions(agentId: string): Record<string, unknown>[];
  /** Every version of each Retell LLM (by llm_id), oldest first. */
  llmVersions(llmId: string): Record<string, unknown>[];
  calls: Record<string, unknown>[];
  /** Requests to method + path (a prefix or a pattern). */
  requestsTo(method: string, path: string | RegExp): RecordedRetellRequest[];
  fail(fault: FakeRetellFault): void;
  playCall(callId: string, script?: PlayCallScript): Promise<WebhookDelivery[]>;
  /** One of the account's numbers as Retell holds it (its inbound_webhook_url, its agent). */
  phoneNumber(number: string): Record<string, unknown> | undefined;
  /**
   * A caller rings one of the numbers: Retell's inbound webhook goes to its `inbound_webhook_url`,
   * and the call the answer allows is created (`playCall` then plays it).
   */
  ringInbound(to: string, from: string): Promise<RetellInboundRing>;
  /** During the call, its LLM calls one of its custom tools (./fake-engine-tools.ts). */
  callTool(callId: string, name: string, args: Record<string, unknown>): Promise<RetellToolCallOutcome>;
  /** Auto-played calls not played to their end yet. */
  readonly playing: number;
  /** create-phone-call answers that never reached the client (its connection closed first). */
  readonly lostAnswers: number;
  close(): Promise<void>;
}
