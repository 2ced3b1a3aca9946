/**
 * A tenant's team in the console (docs/console.md): inviting members by email with a single-use
 * link valid INVITATION_TTL_MS (stored as its SHA-256, sent through the email outbox), accepting
 * it, changing a member's role and removing a member. A tenant always keeps one owner: the last
 * owner can be neither demoted nor removed (the owners are locked while a change is checked).
 */
import { actAs } from '../core/audit/context.js';
import { recordAudit, writeAudited } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import type { Db, Tx } from '../core/db/database.js';
import { isUniqueViolation } from '../core/db/database.js';
import { ApiError, notFound } from '../core/errors.js';
import { newId, randomBase62, sha256Hex } from '../core/ids.js';
import { hashPassword } from '../core/security/passwords.js';
import { memberChange } from './audit.js';
import {
  acceptInvitation,
  findInvitationByToken,
  findLiveMember,
  findLiveMemberByEmail,
  type InvitationRow,
  insertInvitation,
  insertMember,
  listPendingInvitations,
  lockOwners,
  revokeInvitation,
  revokeMemberSessions,
  revokePendingInvitations,
  updateMember,
} from './repository.js';
import type { AcceptInvitationBody, Invitation, InviteMemberBody, Member, Role } from './schemas.js';
import { type StartedSession, startMemberSession } from './session-start.js';

export const INVITATION_TTL_MS = 72 * 3_600_000;
const INVITATION_PREFIX = 'vpi_';

/** Sends the invitation email in the invitation's transaction (the email capability's outbox). */
export interface InvitationMailer {
  queueMemberInvitation(
    tx: Tx,
    tenantId: string,
    invitation: { email: string; role: string; invited_by: string; invitation_url: string },
  ): Promise<boolean>;
}

export const toInvitation = (row: InvitationRow): Invitation => ({
  id: row.id,
  email: row.email,
  role: row.role,
  invited_by: row.invited_by,
  expires_at: row.expires_at.toISOString(),
  created_at: row.created_at.toISOString(),
});

const alreadyMember = () =>
  new ApiError('conflict', 'This email already belongs to a console member.', [
    { field: 'email', issue: 'already belongs to a console member (of this or another agency).' },
  ]);

export const invitationUnusable = () =>
  new ApiError(
    'not_found',
    'This invitation link is not valid any more: it expired, was already used, or was revoked. Ask an owner of the agency for a new one.',
  );

/** Whether an invitation can still be accepted. */
const usable = (row: InvitationRow, now: Date) => !row.accepted_at && !row.revoked_at && row.expires_at > now;

const lastOwner = () =>
  new ApiError('conflict', 'An agency needs at least one owner: make another member an owner first.');

/** What the team functions need; the member service passes its own dependencies. */
export interface TeamDeps {
  db: Db;
  clock: Clock;
  passwordHashMemoryKib: number;
  /** Base of the invitation links (PUBLIC_BASE_URL). */
  publicBaseUrl: string;
  /** Writes invitation emails into the outbox. */
  mailer: InvitationMailer;
  /** Wakes the job runner once an invitation email is written. */
  onQueued?: () => void;
}

