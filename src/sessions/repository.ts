import type { Executor } from '../core/db.js';

export interface SessionsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  token_hash: string;
  expires_at: Date;
  revoked_at: Date | null;
  created_at: Date;
}

declare module '../core/db.js' {
  interface Tables {
    sessions: SessionsTable;
  }
}

export async function insertSession(db: Executor, row: SessionsTable): Promise<void> {
  await db.insertInto('sessions').values(row).execute();
}

/** The session of a presented token with its user, when the session is still usable. */
export async function findActiveSession(db: Executor, tokenHash: string, now: Date) {
  return db
    .selectFrom('sessions as s')
    .innerJoin('users as u', 'u.id', 's.user_id')
    .select(['s.id', 's.tenant_id', 's.user_id', 'u.status', 'u.deleted_at'])
    .where('s.token_hash', '=', tokenHash)
    .where('s.revoked_at', 'is', null)
    .where('s.expires_at', '>', now)
    .executeTakeFirst();
}

export async function revokeUserSessions(
  db: Executor,
  tenantId: string,
  userId: string,
  at: Date,
): Promise<void> {
  await db
    .updateTable('sessions')
    .set({ revoked_at: at })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('revoked_at', 'is', null)
    .execute();
}
