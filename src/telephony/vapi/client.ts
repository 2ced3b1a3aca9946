/**
 * A small client for the Vapi API operations the adapter uses (https://api.vapi.ai, OpenAPI
 * at /api-json): `GET /phone-number`, `PATCH /phone-number/{id}`, `POST /call`, `GET /call/{id}`,
 * `GET /call` (the list, with its filters). Bearer VAPI_API_KEY, JSON, 10 s per request.
 *
 * Errors are TelephonyError: network errors, timeouts, 408, 429 and 5xx are transient; other 4xx
 * are permanent and carry Vapi's own message. The API key never appears in a message.
 */
import type { VapiConfig } from '../../core/config/config.js';
import { TelephonyError } from '../port.js';
import type { VapiAssistantConfig } from './assistant.js';

export const VAPI_REQUEST_TIMEOUT_MS = 10_000;

/** Of a phone number, the fields the adapter reads (Vapi's PhoneNumber union, every provider). */
export interface VapiPhoneNumber {
  id: string;
  /** E.164 for Twilio and Telnyx; Vonage keeps the digits without `+`. Absent on SIP-only numbers. */
  number: string | undefined;
  /** The union's discriminator (`twilio`, `vonage`, `vapi`, `telnyx`, `byo-phone-number`). */
  provider: string | undefined;
  /** Whether the number answers with a fixed assistant, squad or workflow (Vapi then sends no assistant-request). */
  answersItself: boolean;
  /** The number's own server URL, when it has one. */
  serverUrl: string | undefined;
}

/**
 * PATCH /phone-number/{id}: the number's server and, when it has one, its fixed assistant, squad or
 * workflow cleared with null (Vapi's guide clears `assistantId` so; the published schema types it
 * as a string, and Vapi's validation lets null through as "not set").
 */
export interface VapiUpdatePhoneNumberBody {
  provider?: string;
  server: { url: string; credentialId?: string };
  assistantId?: null;
  squadId?: null;
  workflowId?: null;
}

/** Vapi's CreateCallDTO, as far as the adapter fills it (test/support/engines/vapi-openapi.json). */
export interface VapiCreateCallBody {
  name: string;
  phoneNumberId: string;
  customer: { number: string; name?: string };
  /** The configured fields, absent on the bare assistant (VapiTelephonyOptions.findAgentVersion). */
  assistant: Partial<Omit<VapiAssistantConfig, 'model'>> & {
    name: string;
    firstMessage?: string;
    model: (VapiAssistantConfig['model'] | { provider: 'openai'; model: string }) & {
      messages: { role: 'system'; content: string }[];
    };
    serverMessages: string[];
    metadata: Record<string, string>;
    server: { url: string; credentialId?: string };
  };
}

export interface VapiClient {
  /** Every phone number of the organization (Vapi's `limit` tops out at 1000). */
  listPhoneNumbers(): Promise<VapiPhoneNumber[]>;
  /** Changes a phone number (its server URL, its fixed assistant). */
  updatePhoneNumber(id: string, body: VapiUpdatePhoneNumberBody): Promise<void>;
  /** Creates the call; answers Vapi's Call object (its `id` at least). */
  createCall(body: VapiCreateCallBody): Promise<Record<string, unknown> & { id: string }>;
  /** Vapi's Call object, as it stands now. */
  getCall(id: string): Promise<Record<string, unknown>>;
  /** Calls matching the filters (`GET /call`, CallController_findAll), as Vapi's Call objects. */
  listCalls(filters: VapiCallFilters): Promise<Record<string, unknown>[]>;
}

/** The query parameters of `GET /call` the adapter uses (all optional; times ISO 8601). */
export interface VapiCallFilters {
  phoneNumberId?: string;
  createdAtGe?: string;
  createdAtLe?: string;
  /** 0..1000; Vapi's default is 100. */
  limit?: number;
}

export interface VapiClientOptions {
  config: Pick<VapiConfig, 'apiKey' | 'apiBase'>;
  timeoutMs?: number;
}

const PHONE_NUMBER_PAGE = 1000;

/** Statuses worth asking again for: Vapi did not take the request, or is briefly unable to. */
const isTransientStatus = (status: number) => status === 408 || status === 429 || status >= 500;

/**
 * Whether a failed POST may still have created the call. A refused connection or an answer that
 * says "not taken" (408, 429, 503) did not; a timeout, a cut connection, a 500 or a gateway error
 * may have, and a second call to a person is worse than a lost one.
 */