export function createTeamFunctions(deps: TeamDeps) {
  const { db, clock } = deps;

  /** Refuses a change that would leave the tenant without an owner (call inside the change's transaction). */
  async function keepAnOwner(tx: Tx, tenantId: string, memberId: string, newRole: Role | null) {
    const owners = await lockOwners(tx, tenantId);
    const losesOwner = owners.includes(memberId) && newRole !== 'owner';
    if (losesOwner && owners.length <= 1) throw lastOwner();
  }

  return {
    /**
     * Invites an email with a role: any earlier pending invitation of that email here is
     * superseded. Answers the link (shown once to the owner) and whether an email was queued.
     */
    async invite(
      tenantId: string,
      invitedBy: { memberId: string; label: string },
      input: InviteMemberBody,
    ): Promise<{ invitation: Invitation; url: string; emailed: boolean }> {
      const email = input.email.trim();
      if (await findLiveMemberByEmail(db, email)) throw alreadyMember();
      const token = `${INVITATION_PREFIX}${randomBase62(40)}`;
      const url = `${deps.publicBaseUrl}/console/invitations/${token}`;
      const now = clock.now();
      const row: InvitationRow = {
        id: newId('minv'),
        tenant_id: tenantId,
        email,
        role: input.role,
        token_hash: sha256Hex(token),
        invited_by: invitedBy.memberId,
        expires_at: new Date(now.getTime() + INVITATION_TTL_MS),
        accepted_at: null,
        revoked_at: null,
        created_at: now,
      };
      const emailed = await db.transaction().execute(async (tx) => {
        await revokePendingInvitations(tx, tenantId, email, now);
        await insertInvitation(tx, row);
        await recordAudit(
          tx,
          memberChange('invitation.created', tenantId, row.id, ['email', 'role'], now, 'invitation'),
        );
        return deps.mailer.queueMemberInvitation(tx, tenantId, {
          email,
          role: input.role,
          invited_by: invitedBy.label,
          invitation_url: url,
        });
      });
      if (emailed) deps.onQueued?.();
      return { invitation: toInvitation(row), url, emailed };
    },

    async listInvitations(tenantId: string): Promise<Invitation[]> {
      return (await listPendingInvitations(db, tenantId, clock.now())).map(toInvitation);
    },

    async revokeInvitation(tenantId: string, id: string): Promise<Invitation> {
      const now = clock.now();
      const row = await writeAudited(
        db,
        (executor) => revokeInvitation(executor, tenantId, id, now),
        (revoked) =>
          revoked && memberChange('invitation.revoked', tenantId, id, ['revoked_at'], now, 'invitation'),
      );
      if (!row) throw notFound('Invitation');
      return toInvitation(row);
    },

    /** The invitation behind a link, while it can still be accepted. */
    async openInvitation(token: string): Promise<Invitation> {
      if (!token.startsWith(INVITATION_PREFIX) || token.length > 100) throw invitationUnusable();
      const row = await findInvitationByToken(db, sha256Hex(token));
      if (!row || !usable(row, clock.now())) throw invitationUnusable();
      return toInvitation(row);
    },

    /**
     * Accepts a link once: the member is created with the chosen password and signed in. The
     * link is checked (one indexed lookup) before the password is hashed: a guessed link costs
     * no memory-hard work; the acceptance itself takes the invitation atomically.
     */
    async acceptInvitation(token: string, input: AcceptInvitationBody): Promise<StartedSession> {
      if (!token.startsWith(INVITATION_PREFIX) || token.length > 100) throw invitationUnusable();
      const tokenHash = sha256Hex(token);
      const pending = await findInvitationByToken(db, tokenHash);
      if (!pending || !usable(pending, clock.now())) throw invitationUnusable();
      const passwordHash = await hashPassword(input.password, deps.passwordHashMemoryKib);
      try {
        return await db.transaction().execute(async (tx) => {
          const now = clock.now();
          const invitation = await acceptInvitation(tx, tokenHash, now);
          if (!invitation) throw invitationUnusable();
          if (await findLiveMemberByEmail(tx, invitation.email)) throw alreadyMember();
          const member = await insertMember(tx, {
            id: newId('mem'),
            tenant_id: invitation.tenant_id,
            email: invitation.email,
            name: input.name.trim(),
            role: invitation.role,
            password_hash: passwordHash,
            totp_secret: null,
            totp_enabled_at: null,
            locked_until: null,
            created_at: now,
            updated_at: now,
            deleted_at: null,
          });
          // The invitee holds no session yet: the entry names the member the link creates.
          actAs({ type: 'member', id: member.id });
          await recordAudit(
            tx,
            memberChange('member.joined', member.tenant_id, member.id, Object.keys(input), now),
          );
          return startMemberSession(tx, member, now, false);
        });
      } catch (error) {
        if (isUniqueViolation(error)) throw alreadyMember();
        throw error;
      }
    },

    /** A new role; the member's sessions end (they sign in again with what the role allows). */
    async changeRole(tenantId: string, memberId: string, role: Role): Promise<Member> {
      const row = await db.transaction().execute(async (tx) => {
        if (!(await findLiveMember(tx, tenantId, memberId))) throw notFound('Member');
        await keepAnOwner(tx, tenantId, memberId, role);
        const now = clock.now();
        const updated = await updateMember(tx, tenantId, memberId, { role, updated_at: now });
        await revokeMemberSessions(tx, memberId, now);
        await recordAudit(tx, memberChange('member.role_changed', tenantId, memberId, ['role'], now));
        return updated;
      });
      if (!row) throw notFound('Member');
      return toMemberOf(row);
    },

    /** Removes a member: they can no longer sign in, and their sessions end at once. */
    async remove(tenantId: string, memberId: string): Promise<void> {
      await db.transaction().execute(async (tx) => {
        if (!(await findLiveMember(tx, tenantId, memberId))) throw notFound('Member');
        await keepAnOwner(tx, tenantId, memberId, null);
        const now = clock.now();
        await updateMember(tx, tenantId, memberId, { deleted_at: now, updated_at: now });
        await revokeMemberSessions(tx, memberId, now);
        await recordAudit(tx, memberChange('member.removed', tenantId, memberId, [], now));
      });
    },
  };
}

function toMemberOf(row: Awaited<ReturnType<typeof updateMember>> & object): Member {
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
