/**
 * The few Retell API calls the adapter makes (https://docs.retellai.com/api-references), over
 * global fetch with the API key as a bearer token. Field names are Retell's, as its published
 * OpenAPI document spells them (test/support/engines/retell-openapi.json).
 *
 * Errors are TelephonyError: transient when asking again may succeed (network, timeout, 408, 429,
 * 5xx), permanent otherwise with Retell's own message. The API key never appears in a message.
 */
import { TelephonyError } from '../port.js';

export const RETELL_REQUEST_TIMEOUT_MS = 10_000;
const TIMEOUT_MS = RETELL_REQUEST_TIMEOUT_MS;

/** POST /create-retell-llm: the parts of a Retell LLM the adapter sets. */
export interface CreateRetellLlmBody {
  general_prompt: string;
  begin_message: string;
}

export interface RetellLlm {
  llm_id: string;
  version?: number | null;
}

/** POST /create-agent: an agent answering with a Retell LLM. */
export interface CreateRetellAgentBody {
  response_engine: { type: 'retell-llm'; llm_id: string; version?: number };
  voice_id: string;
  agent_name: string;
  webhook_url: string;
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
  createAgent(body: CreateRetellAgentBody): Promise<RetellAgent>;
  createPhoneCall(body: CreatePhoneCallBody): Promise<RetellCall & { call_id: string }>;
  getCall(callId: string): Promise<RetellCall>;
  listCalls(body: ListCallsBody): Promise<RetellCall[]>;
}

interface RequestOptions {
  /**
   * The request creates a phone call: an answer lost after sending (a timeout, a reset, a 5xx
   * other than 503) may mean the call exists, so the error says `maybePlaced`.
   */
  createsCall?: boolean;
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
    method: 'GET' | 'POST',
    path: string,
    body: unknown,
    { createsCall = false }: RequestOptions = {},
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
    if (!response.ok) {
      const message = await retellMessage(response);
      const transient = isTransientStatus(response.status);
      // 503, 429 and 408 refuse the request before doing it; another 5xx may come after the work.
      const maybePlaced = createsCall && response.status >= 500 && response.status !== 503;
      throw new TelephonyError(`${what} answered ${response.status}: ${message}`, transient, maybePlaced);
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

  return {
    async createRetellLlm(body) {
      const answer = await request<RetellLlm & Record<string, unknown>>('POST', '/create-retell-llm', body);
      return requireString(answer, 'llm_id', 'Retell POST /create-retell-llm');
    },
    async createAgent(body) {
      const answer = await request<RetellAgent & Record<string, unknown>>('POST', '/create-agent', body);
      requireString(answer, 'agent_id', 'Retell POST /create-agent');
      if (!Number.isInteger(answer.version)) {
        throw new TelephonyError('Retell POST /create-agent: the answer has no version', true);
      }
      return answer;
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
  };
}
