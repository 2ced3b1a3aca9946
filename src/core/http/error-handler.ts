/**
 * The one place errors become HTTP answers: every non-2xx answer is the envelope
 * `{ error: { code, message, details? }, request_id }`, and 5xx answers never leak internals.
 */
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import type { ConnectionError, FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { isReportedOutage } from '../db/health.js';
import { isTemporarilyUnavailable } from '../db/outages.js';
import {
  ApiError,
  codeToStatus,
  type ErrorCode,
  type ErrorDetails,
  temporarilyUnavailable,
} from '../errors.js';
import { newRequestId } from '../ids.js';
import { MAX_HEADER_BYTES } from './server.js';

export interface ErrorEnvelope {
  error: { code: ErrorCode; message: string; details?: ErrorDetails };
  request_id: string;
}

export function envelope(request: FastifyRequest, error: ApiError): ErrorEnvelope {
  const body: ErrorEnvelope = { error: { code: error.code, message: error.message }, request_id: request.id };
  if (error.details !== undefined) body.error.details = error.details;
  return body;
}

export function sendApiError(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.headers) reply.headers(error.headers);
  return reply.code(error.status).send(envelope(request, error));
}

/**
 * Maps anything thrown to an ApiError; unknown errors become 500 and are logged by the caller
 * (`unexpected`). A database outage is 503 with Retry-After (the list is core/db/outages.ts); the
 * failures the database health tracker has already logged as part of an outage are not logged
 * again per request.
 */
export function toApiError(error: unknown): { apiError: ApiError; unexpected: boolean } {
  if (error instanceof ApiError) return { apiError: error, unexpected: false };
  const e = error as FastifyError & { code?: string; statusCode?: number };
  const sqlState = typeof e?.code === 'string' && /^[0-9A-Z]{5}$/.test(e.code) ? e.code : undefined;
  if (sqlState === '23505') {
    return {
      apiError: new ApiError('conflict', 'The request conflicts with an existing resource.'),
      unexpected: false,
    };
  }
  if (sqlState === '22003') {
    // numeric_value_out_of_range: a sum the request asked for (a balance, a count) overflows its column.
    return {
      apiError: new ApiError(
        'unprocessable_entity',
        'The change would take a stored value out of the range it can hold; nothing was changed.',
      ),
      unexpected: false,
    };
  }
  if (isTemporarilyUnavailable(error)) {
    return { apiError: temporarilyUnavailable(), unexpected: !isReportedOutage(error) };
  }
  const status = e?.statusCode;
  if (status === 413) {
    return {
      apiError: new ApiError('invalid_request', 'The request body is too large.', undefined, { status }),
      unexpected: false,
    };
  }
  if (status === 415) {
    return {
      apiError: new ApiError(
        'invalid_request',
        'The request body must be sent as Content-Type: application/json.',
        undefined,
        {
          status,
        },
      ),
      unexpected: false,
    };
  }
  if (status === 404)
    return { apiError: new ApiError('not_found', 'Resource not found.'), unexpected: false };
  if (typeof status === 'number' && status >= 400 && status < 500) {
    const message =
      e instanceof SyntaxError || e?.code === 'FST_ERR_CTP_EMPTY_JSON_BODY' || /JSON/i.test(e?.message ?? '')
        ? 'The request body is not valid JSON.'
        : e.message;
    return {
      apiError: new ApiError('invalid_request', message, undefined, { status: 400 }),
      unexpected: false,
    };
  }
  return { apiError: new ApiError('internal_error', 'An unexpected error occurred.'), unexpected: true };
}

/**
 * Fastify's `frameworkErrors` option: what the router answers before any hook runs (a malformed
 * percent-encoding in the path, a path parameter over the router's length limit), in the envelope
 * with X-Request-Id like every other answer.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header('x-request-id', request.id);
  const apiError =
    error.code === 'FST_ERR_MAX_PARAM_LENGTH'
      ? // No object has an id that long.
        new ApiError('not_found', 'Resource not found.')
      : error.code === 'FST_ERR_BAD_URL'
        ? new ApiError('invalid_request', 'The request URL is malformed (invalid percent-encoding).')
        : toApiError(error).apiError;
  sendApiError(request, reply, apiError);
}

/** What the HTTP parser refused, before any request object exists. */
function clientErrorAnswer(code: string): { status: number; message: string } {
  if (code === 'HPE_HEADER_OVERFLOW')
    return {
      status: 431,
      message: `The request headers are too large (at most ${MAX_HEADER_BYTES / 1024} KiB in all).`,
    };
  if (code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return { status: 408, message: 'The request was not received in time.' };
  return { status: 400, message: 'The request is not valid HTTP.' };
}

/**
 * Fastify's `clientErrorHandler` option: what Node's HTTP parser refuses (headers over the size
 * limit, a request not received within the server's timeouts, malformed HTTP) never reaches
 * routing, so Fastify would write its own bare body. Written here as the envelope with a fresh
 * request id, in the header and the body like every other answer; the connection is closed.
 */
export function clientErrorHandler(this: FastifyInstance, error: ConnectionError, socket: Socket): void {
  // A reset connection has nobody to answer (https://nodejs.org/api/http.html#event-clienterror).
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const { status, message } = clientErrorAnswer(error.code);
  const requestId = newRequestId();
  // Never the error itself: its rawPacket holds the request's bytes, credentials included.
  this.log.info({ reqId: requestId, code: error.code, status }, 'request refused by the HTTP parser');
  if (socket.writable) {
    const body = JSON.stringify({ error: { code: 'invalid_request', message }, request_id: requestId });
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\n` +
        'Content-Type: application/json; charset=utf-8\r\n' +
        `Content-Length: ${Buffer.byteLength(body)}\r\n` +
        `X-Request-Id: ${requestId}\r\n` +
        'Connection: close\r\n\r\n' +
        body,
    );
  }
  socket.destroy(error);
}

export function registerErrorHandling(app: FastifyInstance): void {
  app.setErrorHandler((error, request, reply) => {
    const { apiError, unexpected } = toApiError(error);
    if (unexpected) request.log.error({ err: error }, 'request failed');
    return sendApiError(request, reply, apiError);
  });
  app.setNotFoundHandler(noRoute);
}

/**
 * The 404 of a URL no route answers. Registered again inside the partner API's scope, so an
 * unknown /api/v1 URL first goes through that scope's hooks, like any partner request: without a
 * valid key it is 401, with one it is counted against the key's rate limit and carries the
 * RateLimit-* headers (docs/design-choices.md: "on every answer").
 */
export function noRoute(request: FastifyRequest, reply: FastifyReply): FastifyReply {
  return sendApiError(
    request,
    reply,
    new ApiError('not_found', `No route ${request.method} ${request.url.split('?')[0]}.`),
  );
}

export { codeToStatus };
