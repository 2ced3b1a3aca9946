/**
 * Partner API keys: `<prefix>_<live|test>_<32 base62>`. Only a SHA-256 of the key is stored (the
 * key carries ~190 bits of randomness, so a fast hash is enough). Verified keys are cached for
 * at most CACHE_TTL_MS so the hot path skips the database while a revocation still takes effect
 * on every process within a second.
 */

import { writeAudited } from '../core/audit/record.js';
import { BoundedMap } from '../core/bounded-map.js';
import type { Clock } from '../core/clock.js';
import type { Db, Executor } from '../core/db/database.js';
import { listPage } from '../core/db/pagination.js';
import { notFound, validationFailed } from '../core/errors.js';
import { newId, randomBase62, sha256Hex } from '../core/ids.js';
import {
  type ApiKeysTable,
  countApiKeys,
  findApiKeyByHash,
  insertApiKey,
  listApiKeys as listApiKeyRows,
  revokeApiKey as revokeApiKeyRow,
  touchApiKeyLastUsed,
} from './repository.js';
import type { ApiKey, CreateApiKeyBody, ListApiKeysQuery } from './schemas.js';

export { SCOPES, type Scope } from './schemas.js';

import type { KeyVerifier } from '../core/http/auth.js';

export type { ApiKeyPrincipal, KeyVerifier, VerifyResult } from '../core/http/auth.js';

export const CACHE_TTL_MS = 500;
/** A key's last_used_at is written at most this often per process (the rest is in memory). */
export const LAST_USED_EVERY_MS = 60_000;
const CACHE_MAX_ENTRIES = 10_000;

export function keyPattern(prefix: string): RegExp {
  return new RegExp(`^${prefix}_(live|test)_[0-9A-Za-z]{32}$`);
}

export async function issueApiKey(
  db: Executor,
  clock: Clock,
  input: {
    tenantId: string;
    prefix: string;
    env: 'live' | 'test';
    scopes: string[];
    name: string | null;
    expiresAt: Date | null;
  },
): Promise<{ key: string; row: ApiKeysTable }> {
  const key = `${input.prefix}_${input.env}_${randomBase62(32)}`;
  const row = await insertApiKey(db, {
    id: newId('key'),
    tenant_id: input.tenantId,
    name: input.name,
    env: input.env,
    scopes: [...new Set(input.scopes)],
    key_hash: sha256Hex(key),
    expires_at: input.expiresAt,
    revoked_at: null,
    created_at: clock.now(),
    last_used_at: null,
  });
  return { key, row };
}

/** The answer to creating a key: the only time its secret is shown. */
export interface IssuedKey {
  id: string;
  key: string;
  env: string;
  scopes: string[];
  name: string | null;
  expires_at: string | null;
  created_at: string;
}

/** Creates a key for the tenant (a body valid under CreateApiKeyBody); the operator route and the console call this. */
export async function createApiKey(
  deps: { db: Db; clock: Clock; keyPrefix: string },
  tenantId: string,
  body: CreateApiKeyBody,
): Promise<IssuedKey> {
  const { expires_at: expiresAt } = body;
  if (expiresAt && new Date(expiresAt) <= deps.clock.now()) {
    throw validationFailed([{ field: 'expires_at', issue: 'must be in the future.' }]);
  }
  const { key, row } = await writeAudited(
    deps.db,
    (executor) =>
      issueApiKey(executor, deps.clock, {
        tenantId,
        prefix: deps.keyPrefix,
        env: body.env ?? 'test',
        scopes: body.scopes,
        name: body.name ?? null,
        expiresAt: expiresAt ? new Date(expiresAt) : null,
      }),
    ({ row }) => ({
      action: 'api_key.created',
      tenantId,
      objectType: 'api_key',
      objectId: row.id,
      fields: Object.keys(body),
      at: row.created_at,
    }),
  );
  return {
    id: row.id,
    key,
    env: row.env,
    scopes: row.scopes,
    name: row.name,
    expires_at: row.expires_at?.toISOString() ?? null,
    created_at: row.created_at.toISOString(),
  };
}

type ListedKey = Omit<ApiKeysTable, 'tenant_id' | 'key_hash'>;

function toApiKey(row: ListedKey, now: Date): ApiKey {
  return {
    id: row.id,
    name: row.name,
    env: row.env,
    scopes: row.scopes,
    status:
      row.revoked_at && row.revoked_at <= now
        ? 'revoked'
        : row.expires_at && row.expires_at <= now
          ? 'expired'
          : 'active',
    created_at: row.created_at.toISOString(),
    expires_at: row.expires_at?.toISOString() ?? null,
    revoked_at: row.revoked_at?.toISOString() ?? null,
    last_used_at: row.last_used_at?.toISOString() ?? null,
  };
}

