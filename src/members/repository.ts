import type { Selectable } from 'kysely';
import type { Executor } from '../core/db/database.js';
import type { Role } from './schemas.js';

export interface MembersTable {
  id: string;
  tenant_id: string;
  email: string;
  name: string | null;
  role: Role;
  password_hash: string;
  totp_secret: string | null;
  totp_enabled_at: Date | null;
  failed_sign_ins: import('kysely').Generated<number>;
  locked_until: Date | null;
  /** The last TOTP time step accepted at sign-in (a code is accepted once). */
  last_totp_step: import('kysely').Generated<number | null>;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface MemberSessionsTable {
  id: string;
  tenant_id: string;
  member_id: string;
  token_hash: string;
  awaiting_totp: boolean;
  /** Wrong TOTP codes entered in this session while it awaited its code. */
  totp_failures: import('kysely').Generated<number>;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

export interface MemberInvitationsTable {
  id: string;
  tenant_id: string;
  email: string;
  role: Role;
  token_hash: string;
  invited_by: string | null;
  expires_at: Date;
  accepted_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

declare module '../core/db/database.js' {
  interface Tables {
    members: MembersTable;
    member_sessions: MemberSessionsTable;
    member_invitations: MemberInvitationsTable;
  }
}

export type InvitationRow = Selectable<MemberInvitationsTable>;

export type MemberRow = Selectable<MembersTable>;

export async function insertMember(
  db: Executor,
  row: Omit<MemberRow, 'failed_sign_ins' | 'last_totp_step'>,
): Promise<MemberRow> {
  return db.insertInto('members').values(row).returningAll().executeTakeFirstOrThrow();
}

/** A live member by email, whatever the tenant: member emails are unique across tenants. */
export async function findLiveMemberByEmail(db: Executor, email: string): Promise<MemberRow | undefined> {
  return db
    .selectFrom('members')
    .selectAll()
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.trim().toLowerCase()))
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function findLiveMember(
  db: Executor,
  tenantId: string,
  memberId: string,
): Promise<MemberRow | undefined> {
  return db
    .selectFrom('members')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', memberId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function listLiveMembers(db: Executor, tenantId: string): Promise<MemberRow[]> {
  return db
    .selectFrom('members')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

/**
 * Counts a failed sign-in; from `lockAfter` in a row the member is locked until `lockUntil`. A lock
 * that has run out starts the count again (one more failure after it does not lock at once).
 */
export async function recordFailedSignIn(
  db: Executor,
  memberId: string,
  lockAfter: number,
  now: Date,
  lockUntil: Date,
): Promise<number> {
  const row = await db
    .updateTable('members')
    .set((eb) => {
      const lapsed = eb.and([eb('locked_until', 'is not', null), eb('locked_until', '<=', now)]);
      const before = eb.case().when(lapsed).then(0).else(eb.ref('failed_sign_ins')).end();
      return {
        failed_sign_ins: eb(before, '+', 1),
        locked_until: eb
          .case()
          .when(before, '>=', lockAfter - 1)
          .then(lockUntil)
          .when(lapsed)
          .then(null)
          .else(eb.ref('locked_until'))
          .end(),
      };
    })
    .where('id', '=', memberId)
    .returning('failed_sign_ins')
    .executeTakeFirst();
  return row?.failed_sign_ins ?? 0;
}

export async function clearFailedSignIns(db: Executor, memberId: string): Promise<void> {
  await db
    .updateTable('members')
    .set({ failed_sign_ins: 0, locked_until: null })
    .where('id', '=', memberId)
    .where('failed_sign_ins', '>', 0)
    .execute();
}

export async function replaceMemberPasswordHash(
  db: Executor,
  memberId: string,
  stored: string,
  stronger: string,
): Promise<void> {
  await db
    .updateTable('members')
    .set({ password_hash: stronger })
    .where('id', '=', memberId)
    .where('password_hash', '=', stored)
    .execute();
}

export async function insertMemberSession(
  db: Executor,
  row: Omit<Selectable<MemberSessionsTable>, 'totp_failures'>,
): Promise<void> {
  await db.insertInto('member_sessions').values(row).execute();
}

/** The session of a presented cookie with its live member, when neither expiry has passed. */
export async function findMemberSession(db: Executor, tokenHash: string, now: Date, idleSince: Date) {
  return db
    .selectFrom('member_sessions as s')
    .innerJoin('members as m', 'm.id', 's.member_id')
    .innerJoin('tenants as t', 't.id', 'm.tenant_id')
    .select([
      't.name as tenant_name',
      't.suspended_at as tenant_suspended_at',
      's.id as session_id',
      's.awaiting_totp',
      's.last_seen_at',
      'm.id as member_id',
      'm.tenant_id',
      'm.email',
      'm.name',
      'm.role',
      'm.totp_secret',
      'm.totp_enabled_at',
    ])
    .where('s.token_hash', '=', tokenHash)
    .where('s.revoked_at', 'is', null)
    .where('s.expires_at', '>', now)
    .where('s.last_seen_at', '>', idleSince)
    .where('m.deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function touchMemberSession(db: Executor, sessionId: string, at: Date): Promise<void> {
  await db.updateTable('member_sessions').set({ last_seen_at: at }).where('id', '=', sessionId).execute();
}

/** Counts a wrong TOTP code in a session awaiting its code; answers the count so far. */
export async function countTotpFailure(db: Executor, sessionId: string): Promise<number> {
  const row = await db
    .updateTable('member_sessions')
    .set((eb) => ({ totp_failures: eb('totp_failures', '+', 1) }))
    .where('id', '=', sessionId)
    .returning('totp_failures')
    .executeTakeFirst();
  return row?.totp_failures ?? 0;
}

/** Takes a TOTP time step for a member, once: false when it (or a later one) was accepted before. */
export async function takeTotpStep(db: Executor, memberId: string, step: number): Promise<boolean> {
  const row = await db
    .updateTable('members')
    .set({ last_totp_step: step })
    .where('id', '=', memberId)
    .where((eb) => eb.or([eb('last_totp_step', 'is', null), eb('last_totp_step', '<', step)]))
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

/** Ends one session; false when it had ended already. */
export async function revokeMemberSession(db: Executor, sessionId: string, at: Date): Promise<boolean> {
  const result = await db
    .updateTable('member_sessions')
    .set({ revoked_at: at })
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .executeTakeFirst();
  return Number(result.numUpdatedRows) > 0;
}

/** Signs a member out everywhere (removed, role changed, password or second factor changed). */
export async function revokeMemberSessions(db: Executor, memberId: string, at: Date): Promise<void> {
  await db
    .updateTable('member_sessions')
    .set({ revoked_at: at })
    .where('member_id', '=', memberId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Signs a member out everywhere but the session in use (a password changed there). */
export async function revokeOtherMemberSessions(
  db: Executor,
  memberId: string,
  keepSessionId: string,
  at: Date,
): Promise<void> {
  await db
    .updateTable('member_sessions')
    .set({ revoked_at: at })
    .where('member_id', '=', memberId)
    .where('id', '!=', keepSessionId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** The tenant's live owners, locked: the last one must stay (a role change or removal waits here). */
export async function lockOwners(db: Executor, tenantId: string): Promise<string[]> {
  const rows = await db
    .selectFrom('members')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .where('role', '=', 'owner')
    .where('deleted_at', 'is', null)
    .orderBy('id')
    .forUpdate()
    .execute();
  return rows.map((row) => row.id);
}

export async function updateMember(
  db: Executor,
  tenantId: string,
  memberId: string,
  changes: Partial<
    Pick<MemberRow, 'role' | 'name' | 'password_hash' | 'totp_secret' | 'totp_enabled_at' | 'deleted_at'>
  > & {
    updated_at: Date;
  },
): Promise<MemberRow | undefined> {
  return db
    .updateTable('members')
    .set(changes)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', memberId)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

export async function insertInvitation(db: Executor, row: InvitationRow): Promise<void> {
  await db.insertInto('member_invitations').values(row).execute();
}

/** Ends the pending invitations of an email in a tenant (a new one supersedes them). */
export async function revokePendingInvitations(
  db: Executor,
  tenantId: string,
  email: string,
  at: Date,
): Promise<void> {
  await db
    .updateTable('member_invitations')
    .set({ revoked_at: at })
    .where('tenant_id', '=', tenantId)
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.trim().toLowerCase()))
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Invitations not yet accepted, revoked or expired, newest first (a tenant has a handful). */
export async function listPendingInvitations(
  db: Executor,
  tenantId: string,
  now: Date,
): Promise<InvitationRow[]> {
  return db
    .selectFrom('member_invitations')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .limit(100)
    .execute();
}

export async function revokeInvitation(
  db: Executor,
  tenantId: string,
  id: string,
  at: Date,
): Promise<InvitationRow | undefined> {
  return db
    .updateTable('member_invitations')
    .set({ revoked_at: at })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

export async function findInvitationByToken(
  db: Executor,
  tokenHash: string,
): Promise<InvitationRow | undefined> {
  return db
    .selectFrom('member_invitations')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .executeTakeFirst();
}

/** Takes a usable invitation (once): answers it only when it was pending and unexpired. */
export async function acceptInvitation(
  db: Executor,
  tokenHash: string,
  now: Date,
): Promise<InvitationRow | undefined> {
  return db
    .updateTable('member_invitations')
    .set({ accepted_at: now })
    .where('token_hash', '=', tokenHash)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .returningAll()
    .executeTakeFirst();
}
