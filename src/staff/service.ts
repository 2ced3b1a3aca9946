/**
 * Operator staff (docs/operator-console.md): accounts of the operator's own people, who sign in
 * to /operator with email, password (Argon2id, as members and users) and a TOTP code in one form.
 * Every account has TOTP: the first owner gets a secret printed once by
 * `voiceplane operators create`, an invited one sets it up while accepting the invitation. A code's
 * time step is accepted once per account (no replay). LOCK_AFTER failed sign-ins in a row lock the
 * account for LOCK_MS; the caller rate-limits per address and per account before any hash is
 * checked. A session is a random token in an HttpOnly cookie, stored as its SHA-256; it ends after
 * IDLE_MS without a request or ABSOLUTE_MS after sign-in. Removing a staff member or changing their
 * role ends their sessions; the last owner can be neither removed nor demoted.
 */
import { actAs, auditNothingChanged } from '../core/audit/context.js';
import { type AuditChange, recordAudit, writeAudited } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import { type Db, type Executor, isUniqueViolation } from '../core/db/database.js';
import { ApiError, notFound, validationFailed } from '../core/errors.js';
import { newId, randomBase62, sha256Hex } from '../core/ids.js';
import { decoyPasswordHash, hashPassword, verifyPassword } from '../core/security/passwords.js';
import type { SecretBox } from '../core/security/secrets.js';
import { matchTotp, newTotpSecret, otpauthUri } from '../core/security/totp.js';
import {
  closeStaffInvitation,
  countLiveOwners,
  findLiveStaff,
  findLiveStaffByEmail,
  findOpenStaffInvitation,
  findStaffSession,
  insertStaff,
  insertStaffInvitation,
  insertStaffSession,
  listLiveStaff,
  listOpenStaffInvitations,
  recordFailedStaffSignIn,
  revokeStaffSession,
  revokeStaffSessions,
  type StaffInvitationRow,
  type StaffRow,
  takeStaffSignIn,
  touchStaffSession,
  updateStaff,
} from './repository.js';
import type {
  AcceptStaffInvitationBody,
  CreateStaffBody,
  InviteStaffBody,
  Staff,
  StaffInvitation,
  StaffRole,
} from './schemas.js';

export const IDLE_MS = 60 * 60 * 1000;
export const ABSOLUTE_MS = 12 * 60 * 60 * 1000;
export const LOCK_AFTER = 5;
export const LOCK_MS = 15 * 60 * 1000;
export const INVITATION_MS = 72 * 60 * 60 * 1000;
const TOUCH_EVERY_MS = 60 * 1000;
const SESSION_PREFIX = 'vpo_';
const INVITATION_PREFIX = 'vpoi_';

const ROLE_RANK: Record<StaffRole, number> = { support: 0, admin: 1, owner: 2 };

/** Whether `role` may do what `needed` may. */
export function staffRoleAllows(role: StaffRole, needed: StaffRole): boolean {
  return ROLE_RANK[role] >= ROLE_RANK[needed];
}

/** The staff member behind an operator console request. */
export interface StaffSession {
  sessionId: string;
  staffId: string;
  email: string;
  name: string | null;
  role: StaffRole;
}

export interface TotpEnrolment {
  secret: string;
  uri: string;
}

export type StaffSignIn =
  | { ok: true; token: string; expiresAt: Date }
  | { ok: false; reason: 'invalid' | 'locked' };

const totpContext = (staffId: string) => `operator_staff.totp:${staffId}`;
const setupContext = (invitationId: string) => `operator_staff.totp-setup:${invitationId}`;

const toStaff = (row: StaffRow): Staff => ({
  id: row.id,
  email: row.email,
  name: row.name,
  role: row.role,
  created_at: row.created_at.toISOString(),
});

const toInvitation = (row: StaffInvitationRow): StaffInvitation => ({
  id: row.id,
  email: row.email,
  role: row.role,
  expires_at: row.expires_at.toISOString(),
  created_at: row.created_at.toISOString(),
});

const emailTaken = () =>
  new ApiError('conflict', 'A staff member with this email already exists.', [
    { field: 'email', issue: 'is already a staff member.' },
  ]);

