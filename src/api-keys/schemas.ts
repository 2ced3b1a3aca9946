import { type Static, Type } from '@sinclair/typebox';
import { PageQuery, SortOrder } from '../core/db/pagination.js';
import { SCOPES } from '../core/http/auth.js';
import { Nullable, Timestamp } from '../core/http/schemas.js';

export { SCOPES, type Scope } from '../core/http/auth.js';

const ScopeName = Type.Union(SCOPES.map((s) => Type.Literal(s)));

/** A new key (operator API and console): the scopes it holds, its environment, a name. */
export const CreateApiKeyBody = Type.Object(
  {
    scopes: Type.Array(ScopeName, { minItems: 1, uniqueItems: true }),
    env: Type.Optional(Type.Union([Type.Literal('test'), Type.Literal('live')])),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    expires_at: Type.Optional(Nullable(Timestamp)),
  },
  { additionalProperties: false },
);
export type CreateApiKeyBody = Static<typeof CreateApiKeyBody>;

/** A key as the operator's list shows it: everything but the secret (only its hash is stored). */
export const ApiKey = Type.Object(
  {
    id: Type.String({ examples: ['key_5vQx2LmN8pRtW3yZ0bHc7dKs'] }),
    name: Nullable(Type.String()),
    env: Type.Union([Type.Literal('test'), Type.Literal('live')]),
    scopes: Type.Array(Type.String()),
    status: Type.Union([Type.Literal('active'), Type.Literal('revoked'), Type.Literal('expired')], {
      description: 'revoked wins over expired; only an active key authenticates.',
    }),
    created_at: Timestamp,
    expires_at: Nullable(Timestamp),
    revoked_at: Nullable(Timestamp),
    /** When the key last authenticated a request, to about a minute; null if never. */
    last_used_at: Nullable(Timestamp),
  },
  { additionalProperties: false },
);
export type ApiKey = Static<typeof ApiKey>;

export const ListApiKeysQuery = Type.Object({
  ...PageQuery,
  /** Keys are sorted by created_at only (then id). */
  sort_order: SortOrder,
});
export type ListApiKeysQuery = Static<typeof ListApiKeysQuery>;
