/**
 * Members: the agency's own staff, who sign in to the console (docs/console.md). They are not
 * users: a member's session opens only the console, a user's session only /auth/v1.
 *
 * Sign-in: email and password (the same memory-hard hash as users), then a TOTP code when the
 * member turned the second factor on. Failed attempts are rate-limited by the caller (per address
 * and per account, src/rate-limits) and, here, counted on the member: LOCK_AFTER failures in a row
 * lock the account for LOCK_MS (a lock that ran out starts the count again). A session is a random
 * token in an HttpOnly cookie, stored as its SHA-256; it ends after IDLE_MS without a request or
 * ABSOLUTE_MS after sign-in, whichever first.
 *
 * The TOTP step: the password opens a session awaiting its code for SECOND_FACTOR_MS at most.
 * MAX_TOTP_FAILURES wrong codes end it and count one failed sign-in of the member (so repeated
 * rounds lock the account: for a member with TOTP on, only an accepted code resets the count); a
 * code's time step is accepted once per member (no replay); and the accepted code ends the
 * half-open session and starts a fresh one under a new token (no session fixation).
 */
import { writeAudited } from '../core/audit/record.js';
import { type Executor, isUniqueViolation } from '../core/db/database.js';
import { ApiError, notFound } from '../core/errors.js';
import { newId, sha256Hex } from '../core/ids.js';
import { decoyPasswordHash, hashPassword, needsRehash, verifyPassword } from '../core/security/passwords.js';
import type { SecretBox } from '../core/security/secrets.js';
import { createAccountFunctions, totpStep } from './account.js';
import { memberChange } from './audit.js';
import {
  clearFailedSignIns,
  countTotpFailure,
  findLiveMember,
  findLiveMemberByEmail,
  findMemberSession,
  insertMember,
  listLiveMembers,
  type MemberRow,
  recordFailedSignIn,
  replaceMemberPasswordHash,
  revokeMemberSession,
  takeTotpStep,
  touchMemberSession,
} from './repository.js';
import type { CreateMemberBody, Member, Role } from './schemas.js';
import {
  ABSOLUTE_MS,
  SECOND_FACTOR_MS,
  SESSION_PREFIX,
  type StartedSession,
  startMemberSession,
} from './session-start.js';
import { createTeamFunctions, type TeamDeps } from './team.js';

export { ABSOLUTE_MS, SECOND_FACTOR_MS };

export const IDLE_MS = 60 * 60 * 1000;
export const LOCK_AFTER = 5;
export const LOCK_MS = 15 * 60 * 1000;
/** Wrong TOTP codes a session awaiting its code may take before it ends. */
export const MAX_TOTP_FAILURES = 5;
/** A session's last-seen time is written at most this often (one write per minute, not per page). */
const TOUCH_EVERY_MS = 60 * 1000;

const ROLE_RANK: Record<Role, number> = { viewer: 0, admin: 1, owner: 2 };

/** Whether `role` may do what `needed` may. */
export function roleAllows(role: Role, needed: Role): boolean {
  return ROLE_RANK[role] >= ROLE_RANK[needed];
}

/** The member behind a console request. */
export interface ConsoleSession {
  sessionId: string;
  memberId: string;
  tenantId: string;
  tenantName: string;
  email: string;
  name: string | null;
  role: Role;
  /** Signed in with the password; the TOTP code is still owed. */
  awaitingTotp: boolean;
  /** Sealed TOTP secret, when the second factor is on. */
  totpSecret: string | null;
  /** The operator suspended the tenant: every console page answers the suspended page. */
  suspended: boolean;
}

export type SignInResult =
  | { ok: true; token: string; awaitingTotp: boolean; expiresAt: Date }
  | { ok: false; reason: 'invalid' | 'locked' };

export type SecondFactorResult = ({ ok: true } & StartedSession) | { ok: false; reason: 'invalid' | 'ended' };

export function toMember(row: MemberRow): Member {
  return {
    id: row.id,
    tenant_id: row.tenant_id,
    email: row.email,
    name: row.name,
    role: row.role,
    totp_enabled: row.totp_enabled_at !== null,
    created_at: row.created_at.toISOString(),
  };
}

export const emailTaken = () =>
  new ApiError('conflict', 'A member with this email already exists.', [
    { field: 'email', issue: 'is already a member.' },
  ]);

const totpContext = (memberId: string) => `members.totp:${memberId}`;
const lockUntil = (now: Date) => new Date(now.getTime() + LOCK_MS);

