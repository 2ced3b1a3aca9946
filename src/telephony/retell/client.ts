/**
 * The few Retell API calls the adapter makes (https://docs.retellai.com/api-references), over
 * global fetch with the API key as a bearer token. Field names are Retell's, as its published
 * OpenAPI document spells them (test/support/engines/retell-openapi.json).
 *
 * Errors are TelephonyError: transient when asking again may succeed (network, timeout, 408, 429,
 * 5xx), permanent otherwise with Retell's own message. The API key never appears in a message.
 */
import { TelephonyError } from '../port.js';
import type { RetellAgentFields, RetellLlmBody } from './agent-body.js';

export const RETELL_REQUEST_TIMEOUT_MS = 10_000;
const TIMEOUT_MS = RETELL_REQUEST_TIMEOUT_MS;

/** POST /create-retell-llm and PATCH /update-retell-llm: the parts of a Retell LLM the adapter sets. */
export type CreateRetellLlmBody = RetellLlmBody;

export interface RetellLlm {
  llm_id: string;
  version?: number | null;
}

/** POST /create-agent and PATCH /update-agent: an agent answering with a Retell LLM. */
export interface CreateRetellAgentBody extends RetellAgentFields {
  response_engine: { type: 'retell-llm'; llm_id: string; version?: number };
}

export interface RetellAgent {
  agent_id: string;
  version: number;
}

/** POST /v2/create-phone-call. */
export interface CreatePhoneCallBody {
  from_number: string;
  to_number: string;
  override_agent_id: string;
  override_agent_version: number;
  /** Retell substitutes `{{key}}` in the LLM's prompts with these; values must be strings. */
  retell_llm_dynamic_variables: Record<string, string>;
  metadata: Record<string, string>;
}

/** The call object (GET /v2/get-call, webhooks): read defensively by events.ts. */
export type RetellCall = Record<string, unknown>;

/** POST /v2/list-calls, as far as the adapter fills it (its filter_criteria by metadata). */
export interface ListCallsBody {
  filter_criteria: {
    /** Exact matches on metadata fields, keyed in dot notation (`metadata.<key>`), values as strings. */
    metadata: Record<string, string[]>;
  };
  sort_order: 'ascending' | 'descending';
  /** Retell's default is 50, its maximum 1000. */
  limit: number;
  /** The last call id of the page before (exclusive). */
  pagination_key?: string;
}

export interface RetellClient {
  createRetellLlm(body: CreateRetellLlmBody): Promise<RetellLlm>;
  /** Changes the LLM's latest version (Retell starts a new one when that one is published). */
  updateRetellLlm(llmId: string, body: CreateRetellLlmBody): Promise<RetellLlm>;
  createAgent(body: CreateRetellAgentBody): Promise<RetellAgent>;
  /** Changes the agent's draft (its latest version); answers it, with its version number. */
  updateAgent(agentId: string, body: CreateRetellAgentBody): Promise<RetellAgent>;
  /** Publishes the agent's draft, which no one can change after, and starts the next draft. */
  publishAgent(agentId: string): Promise<void>;
  /** The agent's latest version (its draft, unless never published since created). */
  getAgent(agentId: string): Promise<RetellAgent & { is_published?: boolean }>;
  createPhoneCall(body: CreatePhoneCallBody): Promise<RetellCall & { call_id: string }>;
  getCall(callId: string): Promise<RetellCall>;
  listCalls(body: ListCallsBody): Promise<RetellCall[]>;
  /** GET /get-phone-number/{phone_number}: the number, or undefined when Retell holds none (404). */
  getPhoneNumber(phoneNumber: string): Promise<RetellPhoneNumber | undefined>;
  /** PATCH /update-phone-number/{phone_number}: where Retell asks who answers the number's inbound calls. */
  updatePhoneNumber(phoneNumber: string, body: UpdatePhoneNumberBody): Promise<void>;
}

/**
 * PATCH /update-phone-number/{phone_number}: our inbound webhook, and no agent bound to the number
 * (`inbound_agent_id` and the weighted `inbound_agents` null), so that an inbound answer naming no
 * agent disconnects the call instead of handing it to an agent set in Retell's dashboard.
 */
export interface UpdatePhoneNumberBody {
  inbound_webhook_url: string;
  inbound_agent_id: null;
  inbound_agents: null;
}

/** Of Retell's PhoneNumberResponse, the fields the adapter reads. */
export interface RetellPhoneNumber {
  phone_number: string;
  inbound_webhook_url?: string | null;
}

interface RequestOptions {
  /**
   * The request creates a phone call: an answer lost after sending (a timeout, a reset, a 5xx
   * other than 503) may mean the call exists, so the error says `maybePlaced`.
   */
  createsCall?: boolean;
  /** The operation answers no body (publish-agent): a 2xx is the whole answer. */
  answersNothing?: boolean;
  /** A 404 answers undefined instead of an error (a lookup). */
  missingIsUndefined?: boolean;
}

/** Network failures that prove the request never reached Retell. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'UND_ERR_CONNECT_TIMEOUT']);

function causeCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown } } | undefined)?.cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

/** Retell answers errors as `{ status: 'error', message }`; anything else is summarised by status. */
async function retellMessage(response: Response): Promise<string> {
  const text = await response.text().catch(() => '');
  try {
    const body = JSON.parse(text) as { message?: unknown; error_message?: unknown };
    const message = body.message ?? body.error_message;
    if (typeof message === 'string' && message !== '') return message.slice(0, 500);
  } catch {
    // Not JSON: a proxy's page, say.
  }
  return `HTTP ${response.status}`;
}

