/**
 * One request to the partner API, retried when that is safe: 429 always (the service refused it
 * before doing anything), 503 and network failures when the request may be repeated (a read, a
 * PATCH, a write that takes an Idempotency-Key, or one the API documents as idempotent), a 409
 * for an Idempotency-Key still in flight. The wait is the answer's Retry-After, or an exponential
 * back-off with jitter.
 */
import { VoiceplaneConnectionError, VoiceplaneError } from './errors.js';

export const SDK_VERSION = '0.1.0';

export interface ClientOptions {
  /** A partner API key (`vp_live_…` / `vp_test_…`); sessions and webhooks need none. */
  apiKey?: string;
  /** The service's address, e.g. `https://api.example-agency.com`. */
  baseUrl: string;
  /** Retries after the first attempt (default 2). */
  maxRetries?: number;
  /** Per attempt (default 30 s). */
  timeoutMs?: number;
  /** A Retry-After longer than this is not waited for: the error is raised (default 10 s). */
  maxRetryDelayMs?: number;
  /** For tests and runtimes without a global fetch. */
  fetch?: typeof fetch;
}

export interface RequestOptions {
  /** Sent as Idempotency-Key; generated when the operation accepts one and none is given. */
  idempotencyKey?: string;
  /** A user session token (`vps_…`) instead of the API key: /auth/v1 routes. */
  bearer?: string;
  signal?: AbortSignal;
}

export interface ApiRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';
  path: string;
  query?: object;
  body?: unknown;
  /** The operation accepts an Idempotency-Key (the OpenAPI document lists the header). */
  acceptsIdempotencyKey?: boolean;
  /** Repeating it has no further effect (the API says so): it may be sent again after a lost answer. */
  naturallyIdempotent?: boolean;
  options?: RequestOptions;
}

export type Transport = <T>(request: ApiRequest) => Promise<T>;

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    if (signal?.aborted) return reject(signal.reason);
    const abort = () => {
      clearTimeout(timer);
      reject(signal?.reason);
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', abort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', abort, { once: true });
  });
}

/** Seconds, or an HTTP date; undefined when absent or unreadable. */
function retryAfterMs(headers: Headers): number | undefined {
  const value = headers.get('retry-after');
  if (!value) return undefined;
  if (/^\d+(\.\d+)?$/.test(value)) return Number(value) * 1000;
  const at = Date.parse(value);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

function backoffMs(retry: number): number {
  const ceiling = Math.min(8_000, 500 * 2 ** retry);
  return ceiling / 2 + Math.random() * (ceiling / 2);
}

function urlOf(baseUrl: string, path: string, query: object | undefined): string {
  // Relative to the base's own path (a deployment behind `https://host/voice/`), not the host's root.
  const url = new URL(path.replace(/^\/+/, ''), baseUrl.endsWith('/') ? baseUrl : `${baseUrl}/`);
  for (const [name, value] of Object.entries(query ?? {})) {
    if (value !== undefined && value !== null) url.searchParams.set(name, String(value));
  }
  return url.toString();
}

async function errorOf(response: Response): Promise<VoiceplaneError> {
  const text = await response.text().catch(() => '');
  let envelope: { error?: { code?: unknown; message?: unknown; details?: unknown }; request_id?: unknown } =
    {};
  try {
    envelope = JSON.parse(text);
  } catch {}
  const requestId =
    typeof envelope.request_id === 'string'
      ? envelope.request_id
      : (response.headers.get('x-request-id') ?? undefined);
  const error = envelope.error;
  if (!error || typeof error.code !== 'string' || typeof error.message !== 'string') {
    return new VoiceplaneError({
      status: response.status,
      code: 'unexpected_response',
      message: `HTTP ${response.status} without the service's error envelope: ${text.slice(0, 200)}`,
      requestId,
      headers: response.headers,
    });
  }
  return new VoiceplaneError({
    status: response.status,
    code: error.code as VoiceplaneError['code'],
    message: error.message,
    details: error.details as VoiceplaneError['details'],
    requestId,
    headers: response.headers,
  });
}

export function createTransport(options: ClientOptions): Transport {
  const fetcher = options.fetch ?? globalThis.fetch;
  const maxRetries = options.maxRetries ?? 2;
  const timeoutMs = options.timeoutMs ?? 30_000;
  const maxRetryDelayMs = options.maxRetryDelayMs ?? 10_000;

  return async function send<T>(request: ApiRequest): Promise<T> {
    const { method, options: perRequest = {} } = request;
    if (perRequest.idempotencyKey !== undefined && !request.acceptsIdempotencyKey) {
      // The service would ignore it, and a retry would then act twice.
      throw new TypeError(`${method} ${request.path} does not take an Idempotency-Key`);
    }
    const idempotencyKey =
      perRequest.idempotencyKey ??
      (request.acceptsIdempotencyKey ? globalThis.crypto.randomUUID() : undefined);
    // PATCH and PUT set fields to the values sent: sent twice, the same state.
    const repeatable =
      method === 'GET' ||
      method === 'PATCH' ||
      method === 'PUT' ||
      request.acceptsIdempotencyKey === true ||
      request.naturallyIdempotent === true;
    const headers: Record<string, string> = {
      accept: 'application/json',
      'user-agent': `voiceplane-sdk-node/${SDK_VERSION}`,
    };
    const bearer = perRequest.bearer ?? options.apiKey;
    if (bearer) headers.authorization = `Bearer ${bearer}`;
    if (idempotencyKey !== undefined) headers['idempotency-key'] = idempotencyKey;
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    const url = urlOf(options.baseUrl, request.path, request.query);
    const body = request.body === undefined ? undefined : JSON.stringify(request.body);

    for (let retry = 0; ; retry++) {
      const timeout = AbortSignal.timeout(timeoutMs);
      const signal = perRequest.signal ? AbortSignal.any([perRequest.signal, timeout]) : timeout;
      let response: Response;
      try {
        response = await fetcher(url, { method, headers, body, signal });
      } catch (cause) {
        if (perRequest.signal?.aborted) throw cause;
        // A refused connection never reached the service: any request may be sent again.
        const refused = (cause as { cause?: { code?: string } })?.cause?.code === 'ECONNREFUSED';
        if (retry < maxRetries && (repeatable || refused)) {
          await sleep(backoffMs(retry), perRequest.signal);
          continue;
        }
        const reason = timeout.aborted
          ? `no answer within ${timeoutMs} ms`
          : String((cause as Error)?.message);
        throw new VoiceplaneConnectionError(`${method} ${request.path}: ${reason}`, { cause });
      }
      if (response.ok) {
        let text: string;
        try {
          text = await response.text();
        } catch (cause) {
          throw new VoiceplaneConnectionError(`${method} ${request.path}: the answer was cut off`, { cause });
        }
        try {
          return (text ? JSON.parse(text) : undefined) as T;
        } catch {
          throw new VoiceplaneError({
            status: response.status,
            code: 'unexpected_response',
            message: `HTTP ${response.status} with a body that is not JSON: ${text.slice(0, 200)}`,
            requestId: response.headers.get('x-request-id') ?? undefined,
            headers: response.headers,
          });
        }
      }
      const error = await errorOf(response);
      const retryable =
        response.status === 429 ||
        (response.status === 503 && repeatable) ||
        (response.status === 409 && idempotencyKey !== undefined && response.headers.has('retry-after'));
      const wait = retryAfterMs(response.headers) ?? backoffMs(retry);
      if (!retryable || retry >= maxRetries || wait > maxRetryDelayMs) throw error;
      await sleep(wait, perRequest.signal);
    }
  };
}
