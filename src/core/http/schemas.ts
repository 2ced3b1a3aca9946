/** Shapes shared by every route: envelopes, error responses, timestamps. */
import { type TSchema, Type } from '@sinclair/typebox';
import { Pagination } from '../db/pagination.js';
import { codeToStatus, type ErrorCode } from '../errors.js';

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

/** A calendar month in UTC, `YYYY-MM`, years 2000 to 2099 (JavaScript dates shift years 0–99). */
export const MONTH_PATTERN = '^20[0-9]{2}-(0[1-9]|1[0-2])$';
export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-21T10:00:00.000Z'] });

/** E.164 (docs/design-choices.md). */
export const PHONE_PATTERN = '^\\+[1-9][0-9]{6,14}$';
/** What a refused phone number is told: what E.164 looks like, with an example. */
export const PHONE_ISSUE = 'must be in E.164 format: + then the country code and number, e.g. +14155550123.';
export const Phone = Type.String({ pattern: PHONE_PATTERN, examples: ['+14155550123'] });
export const Email = Type.String({ format: 'email', maxLength: 254, examples: ['ada@example.com'] });

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: Type.Unsafe<ErrorCode>({
        type: 'string',
        enum: Object.keys(codeToStatus),
        title: 'ErrorCode',
        description: 'Stable machine-readable code; each error response lists the codes it can carry.',
        examples: ['validation_failed'],
      }),
      message: Type.String({
        description: 'Human-readable; may change; do not parse.',
        examples: ['The request has invalid fields.'],
      }),
      details: Type.Optional(
        Type.Union([
          Type.Array(
            Type.Object({
              field: Type.Optional(Type.String({ examples: ['email'] })),
              issue: Type.String({ examples: ['must be a valid email address.'] }),
            }),
            { description: 'validation_failed: one entry per offending field.' },
          ),
          Type.Object(
            { required_scopes: Type.Array(Type.String({ examples: ['users:write'] })) },
            { description: 'permission_denied: the scope the key lacks.' },
          ),
          Type.Object({}, { additionalProperties: true }),
        ]),
      ),
    }),
    request_id: Type.String({
      description: 'Equals the X-Request-Id response header.',
      examples: ['req_8fJ2kLmN0pQrStUv'],
    }),
  },
  {
    title: 'ErrorEnvelope',
    examples: [
      {
        error: {
          code: 'validation_failed',
          message: 'The request body failed validation.',
          details: [{ field: 'email', issue: 'must be a valid email address.' }],
        },
        request_id: 'req_8fJ2kLmN0pQrStUv',
      },
    ],
  },
);

const ERROR_DESCRIPTIONS: Record<number, string> = {
  400: 'Malformed request (invalid_request): bad JSON, a body that is not an object, a bad Idempotency-Key.',
  401: 'Missing, malformed, revoked, expired or unknown credentials (authentication_failed).',
  402: 'The agency’s wholesale minutes are used up (tenant_balance_exhausted), or the agent owner has no credits left (insufficient_credits).',
  403: 'The API key lacks the required scope (permission_denied); details.required_scopes lists it.',
  404: 'Not found in the caller’s tenant (not_found).',
  409: 'Conflict (conflict) or Idempotency-Key reused with another body (idempotency_key_reuse).',
  413: 'The request body is too large (invalid_request).',
  415: 'The request body is not JSON (invalid_request).',
  422: 'Invalid fields (validation_failed, with details) or a business rule (unprocessable_entity).',
  429: 'Rate limit exceeded (rate_limited); Retry-After gives the seconds to wait.',
  500: 'Unexpected server error (internal_error), identified by request_id.',
  503: 'Temporarily unavailable (service_unavailable); retry with exponential backoff.',
};

/** What a code means where a route narrows a status to it. */
const NARROWED_DESCRIPTIONS: Partial<Record<ErrorCode, string>> = {
  agent_not_published: 'The agent has no published version (agent_not_published)',
  agent_unavailable: 'The agent’s owner is blocked (agent_unavailable)',
  do_not_call: 'The number is on the tenant’s do-not-call list (do_not_call)',
  conflict: 'A request with this Idempotency-Key is still running (conflict)',
  idempotency_key_reuse: 'The Idempotency-Key was used with another body (idempotency_key_reuse)',
  unprocessable_entity:
    'A business rule refused the request, such as a do-not-call number (unprocessable_entity)',
  validation_failed: 'Invalid fields (validation_failed, with details)',
};

/**
 * Error responses of a route, all in the envelope. A status given as `[status, codes]` narrows the
 * codes the document publishes for it (by default every code of that status, core/http/openapi-document.ts).
 */
export function errorResponses(...statuses: (number | [number, ErrorCode[]])[]) {
  const responses: Record<number, TSchema> = {};
  for (const entry of statuses) {
    const [status, codes] = typeof entry === 'number' ? [entry, undefined] : entry;
    const description = codes
      ? `${codes.map((code) => NARROWED_DESCRIPTIONS[code] ?? code).join('; ')}.`
      : (ERROR_DESCRIPTIONS[status] ?? 'Error.');
    responses[status] = Type.Ref('ErrorEnvelope', {
      description,
      ...(codes ? { 'x-error-codes': codes } : {}),
    });
  }
  return responses;
}

/** The errors every authenticated partner route can answer. */
export const PARTNER_ERRORS = [400, 401, 403, 413, 415, 422, 429, 500, 503];

export const DataEnvelope = <T extends TSchema>(data: T, description?: string) =>
  Type.Object({ data }, { additionalProperties: false, description });

export const ListEnvelope = <T extends TSchema>(item: T, description?: string) =>
  Type.Object(
    { data: Type.Array(item), pagination: Pagination },
    { additionalProperties: false, description },
  );

export const IdParam = Type.Object({ id: Type.String({ minLength: 1, maxLength: 255 }) });

/** The `{id}` path parameter of one resource, described and with a realistic example. */
export const resourceIdParam = (description: string, example: string) =>
  Type.Object({ id: Type.String({ minLength: 1, maxLength: 255, description, examples: [example] }) });

export const IdempotencyKeyHeader = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      maxLength: 255,
      description:
        'Optional. At most 255 printable ASCII characters; retries with the same key and body within 24 hours return the original answer.',
      examples: ['onboard-ada-1'],
    }),
  ),
});
