/** Shapes shared by every route: envelopes, error responses, timestamps. */
import { type TSchema, Type } from '@sinclair/typebox';
import { Pagination } from './pagination.js';

export const Nullable = <T extends TSchema>(schema: T) => Type.Union([schema, Type.Null()]);

export const Timestamp = Type.String({ format: 'date-time', examples: ['2026-11-21T10:00:00.000Z'] });

/** E.164 (decisions.md §2). */
export const PHONE_PATTERN = '^\\+[1-9][0-9]{6,14}$';
export const Phone = Type.String({ pattern: PHONE_PATTERN, examples: ['+14155550123'] });
export const Email = Type.String({ format: 'email', maxLength: 254, examples: ['ada@example.com'] });

export const ErrorEnvelope = Type.Object(
  {
    error: Type.Object({
      code: Type.String({
        description: 'Stable machine-readable code.',
        examples: ['validation_failed'],
      }),
      message: Type.String({ description: 'Human-readable; may change; do not parse.' }),
      details: Type.Optional(
        Type.Union([
          Type.Array(Type.Object({ field: Type.Optional(Type.String()), issue: Type.String() })),
          Type.Object({ required_scopes: Type.Array(Type.String()) }),
          Type.Object({}, { additionalProperties: true }),
        ]),
      ),
    }),
    request_id: Type.String({ description: 'Equals the X-Request-Id response header.' }),
  },
  {
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
  402: 'The agent owner has no credits left (insufficient_credits).',
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

/** Error responses of a route, all in the envelope. */
export function errorResponses(...statuses: number[]) {
  const responses: Record<number, TSchema> = {};
  for (const status of statuses) {
    responses[status] = Type.Ref('ErrorEnvelope', { description: ERROR_DESCRIPTIONS[status] ?? 'Error.' });
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

export const IdempotencyKeyHeader = Type.Object({
  'idempotency-key': Type.Optional(
    Type.String({
      maxLength: 255,
      description:
        'Optional. At most 255 printable ASCII characters; retries with the same key and body within 24 hours return the original answer.',
    }),
  ),
});