export function createStaffService(deps: {
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  config: { passwordHashMemoryKib: number };
  /** The issuer authenticator apps show: the platform's name (the operator's brand). */
  brand: { current(): Promise<{ name: string }> };
}) {
  const { db, clock, secrets } = deps;
  const memoryKib = deps.config.passwordHashMemoryKib;

  async function insert(
    input: CreateStaffBody,
    secret: string,
    action: string,
    before?: (tx: Executor, id: string) => Promise<void>,
  ) {
    const now = clock.now();
    const id = newId('stf');
    const passwordHash = await hashPassword(input.password, memoryKib);
    try {
      return await db.transaction().execute(async (tx) => {
        await before?.(tx, id);
        const row = await insertStaff(tx, {
          id,
          email: input.email.trim(),
          name: input.name ?? null,
          role: input.role,
          password_hash: passwordHash,
          totp_secret: secrets.seal(secret, totpContext(id)),
          locked_until: null,
          created_at: now,
          updated_at: now,
          deleted_at: null,
        });
        await recordAudit(tx, staffChange(action, 'staff', id, Object.keys(input), now));
        return row;
      });
    } catch (error) {
      if (isUniqueViolation(error)) throw emailTaken();
      throw error;
    }
  }

  async function enrolment(account: string, secret: string): Promise<TotpEnrolment> {
    return { secret, uri: otpauthUri({ issuer: (await deps.brand.current()).name, account, secret }) };
  }

  async function startSession(staffId: string, now: Date) {
    const token = `${SESSION_PREFIX}${randomBase62(40)}`;
    const expiresAt = new Date(now.getTime() + ABSOLUTE_MS);
    await insertStaffSession(db, {
      id: newId('stfs'),
      staff_id: staffId,
      token_hash: sha256Hex(token),
      created_at: now,
      last_seen_at: now,
      expires_at: expiresAt,
      revoked_at: null,
    });
    return { token, expiresAt };
  }

  /** Refuses a change that would leave the platform without an owner. */
  async function keepAnOwner(target: StaffRow) {
    if (target.role === 'owner' && (await countLiveOwners(db)) <= 1) {
      throw new ApiError('conflict', 'The platform needs at least one owner: make another owner first.');
    }
  }

  return {
    /** A staff member with a new TOTP secret, returned once (the CLI prints it). */
    async create(input: CreateStaffBody): Promise<{ staff: Staff; totp: TotpEnrolment }> {
      const secret = newTotpSecret();
      const row = await insert(input, secret, 'staff.created');
      return { staff: toStaff(row), totp: await enrolment(row.email, secret) };
    },

    async list(): Promise<Staff[]> {
      return (await listLiveStaff(db)).map(toStaff);
    },

    /** Email, password and code in one step; every failure costs the same password work. */
    async signIn(email: string, password: string, code: string): Promise<StaffSignIn> {
      const staff = await findLiveStaffByEmail(db, email);
      const stored = staff?.password_hash ?? (await decoyPasswordHash(memoryKib));
      const matches = await verifyPassword(password, stored);
      const now = clock.now();
      if (!staff) return { ok: false, reason: 'invalid' };
      if (staff.locked_until && staff.locked_until > now) return { ok: false, reason: 'locked' };
      const step = matches
        ? matchTotp(secrets.open(staff.totp_secret, totpContext(staff.id)), code, now)
        : null;
      if (step === null || !(await takeStaffSignIn(db, staff.id, step))) {
        const failures = await recordFailedStaffSignIn(
          db,
          staff.id,
          LOCK_AFTER,
          now,
          new Date(now.getTime() + LOCK_MS),
        );
        return { ok: false, reason: failures >= LOCK_AFTER ? 'locked' : 'invalid' };
      }
      return { ok: true, ...(await startSession(staff.id, now)) };
    },

    /** The session of a presented cookie, or null when unknown, revoked, idle or too old. */
    async authenticate(token: string | undefined): Promise<StaffSession | null> {
      if (!token?.startsWith(SESSION_PREFIX) || token.length > 100) return null;
      const now = clock.now();
      const row = await findStaffSession(db, sha256Hex(token), now, new Date(now.getTime() - IDLE_MS));
      if (!row) return null;
      if (now.getTime() - row.last_seen_at.getTime() >= TOUCH_EVERY_MS) {
        await touchStaffSession(db, row.session_id, now);
      }
      return {
        sessionId: row.session_id,
        staffId: row.staff_id,
        email: row.email,
        name: row.name,
        role: row.role,
      };
    },

    async signOut(session: StaffSession): Promise<void> {
      await revokeStaffSession(db, session.sessionId, clock.now());
    },

    /** A single-use link's token (shown once to the inviting owner), valid INVITATION_MS. */
    async invite(
      input: InviteStaffBody,
      invitedBy: string,
    ): Promise<{ invitation: StaffInvitation; token: string }> {
      if (await findLiveStaffByEmail(db, input.email)) throw emailTaken();
      const now = clock.now();
      const token = `${INVITATION_PREFIX}${randomBase62(40)}`;
      const row: StaffInvitationRow = {
        id: newId('stfi'),
        email: input.email.trim(),
        role: input.role,
        token_hash: sha256Hex(token),
        invited_by: invitedBy,
        expires_at: new Date(now.getTime() + INVITATION_MS),
        accepted_at: null,
        revoked_at: null,
        created_at: now,
      };
      await writeAudited(
        db,
        (executor) => insertStaffInvitation(executor, row),
        () => staffChange('staff_invitation.created', 'staff_invitation', row.id, Object.keys(input), now),
      );
      return { invitation: toInvitation(row), token };
    },

    async listInvitations(): Promise<StaffInvitation[]> {
      return (await listOpenStaffInvitations(db, clock.now())).map(toInvitation);
    },

    async revokeInvitation(invitationId: string): Promise<void> {
      const now = clock.now();
      const closed = await writeAudited(
        db,
        (executor) => closeStaffInvitation(executor, invitationId, 'revoked_at', now),
        (done) => done && staffChange('staff_invitation.revoked', 'staff_invitation', invitationId, [], now),
      );
      if (!closed) throw notFound('Invitation');
    },

    /** The open invitation of a link's token, or undefined (unknown, used, revoked or expired). */
    async invitation(token: string): Promise<StaffInvitation | undefined> {
      if (!token.startsWith(INVITATION_PREFIX) || token.length > 100) return undefined;
      const row = await findOpenStaffInvitation(db, sha256Hex(token), clock.now());
      return row && toInvitation(row);
    },

    /**
     * The TOTP secret an invitee sets up: new, or the one of `sealed` (the form shown before, so a
     * mistyped code is tried again on the same secret); sealed to the invitation.
     */
    async enrolmentSetup(
      invitation: StaffInvitation,
      sealed?: string,
    ): Promise<TotpEnrolment & { sealed: string }> {
      let secret = newTotpSecret();
      if (sealed) {
        try {
          secret = secrets.open(sealed, setupContext(invitation.id));
        } catch {}
      }
      return {
        ...(await enrolment(invitation.email, secret)),
        sealed: secrets.seal(secret, setupContext(invitation.id)),
      };
    },

    /** Creates the invited staff member once a code of the set-up secret is confirmed. */
    async acceptInvitation(
      token: string,
      input: AcceptStaffInvitationBody,
      sealedSetup: string,
      code: string,
    ): Promise<Staff> {
      const now = clock.now();
      const invitation = await findOpenStaffInvitation(db, sha256Hex(token), now);
      if (!invitation) throw notFound('Invitation');
      let secret: string;
      try {
        secret = secrets.open(sealedSetup, setupContext(invitation.id));
      } catch {
        throw validationFailed([
          { field: 'code', issue: 'belongs to an outdated set-up: scan the new code.' },
        ]);
      }
      if (matchTotp(secret, code, now) === null) {
        throw validationFailed([
          { field: 'code', issue: 'is not the current code of your authenticator app.' },
        ]);
      }
      const row = await insert(
        { email: invitation.email, role: invitation.role, ...input },
        secret,
        'staff.joined',
        async (tx, id) => {
          if (!(await closeStaffInvitation(tx, invitation.id, 'accepted_at', now)))
            throw notFound('Invitation');
          // The invitee holds no session yet: the entry names the staff member the link creates.
          actAs({ type: 'operator_staff', id });
        },
      );
      return toStaff(row);
    },

    async changeRole(staffId: string, role: StaffRole): Promise<Staff> {
      const target = await findLiveStaff(db, staffId);
      if (!target) throw notFound('Staff member');
      if (target.role === role) {
        auditNothingChanged();
        return toStaff(target);
      }
      await keepAnOwner(target);
      const now = clock.now();
      const row = await db.transaction().execute(async (tx) => {
        const updated = await updateStaff(tx, staffId, { role, updated_at: now });
        if (!updated) throw notFound('Staff member');
        await revokeStaffSessions(tx, staffId, now);
        await recordAudit(tx, staffChange('staff.role_changed', 'staff', staffId, ['role'], now));
        return updated;
      });
      return toStaff(row);
    },

    async remove(staffId: string): Promise<void> {
      const target = await findLiveStaff(db, staffId);
      if (!target) throw notFound('Staff member');
      await keepAnOwner(target);
      const now = clock.now();
      await db.transaction().execute(async (tx) => {
        await updateStaff(tx, staffId, { deleted_at: now, updated_at: now });
        await revokeStaffSessions(tx, staffId, now);
        await recordAudit(tx, staffChange('staff.removed', 'staff', staffId, [], now));
      });
    },
  };
}

export type StaffService = ReturnType<typeof createStaffService>;

/** The audit entry of a change to the operator's staff (platform-wide: no tenant). */
function staffChange(
  action: string,
  objectType: string,
  id: string,
  fields: string[],
  at: Date,
): AuditChange {
  return { action, tenantId: null, objectType, objectId: id, fields, at };
}
