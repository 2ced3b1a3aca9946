/** Opening a member's console session: a random token for the cookie, stored as its SHA-256. */
import type { Executor } from '../core/db/database.js';
import { newId, randomBase62, sha256Hex } from '../core/ids.js';
import { insertMemberSession, type MemberRow } from './repository.js';

export const SESSION_PREFIX = 'vpc_';
/** A session ends this long after sign-in, however busy. */
export const ABSOLUTE_MS = 12 * 60 * 60 * 1000;
/** A session awaiting its TOTP code ends this long after the password was accepted. */
export const SECOND_FACTOR_MS = 5 * 60 * 1000;

export interface StartedSession {
  token: string;
  awaitingTotp: boolean;
  expiresAt: Date;
}

/**
 * A new session of `member`; one `awaitingTotp` (the password was right, the TOTP code is still
 * owed) lasts only SECOND_FACTOR_MS, and the accepted code starts a fresh one (a new token).
 */
export async function startMemberSession(
  db: Executor,
  member: Pick<MemberRow, 'id' | 'tenant_id'>,
  now: Date,
  awaitingTotp: boolean,
): Promise<StartedSession> {
  const token = `${SESSION_PREFIX}${randomBase62(40)}`;
  const expiresAt = new Date(now.getTime() + (awaitingTotp ? SECOND_FACTOR_MS : ABSOLUTE_MS));
  await insertMemberSession(db, {
    id: newId('mses'),
    tenant_id: member.tenant_id,
    member_id: member.id,
    token_hash: sha256Hex(token),
    awaiting_totp: awaitingTotp,
    created_at: now,
    last_seen_at: now,
    expires_at: expiresAt,
    revoked_at: null,
  });
  return { token, awaitingTotp, expiresAt };
}