function mayHaveCreated(failure: { status?: number; errorCode?: string }): boolean {
  if (failure.status !== undefined) return ![408, 429, 503].includes(failure.status) && failure.status >= 500;
  return !['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN'].includes(failure.errorCode ?? '');
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** Vapi's message becomes the call's failure_reason: kept readable whatever Vapi sends. */
const MAX_MESSAGE_LENGTH = 500;

/** Vapi's error answers are NestJS's `{ message: string | string[], error, statusCode }`. */
function vapiMessage(body: unknown): string | undefined {
  if (!isRecord(body)) return undefined;
  const parts = Array.isArray(body.message) ? body.message : [body.message ?? body.error];
  const message = parts.filter((part) => typeof part === 'string').join('; ');
  return message ? message.slice(0, MAX_MESSAGE_LENGTH) : undefined;
}

function networkErrorCode(error: unknown): string | undefined {
  const cause = (error as { cause?: { code?: unknown } })?.cause;
  return typeof cause?.code === 'string' ? cause.code : undefined;
}

const stringOf = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

function phoneNumberOf(entry: Record<string, unknown>, id: string): VapiPhoneNumber {
  const server = isRecord(entry.server) ? entry.server : {};
  return {
    id,
    number: stringOf(entry.number),
    provider: stringOf(entry.provider),
    answersItself: [entry.assistantId, entry.squadId, entry.workflowId].some((value) => stringOf(value)),
    serverUrl: stringOf(server.url),
  };
}

export function createVapiClient(options: VapiClientOptions): VapiClient {
  const { apiKey } = options.config;
  const apiBase = options.config.apiBase.replace(/\/+$/, '');
  const timeoutMs = options.timeoutMs ?? VAPI_REQUEST_TIMEOUT_MS;

  async function request(method: 'GET' | 'POST' | 'PATCH', path: string, body?: unknown): Promise<unknown> {
    const what = `Vapi ${method} ${path.split('?')[0]}`;
    const creates = method === 'POST';
    let response: Response;
    try {
      response = await fetch(`${apiBase}${path}`, {
        method,
        headers: {
          authorization: `Bearer ${apiKey}`,
          accept: 'application/json',
          ...(body === undefined ? {} : { 'content-type': 'application/json' }),
        },
        body: body === undefined ? undefined : JSON.stringify(body),
        signal: AbortSignal.timeout(timeoutMs),
        redirect: 'error',
      });
    } catch (error) {
      const timedOut = (error as Error)?.name === 'TimeoutError';
      const errorCode = networkErrorCode(error);
      const cause = timedOut ? `no answer within ${timeoutMs / 1000} s` : (errorCode ?? 'network error');
      throw new TelephonyError(`${what} failed: ${cause}.`, true, creates && mayHaveCreated({ errorCode }));
    }

    let answer: unknown;
    try {
      const text = await response.text();
      answer = text ? JSON.parse(text) : undefined;
    } catch (error) {
      // An error answer without a JSON body still says enough; a 2xx cut short or not JSON means
      // the request was taken and its result is unknown.
      if (response.ok) {
        const cause =
          (error as Error)?.name === 'TimeoutError' ? 'the answer timed out' : 'unreadable answer';
        throw new TelephonyError(`${what} failed: ${cause}.`, true, creates);
      }
    }
    if (response.ok) return answer;

    const status = response.status;
    const detail = vapiMessage(answer) ?? response.statusText;
    const message = `${what} answered ${status}${detail ? `: ${detail}` : ''}.`;
    if (isTransientStatus(status)) {
      throw new TelephonyError(message, true, creates && mayHaveCreated({ status }));
    }
    throw new TelephonyError(message, false);
  }

  return {
    async listPhoneNumbers() {
      const answer = await request('GET', `/phone-number?limit=${PHONE_NUMBER_PAGE}`);
      if (!Array.isArray(answer)) throw new TelephonyError('Vapi GET /phone-number answered no list.', true);
      return answer
        .filter(isRecord)
        .flatMap((entry) => (typeof entry.id === 'string' ? [phoneNumberOf(entry, entry.id)] : []));
    },

    async updatePhoneNumber(id, body) {
      await request('PATCH', `/phone-number/${encodeURIComponent(id)}`, body);
    },

    async createCall(body) {
      const answer = await request('POST', '/call', body);
      if (!isRecord(answer) || typeof answer.id !== 'string' || answer.id === '') {
        // Taken (2xx) but without a call id to follow it by: it may well be ringing.
        throw new TelephonyError('Vapi POST /call answered without a call id.', true, true);
      }
      return answer as Record<string, unknown> & { id: string };
    },

    async getCall(id) {
      const answer = await request('GET', `/call/${encodeURIComponent(id)}`);
      if (!isRecord(answer)) throw new TelephonyError('Vapi GET /call/{id} answered no call object.', true);
      return answer;
    },

    async listCalls(filters) {
      const query = new URLSearchParams();
      for (const [name, value] of Object.entries(filters)) {
        if (value !== undefined) query.set(name, String(value));
      }
      const answer = await request('GET', `/call?${query}`);
      if (!Array.isArray(answer)) throw new TelephonyError('Vapi GET /call answered no list.', true);
      return answer.filter(isRecord);
    },
  };
}
