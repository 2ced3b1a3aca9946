/** The SQL of operator staff, their sessions and their invitations (migration 0044). */
import type { Generated, Selectable } from 'kysely';
import type { Executor } from '../core/db/database.js';
import type { StaffRole } from './schemas.js';

export interface OperatorStaffTable {
  id: string;
  email: string;
  name: string | null;
  role: StaffRole;
  password_hash: string;
  totp_secret: string;
  last_totp_step: Generated<number | null>;
  failed_sign_ins: Generated<number>;
  locked_until: Date | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface OperatorStaffSessionsTable {
  id: string;
  staff_id: string;
  token_hash: string;
  created_at: Date;
  last_seen_at: Date;
  expires_at: Date;
  revoked_at: Date | null;
}

export interface OperatorStaffInvitationsTable {
  id: string;
  email: string;
  role: StaffRole;
  token_hash: string;
  invited_by: string | null;
  expires_at: Date;
  accepted_at: Date | null;
  revoked_at: Date | null;
  created_at: Date;
}

declare module '../core/db/database.js' {
  interface Tables {
    operator_staff: OperatorStaffTable;
    operator_staff_sessions: OperatorStaffSessionsTable;
    operator_staff_invitations: OperatorStaffInvitationsTable;
  }
}

export type StaffRow = Selectable<OperatorStaffTable>;
export type StaffInvitationRow = Selectable<OperatorStaffInvitationsTable>;

export async function insertStaff(
  db: Executor,
  row: Omit<StaffRow, 'failed_sign_ins' | 'last_totp_step'>,
): Promise<StaffRow> {
  return db.insertInto('operator_staff').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findLiveStaffByEmail(db: Executor, email: string): Promise<StaffRow | undefined> {
  return db
    .selectFrom('operator_staff')
    .selectAll()
    .where((eb) => eb(eb.fn('lower', ['email']), '=', email.trim().toLowerCase()))
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function findLiveStaff(db: Executor, staffId: string): Promise<StaffRow | undefined> {
  return db
    .selectFrom('operator_staff')
    .selectAll()
    .where('id', '=', staffId)
    .where('deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function listLiveStaff(db: Executor): Promise<StaffRow[]> {
  return db
    .selectFrom('operator_staff')
    .selectAll()
    .where('deleted_at', 'is', null)
    .orderBy('created_at')
    .orderBy('id')
    .execute();
}

export async function countLiveOwners(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('operator_staff')
    .select((eb) => eb.fn.countAll<string>().as('n'))
    .where('role', '=', 'owner')
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

export async function updateStaff(
  db: Executor,
  staffId: string,
  changes: Partial<Pick<StaffRow, 'role' | 'deleted_at' | 'password_hash' | 'updated_at'>>,
): Promise<StaffRow | undefined> {
  return db
    .updateTable('operator_staff')
    .set(changes)
    .where('id', '=', staffId)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** Counts a failed sign-in; from `lockAfter` in a row the account is locked until `lockUntil`. */
export async function recordFailedStaffSignIn(
  db: Executor,
  staffId: string,
  lockAfter: number,
  now: Date,
  lockUntil: Date,
): Promise<number> {
  const row = await db
    .updateTable('operator_staff')
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
    .where('id', '=', staffId)
    .returning('failed_sign_ins')
    .executeTakeFirst();
  return row?.failed_sign_ins ?? 0;
}

/** Takes an accepted sign-in: the TOTP step (false when that step or a later one was used) and the failures cleared. */
export async function takeStaffSignIn(db: Executor, staffId: string, step: number): Promise<boolean> {
  const row = await db
    .updateTable('operator_staff')
    .set({ last_totp_step: step, failed_sign_ins: 0, locked_until: null })
    .where('id', '=', staffId)
    .where((eb) => eb.or([eb('last_totp_step', 'is', null), eb('last_totp_step', '<', step)]))
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}

export async function insertStaffSession(
  db: Executor,
  row: Selectable<OperatorStaffSessionsTable>,
): Promise<void> {
  await db.insertInto('operator_staff_sessions').values(row).execute();
}

export async function findStaffSession(db: Executor, tokenHash: string, now: Date, idleSince: Date) {
  return db
    .selectFrom('operator_staff_sessions as s')
    .innerJoin('operator_staff as m', 'm.id', 's.staff_id')
    .select(['s.id as session_id', 's.last_seen_at', 'm.id as staff_id', 'm.email', 'm.name', 'm.role'])
    .where('s.token_hash', '=', tokenHash)
    .where('s.revoked_at', 'is', null)
    .where('s.expires_at', '>', now)
    .where('s.last_seen_at', '>', idleSince)
    .where('m.deleted_at', 'is', null)
    .executeTakeFirst();
}

export async function touchStaffSession(db: Executor, sessionId: string, at: Date): Promise<void> {
  await db
    .updateTable('operator_staff_sessions')
    .set({ last_seen_at: at })
    .where('id', '=', sessionId)
    .execute();
}

export async function revokeStaffSession(db: Executor, sessionId: string, at: Date): Promise<void> {
  await db
    .updateTable('operator_staff_sessions')
    .set({ revoked_at: at })
    .where('id', '=', sessionId)
    .where('revoked_at', 'is', null)
    .execute();
}

/** Ends every session of a staff member (removed, or their role changed). */
export async function revokeStaffSessions(db: Executor, staffId: string, at: Date): Promise<void> {
  await db
    .updateTable('operator_staff_sessions')
    .set({ revoked_at: at })
    .where('staff_id', '=', staffId)
    .where('revoked_at', 'is', null)
    .execute();
}

export async function insertStaffInvitation(db: Executor, row: StaffInvitationRow): Promise<void> {
  await db.insertInto('operator_staff_invitations').values(row).execute();
}

export async function listOpenStaffInvitations(db: Executor, now: Date): Promise<StaffInvitationRow[]> {
  return db
    .selectFrom('operator_staff_invitations')
    .selectAll()
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .orderBy('created_at', 'desc')
    .execute();
}

export async function findOpenStaffInvitation(
  db: Executor,
  tokenHash: string,
  now: Date,
): Promise<StaffInvitationRow | undefined> {
  return db
    .selectFrom('operator_staff_invitations')
    .selectAll()
    .where('token_hash', '=', tokenHash)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .where('expires_at', '>', now)
    .executeTakeFirst();
}

/** Marks an invitation used; false when it was used or revoked meanwhile. */
export async function closeStaffInvitation(
  db: Executor,
  invitationId: string,
  column: 'accepted_at' | 'revoked_at',
  at: Date,
): Promise<boolean> {
  const row = await db
    .updateTable('operator_staff_invitations')
    .set({ [column]: at })
    .where('id', '=', invitationId)
    .where('accepted_at', 'is', null)
    .where('revoked_at', 'is', null)
    .returning('id')
    .executeTakeFirst();
  return row !== undefined;
}
