import type { Executor } from '../core/db/database.js';

export interface SessionsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  token_hash: string;
  expires_at: Date;
  revoked_at: Date | null;
  created_at: Date;
}

declare module '../core/db/database.js' {
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

/** Revokes one session if it is still usable; false when it was already revoked or expired. */
export async function revokeSession(db: Executor, sessionId: string, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('sessions')
    .set({ revoked_at: at })
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', at)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

export interface PasswordResetsTable {
  id: string;
  tenant_id: string;
  user_id: string;
  token_hash: string;
  expires_at: Date;
  used_at: Date | null;
  created_at: Date;
}

declare module '../core/db/database.js' {
  interface Tables {
    password_resets: PasswordResetsTable;
  }
}

export async function insertPasswordReset(db: Executor, row: PasswordResetsTable): Promise<void> {
  await db.insertInto('password_resets').values(row).execute();
}

/** Whether a reset token is unused and unexpired (a cheap look before hashing the new password). */
export async function isPasswordResetUsable(db: Executor, tokenHash: string, now: Date): Promise<boolean> {
  const row = await db
    .selectFrom('password_resets')
    .select('id')
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Uses a reset token: marks it used if it is unused and unexpired, in one statement, so two
 * requests with the same token cannot both succeed. Answers whose token it was.
 */
export async function usePasswordReset(db: Executor, tokenHash: string, now: Date) {
  return db
    .updateTable('password_resets')
    .set({ used_at: now })
    .where('token_hash', '=', tokenHash)
    .where('used_at', 'is', null)
    .where('expires_at', '>', now)
    .returning(['tenant_id', 'user_id'])
    .executeTakeFirst();
}

/** Ends every other outstanding reset of the user (a new password makes older links moot). */
export async function endPasswordResets(
  db: Executor,
  tenantId: string,
  userId: string,
  at: Date,
): Promise<void> {
  await db
    .updateTable('password_resets')
    .set({ used_at: at })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('used_at', 'is', null)
    .execute();
}