/** One page of a tenant's keys for the operator, newest first by default; never a secret. */
export async function listApiKeys(db: Db, clock: Clock, tenantId: string, query: ListApiKeysQuery) {
  const now = clock.now();
  return listPage(
    query,
    (limit, offset) => listApiKeyRows(db, tenantId, { sortOrder: query.sort_order, limit, offset }),
    () => countApiKeys(db, tenantId),
    (row: ListedKey) => toApiKey(row, now),
  );
}

/**
 * Revokes a key now (a repeat answers the first revocation) and forgets this process's cached
 * keys; other processes stop accepting it within CACHE_TTL_MS. With a tenant (the console), another
 * tenant's key is not found. The operator route and the console page both call this.
 */
export async function revokeApiKey(
  deps: { db: Db; clock: Clock; verifier: KeyVerifier },
  keyId: string,
  tenantId?: string,
): Promise<{ id: string; revoked_at: string }> {
  const now = deps.clock.now();
  const row = await writeAudited(
    deps.db,
    (executor) => revokeApiKeyRow(executor, keyId, now, tenantId),
    (revoked) =>
      revoked?.revoked_at?.getTime() === now.getTime() && {
        action: 'api_key.revoked',
        tenantId: revoked.tenant_id,
        objectType: 'api_key',
        objectId: revoked.id,
        fields: ['revoked_at'],
        at: now,
      },
  );
  if (!row?.revoked_at) throw notFound('API key');
  deps.verifier.invalidate();
  return { id: row.id, revoked_at: row.revoked_at.toISOString() };
}

interface CacheEntry {
  fetchedAt: number;
  row: Awaited<ReturnType<typeof findApiKeyByHash>>;
}

export function createKeyVerifier(options: {
  db: Db;
  clock: Clock;
  prefix: string;
  ttlMs?: number;
  /** Where a failed last_used_at write is reported (it never fails the request). */
  logger?: { warn(obj: object, msg: string): void };
}): KeyVerifier {
  const { db, clock } = options;
  /** Key id → clock time (ms) of this process's last last_used_at write for it. */
  const lastWritten = new BoundedMap<string, number>({ maxEntries: CACHE_MAX_ENTRIES });

  /** Fire and forget: the request never waits for this write, and a failure is only logged. */
  function noteUse(keyId: string, now: Date) {
    const previous = lastWritten.get(keyId);
    if (previous !== undefined && now.getTime() - previous < LAST_USED_EVERY_MS) return;
    lastWritten.set(keyId, now.getTime());
    touchApiKeyLastUsed(db, keyId, now).catch((error: unknown) => {
      options.logger?.warn({ err: error, keyId }, 'could not record when the API key was last used');
    });
  }

  const ttlMs = options.ttlMs ?? CACHE_TTL_MS;
  const pattern = keyPattern(options.prefix);
  const cache = new BoundedMap<string, CacheEntry>({ maxEntries: CACHE_MAX_ENTRIES });
  const inFlight = new Map<string, Promise<CacheEntry>>();

  async function lookup(hash: string): Promise<CacheEntry> {
    const cached = cache.get(hash);
    if (cached && Date.now() - cached.fetchedAt < ttlMs) return cached;
    let pending = inFlight.get(hash);
    if (!pending) {
      // The entry is as old as the moment the query started: a revocation committed while it
      // waited for a connection must not be hidden for a further full TTL.
      const startedAt = Date.now();
      pending = findApiKeyByHash(db, hash)
        .then((row) => {
          const entry = { fetchedAt: startedAt, row };
          cache.set(hash, entry);
          return entry;
        })
        .finally(() => inFlight.delete(hash));
      inFlight.set(hash, pending);
    }
    return pending;
  }

  return {
    async verify(presented) {
      if (!pattern.test(presented)) return { ok: false, reason: 'malformed' };
      const { row } = await lookup(sha256Hex(presented));
      if (!row) return { ok: false, reason: 'unknown' };
      const now = clock.now();
      if (row.revoked_at && row.revoked_at <= now) return { ok: false, reason: 'revoked' };
      if (row.expires_at && row.expires_at <= now) return { ok: false, reason: 'expired' };
      if (row.suspended_at) return { ok: false, reason: 'suspended' };
      noteUse(row.id, now);
      return { ok: true, principal: { keyId: row.id, tenantId: row.tenant_id, scopes: new Set(row.scopes) } };
    },
    invalidate() {
      cache.clear();
    },
  };
}
