/**
 * How a surface of HTML pages (the console, the client portal) answers what a page threw: a page,
 * never the JSON envelope. A refused CSRF token says to reload; anything unexpected is logged and
 * shown only with the request id; an ApiError shows its message with its status (and headers).
 */
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { ApiError } from '../core/errors.js';
import { toApiError } from '../core/http/error-handler.js';

export function pageErrorHandler(options: {
  /** Names the surface in the log line of an unexpected error. */
  surface: string;
  /** The message of a refused CSRF token. */
  csrfRefused: string;
  /** The message a page shows for an error: by default the ApiError's, a generic one for 5xx. */
  messageOf?: (apiError: ApiError, request: FastifyRequest) => string | undefined;
  page: (reply: FastifyReply, status: number, message: string) => unknown;
}) {
  return (error: FastifyError, request: FastifyRequest, reply: FastifyReply) => {
    if (error.code?.startsWith('FST_CSRF')) return options.page(reply, 403, options.csrfRefused);
    const { apiError, unexpected } = toApiError(error);
    if (unexpected) request.log.error({ err: error }, `${options.surface} page failed`);
    if (apiError.headers) reply.headers(apiError.headers);
    const message =
      options.messageOf?.(apiError, request) ??
      (apiError.status >= 500
        ? `Something went wrong on our side (request ${request.id}). Please try again.`
        : apiError.message);
    return options.page(reply, apiError.status, message);
  };
}
