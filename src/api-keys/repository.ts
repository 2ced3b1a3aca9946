import { sql } from 'kysely';
import '../tenants/repository.js';
import type { Executor } from '../core/db/database.js';

export interface ApiKeysTable {
  id: string;
  tenant_id: string;
  name: string | null;
  env: 'live' | 'test';
  scopes: string[];
  key_hash: string;
  expires_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
  /** Written by the key verifier at most once a minute per key (about a minute late at most). */
  last_used_at: Date | null;
}

declare module '../core/db/database.js' {
  interface Tables {
    api_keys: ApiKeysTable;
  }
}

export async function insertApiKey(db: Executor, row: ApiKeysTable): Promise<ApiKeysTable> {
  return db.insertInto('api_keys').values(row).returningAll().executeTakeFirstOrThrow();
}

/**
 * Looks a presented key up by its hash (not tenant-scoped: the key is what names the tenant),
 * with its tenant's suspension read by the same statement (a primary-key join, no second query).
 */
export async function findApiKeyByHash(db: Executor, keyHash: string) {
  return db
    .selectFrom('api_keys as k')
    .innerJoin('tenants as t', 't.id', 'k.tenant_id')
    .select(['k.id', 'k.tenant_id', 'k.scopes', 'k.expires_at', 'k.revoked_at', 't.suspended_at'])
    .where('k.key_hash', '=', keyHash)
    .executeTakeFirst();
}

/** Revokes a key (a repeat keeps the first time); with a tenant, only that tenant's key. */
export async function revokeApiKey(db: Executor, id: string, at: Date, tenantId?: string) {
  let query = db
    .updateTable('api_keys')
    .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(at)) }))
    .where('id', '=', id);
  if (tenantId !== undefined) query = query.where('tenant_id', '=', tenantId);
  return query.returning(['id', 'tenant_id', 'revoked_at']).executeTakeFirst();
}

/** Records that the key authenticated a request at `at` (never moves the time backwards). */
export async function touchApiKeyLastUsed(db: Executor, id: string, at: Date): Promise<void> {
  await db
    .updateTable('api_keys')
    .set({ last_used_at: at })
    .where('id', '=', id)
    .where((eb) => eb.or([eb('last_used_at', 'is', null), eb('last_used_at', '<', at)]))
    .execute();
}

/** A tenant's keys, one page, each row with the total; never the hash. */
export async function listApiKeys(
  db: Executor,
  tenantId: string,
  options: { sortOrder: 'asc' | 'desc'; limit: number; offset: number },
) {
  const direction = options.sortOrder === 'asc' ? sql`ASC` : sql`DESC`;
  return db
    .selectFrom('api_keys')
    .select(['id', 'name', 'env', 'scopes', 'expires_at', 'revoked_at', 'created_at', 'last_used_at'])
    .select(sql<number>`count(*) over ()`.as('total'))
    .where('tenant_id', '=', tenantId)
    .orderBy(sql`created_at ${direction}, id ${direction}`)
    .limit(options.limit)
    .offset(options.offset)
    .execute();
}

export async function countApiKeys(db: Executor, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('api_keys')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
