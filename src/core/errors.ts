/**
 * The one error family. Services throw ApiError (or return results the routes turn into one);
 * the handler in ./http/error-handler.ts writes every error as the envelope.
 */

export type ErrorCode =
  | 'invalid_request'
  | 'validation_failed'
  | 'authentication_failed'
  | 'permission_denied'
  | 'not_found'
  | 'conflict'
  | 'idempotency_key_reuse'
  | 'unprocessable_entity'
  | 'rate_limited'
  | 'internal_error'
  | 'service_unavailable'
  // Webhook-only codes (docs/design-choices.md).
  | 'insufficient_credits'
  | 'tenant_balance_exhausted'
  | 'agent_not_published'
  | 'agent_unavailable'
  | 'do_not_call';

/** The default status of each code; invalid_request also answers 413 and 415 (docs/design-choices.md). */
export const codeToStatus: Record<ErrorCode, number> = {
  invalid_request: 400,
  validation_failed: 422,
  authentication_failed: 401,
  permission_denied: 403,
  not_found: 404,
  conflict: 409,
  idempotency_key_reuse: 409,
  unprocessable_entity: 422,
  rate_limited: 429,
  internal_error: 500,
  service_unavailable: 503,
  insufficient_credits: 402,
  tenant_balance_exhausted: 402,
  agent_not_published: 409,
  agent_unavailable: 409,
  do_not_call: 409,
};

export interface FieldIssue {
  field?: string;
  issue: string;
}

export type ErrorDetails = FieldIssue[] | { required_scopes: string[] } | Record<string, unknown>;

export class ApiError extends Error {
  readonly status: number;
  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly details?: ErrorDetails,
    options: { status?: number; headers?: Record<string, string> } = {},
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = options.status ?? codeToStatus[code];
    this.headers = options.headers;
  }
  readonly headers?: Record<string, string>;
}

export const notFound = (what = 'Resource') => new ApiError('not_found', `${what} not found.`);
export const unprocessable = (message: string) => new ApiError('unprocessable_entity', message);
/** A call refused for a balance: the agency's wholesale wallet (docs/wallets.md), or the owner's credits. */
export const tenantBalanceExhausted = () =>
  new ApiError('tenant_balance_exhausted', 'The agency’s wholesale minutes are used up; no call was placed.');
export const insufficientCredits = () =>
  new ApiError('insufficient_credits', 'The agent’s owner has no credits left; no call was placed.');
export const validationFailed = (details: FieldIssue[]) =>
  new ApiError('validation_failed', 'The request has invalid fields.', details);
export const invalidRequest = (message: string, status = 400) =>
  new ApiError('invalid_request', message, undefined, { status });
/** A fault that passes by itself (the database, a worker thread): 503, retry after a second. */
export const temporarilyUnavailable = () =>
  new ApiError(
    'service_unavailable',
    'The service is temporarily unavailable; retry with backoff.',
    undefined,
    {
      headers: { 'retry-after': '1' },
    },
  );