function isTransientStatus(status: number): boolean {
  return status === 408 || status === 429 || status >= 500;
}

export function createRetellClient(options: { apiKey: string; apiBase: string }): RetellClient {
  const base = options.apiBase.replace(/\/+$/, '');

  async function request<T>(
    method: 'GET' | 'POST' | 'PATCH',
    path: string,
    body: unknown,
    { createsCall = false, answersNothing = false, missingIsUndefined = false }: RequestOptions = {},
  ): Promise<T> {
    const what = `Retell ${method} ${path}`;
    let response: Response;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${options.apiKey}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(TIMEOUT_MS),
      });
    } catch (error) {
      const timedOut = (error as { name?: string }).name === 'TimeoutError';
      const code = causeCode(error);
      const reason = timedOut
        ? `no answer within ${TIMEOUT_MS / 1000} s`
        : `unreachable (${code ?? 'network error'})`;
      const notSent = !timedOut && code !== undefined && NOT_SENT_CODES.has(code);
      throw new TelephonyError(`${what}: ${reason}`, true, createsCall && !notSent);
    }
    if (response.status === 404 && missingIsUndefined) {
      await response.arrayBuffer().catch(() => undefined);
      return undefined as T;
    }
    if (!response.ok) {
      const message = await retellMessage(response);
      const transient = isTransientStatus(response.status);
      // 503, 429 and 408 refuse the request before doing it; another 5xx may come after the work.
      const maybePlaced = createsCall && response.status >= 500 && response.status !== 503;
      throw new TelephonyError(`${what} answered ${response.status}: ${message}`, transient, maybePlaced);
    }
    if (answersNothing) {
      await response.arrayBuffer().catch(() => undefined);
      return undefined as T;
    }
    try {
      return (await response.json()) as T;
    } catch {
      throw new TelephonyError(`${what}: the answer is not JSON`, true, createsCall);
    }
  }

  function requireString<T extends Record<string, unknown>>(answer: T, field: string, what: string): T {
    if (typeof answer?.[field] !== 'string' || answer[field] === '') {
      throw new TelephonyError(`${what}: the answer has no ${field}`, true);
    }
    return answer;
  }

  function agentAnswer(answer: unknown, what: string): RetellAgent {
    const agent = requireString((answer ?? {}) as RetellAgent & Record<string, unknown>, 'agent_id', what);
    if (!Number.isInteger(agent.version))
      throw new TelephonyError(`${what}: the answer has no version`, true);
    return agent;
  }

  return {
    async createRetellLlm(body) {
      const answer = await request<RetellLlm & Record<string, unknown>>('POST', '/create-retell-llm', body);
      return requireString(answer, 'llm_id', 'Retell POST /create-retell-llm');
    },
    async updateRetellLlm(llmId, body) {
      const path = `/update-retell-llm/${encodeURIComponent(llmId)}`;
      const answer = await request<RetellLlm & Record<string, unknown>>('PATCH', path, body);
      return requireString(answer, 'llm_id', 'Retell PATCH /update-retell-llm');
    },
    async createAgent(body) {
      return agentAnswer(await request('POST', '/create-agent', body), 'Retell POST /create-agent');
    },
    async updateAgent(agentId, body) {
      const answer = await request('PATCH', `/update-agent/${encodeURIComponent(agentId)}`, body);
      return agentAnswer(answer, 'Retell PATCH /update-agent');
    },
    async getAgent(agentId) {
      const answer = await request('GET', `/get-agent/${encodeURIComponent(agentId)}`, undefined);
      return agentAnswer(answer, 'Retell GET /get-agent');
    },
    async publishAgent(agentId) {
      await request('POST', `/publish-agent/${encodeURIComponent(agentId)}`, undefined, {
        answersNothing: true,
      });
    },
    async createPhoneCall(body) {
      const answer = await request<RetellCall>('POST', '/v2/create-phone-call', body, { createsCall: true });
      if (typeof answer?.call_id !== 'string' || answer.call_id === '') {
        // The call was created (201) but we cannot tell which: never ask again for this attempt.
        throw new TelephonyError('Retell POST /v2/create-phone-call: the answer has no call_id', true, true);
      }
      return answer as RetellCall & { call_id: string };
    },
    async getCall(callId) {
      return request<RetellCall>('GET', `/v2/get-call/${encodeURIComponent(callId)}`, undefined);
    },
    async listCalls(body) {
      const answer = await request<unknown>('POST', '/v2/list-calls', body);
      if (!Array.isArray(answer))
        throw new TelephonyError('Retell POST /v2/list-calls: the answer is no list', true);
      return answer.filter(
        (call): call is RetellCall => typeof call === 'object' && call !== null && !Array.isArray(call),
      );
    },
    async getPhoneNumber(phoneNumber) {
      const path = `/get-phone-number/${encodeURIComponent(phoneNumber)}`;
      const answer = await request<RetellPhoneNumber | undefined>('GET', path, undefined, {
        missingIsUndefined: true,
      });
      return answer && typeof answer.phone_number === 'string' ? answer : undefined;
    },
    async updatePhoneNumber(phoneNumber, body) {
      await request('PATCH', `/update-phone-number/${encodeURIComponent(phoneNumber)}`, body);
    },
  };
}