export function createMemberService(deps: TeamDeps & { secrets: SecretBox }) {
  const { db, clock } = deps;

  return {
    ...createTeamFunctions(deps),
    ...createAccountFunctions(deps),

    /** A member created with a password (the operator's first owner of a tenant, an accepted invitation). */
    async create(tenantId: string, input: CreateMemberBody, executor: Executor = db): Promise<Member> {
      const now = clock.now();
      const passwordHash = await hashPassword(input.password, deps.passwordHashMemoryKib);
      try {
        const id = newId('mem');
        const row = await writeAudited(
          executor,
          (executor) =>
            insertMember(executor, {
              id,
              tenant_id: tenantId,
              email: input.email.trim(),
              name: input.name ?? null,
              role: input.role ?? 'owner',
              password_hash: passwordHash,
              totp_secret: null,
              totp_enabled_at: null,
              locked_until: null,
              created_at: now,
              updated_at: now,
              deleted_at: null,
            }),
          () => memberChange('member.created', tenantId, id, Object.keys(input), now),
        );
        return toMember(row);
      } catch (error) {
        if (isUniqueViolation(error)) throw emailTaken();
        throw error;
      }
    },

    async list(tenantId: string): Promise<Member[]> {
      return (await listLiveMembers(db, tenantId)).map(toMember);
    },

    async get(tenantId: string, memberId: string): Promise<Member> {
      const row = await findLiveMember(db, tenantId, memberId);
      if (!row) throw notFound('Member');
      return toMember(row);
    },

    /** Wrong email, wrong password and a locked account cost the same work. */
    async signIn(email: string, password: string): Promise<SignInResult> {
      const member = await findLiveMemberByEmail(db, email);
      const stored = member?.password_hash ?? (await decoyPasswordHash(deps.passwordHashMemoryKib));
      const matches = await verifyPassword(password, stored);
      const now = clock.now();
      if (!member) return { ok: false, reason: 'invalid' };
      if (member.locked_until && member.locked_until > now) return { ok: false, reason: 'locked' };
      if (!matches) {
        const failures = await recordFailedSignIn(db, member.id, LOCK_AFTER, now, lockUntil(now));
        return { ok: false, reason: failures >= LOCK_AFTER ? 'locked' : 'invalid' };
      }
      const awaitingTotp = member.totp_enabled_at !== null;
      if (!awaitingTotp) await clearFailedSignIns(db, member.id);
      if (needsRehash(member.password_hash, deps.passwordHashMemoryKib)) {
        const stronger = await hashPassword(password, deps.passwordHashMemoryKib);
        await replaceMemberPasswordHash(db, member.id, member.password_hash, stronger);
      }
      const started = await startMemberSession(db, member, now, awaitingTotp);
      return { ok: true, ...started };
    },

    /** The session of a presented cookie, or null when it is unknown, revoked, idle or too old. */
    async authenticate(token: string | undefined): Promise<ConsoleSession | null> {
      if (!token?.startsWith(SESSION_PREFIX) || token.length > 100) return null;
      const now = clock.now();
      const row = await findMemberSession(db, sha256Hex(token), now, new Date(now.getTime() - IDLE_MS));
      if (!row) return null;
      if (now.getTime() - row.last_seen_at.getTime() >= TOUCH_EVERY_MS) {
        await touchMemberSession(db, row.session_id, now);
      }
      return {
        sessionId: row.session_id,
        memberId: row.member_id,
        tenantId: row.tenant_id,
        tenantName: row.tenant_name,
        email: row.email,
        name: row.name,
        role: row.role,
        awaitingTotp: row.awaiting_totp,
        totpSecret: row.totp_enabled_at ? row.totp_secret : null,
        suspended: row.tenant_suspended_at !== null,
      };
    },

    /**
     * The TOTP code owed by a session awaiting it. Accepted (a time step not used before): that
     * session ends and a fresh one starts, answered with its new token. Wrong: counted, and the
     * MAX_TOTP_FAILURES-th ends the session ('ended') and counts a failed sign-in of the member.
     */
    async completeSecondFactor(session: ConsoleSession, code: string): Promise<SecondFactorResult> {
      const now = clock.now();
      const secret = session.totpSecret
        ? deps.secrets.open(session.totpSecret, totpContext(session.memberId))
        : undefined;
      const step = secret ? totpStep(secret, code, now) : null;
      if (step !== null && (await takeTotpStep(db, session.memberId, step))) {
        const started = await db.transaction().execute(async (tx) => {
          if (!(await revokeMemberSession(tx, session.sessionId, now))) return null;
          await clearFailedSignIns(tx, session.memberId);
          return startMemberSession(tx, { id: session.memberId, tenant_id: session.tenantId }, now, false);
        });
        return started ? { ok: true, ...started } : { ok: false, reason: 'ended' };
      }
      const failures = await countTotpFailure(db, session.sessionId);
      if (failures < MAX_TOTP_FAILURES) return { ok: false, reason: 'invalid' };
      if (await revokeMemberSession(db, session.sessionId, now)) {
        await recordFailedSignIn(db, session.memberId, LOCK_AFTER, now, lockUntil(now));
      }
      return { ok: false, reason: 'ended' };
    },

    async signOut(session: ConsoleSession): Promise<void> {
      await revokeMemberSession(db, session.sessionId, clock.now());
    },
  };
}

export type MemberService = ReturnType<typeof createMemberService>;
