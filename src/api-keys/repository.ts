import type { Executor } from '../core/db.js';

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
}

declare module '../core/db.js' {
  interface Tables {
    api_keys: ApiKeysTable;
  }
}

export async function insertApiKey(db: Executor, row: ApiKeysTable): Promise<ApiKeysTable> {
  return db.insertInto('api_keys').values(row).returningAll().executeTakeFirstOrThrow();
}

/** Looks a presented key up by its hash (not tenant-scoped: the key is what names the tenant). */
export async function findApiKeyByHash(db: Executor, keyHash: string) {
  return db
    .selectFrom('api_keys')
    .select(['id', 'tenant_id', 'scopes', 'expires_at', 'revoked_at'])
    .where('key_hash', '=', keyHash)
    .executeTakeFirst();
}

export async function revokeApiKey(db: Executor, id: string, at: Date) {
  return db
    .updateTable('api_keys')
    .set((eb) => ({ revoked_at: eb.fn.coalesce('revoked_at', eb.val(at)) }))
    .where('id', '=', id)
    .returning(['id', 'revoked_at'])
    .executeTakeFirst();
}
