import { type Static, Type } from '@sinclair/typebox';
import { PageQuery, SortOrder } from '../core/pagination.js';
import { Nullable, Timestamp } from '../core/schemas.js';

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
