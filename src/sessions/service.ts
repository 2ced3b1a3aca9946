/**
 * User sessions of the white-label dashboard (docs/design-choices.md) and the ways out of one: sign-in
 * with tenant, email and password; sign-out of the presented token; a password reset by email.
 *
 * A reset request is answered before anything about the email is looked up: the request only
 * queues a job (the same work, the same answer, whether or not the email belongs to a user), and
 * the job writes the single-use token with its email through the durable email outbox. The token
 * is stored as its SHA-256, lasts one hour, and using it signs the user out everywhere. The link
 * in the email is on the tenant's client portal (`<brand.portalUrl>/reset-password#token=…`,
 * docs/portal.md), in the agency's brand like the email itself: never on the platform's host.
 */

import { auditNothingChanged } from '../core/audit/context.js';
import { recordAudit } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import type { Db, Executor, Tx } from '../core/db/database.js';
import { ApiError, notFound, unprocessable } from '../core/errors.js';
import { bearerChallenge, bearerRefused } from '../core/http/auth.js';
import { newId, randomBase62, sha256Hex } from '../core/ids.js';
import { enqueueJob, type Job, PermanentJobError } from '../core/jobs/runner.js';
import { decoyPasswordHash, hashPassword, needsRehash, verifyPassword } from '../core/security/passwords.js';
import type { EmailService } from '../emails/service.js';
import {
  findLiveUserByEmail,
  findUser,
  replacePasswordHash,
  setPasswordHash,
  type UserRow,
} from '../users/repository.js';
import {
  endPasswordResets,
  findActiveSession,
  insertPasswordReset,
  insertSession,
  isPasswordResetUsable,
  revokeSession,
  revokeUserSessions,
  usePasswordReset,
} from './repository.js';
import type { PasswordResetDone, PasswordResetJobPayload, SessionCreated } from './schemas.js';

export const SESSION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const PASSWORD_RESET_TTL_MS = 60 * 60 * 1000;
/** How long an invited user's link to choose a password works. */
export const INVITATION_TTL_MS = 7 * 24 * 60 * 60 * 1000;
export const PASSWORD_RESET_QUEUE = 'sessions.password_reset';

const SESSION_PREFIX = 'vps_';
const RESET_PREFIX = 'vpr_';

// The sign-in's credentials are in the body, not a bearer token: the challenge names no error.
const signInFailed = () =>
  new ApiError('authentication_failed', 'The email or password is incorrect.', undefined, {
    headers: bearerChallenge(),
  });
const sessionInvalid = (token: string | undefined) =>
  bearerRefused('A valid session token is required: Authorization: Bearer <token>.', token);
const resetInvalid = () =>
  new ApiError(
    'unprocessable_entity',
    'This password reset link is invalid, expired or already used; ask for a new one.',
  );

export function createSessionService(deps: {
  db: Db;
  clock: Clock;
  emails: Pick<EmailService, 'queuePasswordReset' | 'queueUserInvitation'>;
  passwordHashMemoryKib: number;
  /**
   * The tenant's client portal (src/branding: its verified custom domain, else its slug on the
   * platform host): the reset link's page is there. Read with the transaction that writes the email.
   */
  brandOf: (executor: Executor, tenantId: string) => Promise<{ portalUrl: string }>;
  /** Called after a job was queued, so this process's worker picks it up at once. */
  onQueued: () => void;
}) {
  const { db, clock } = deps;

  async function authenticate(token: string | undefined) {
    if (!token?.startsWith(SESSION_PREFIX)) throw sessionInvalid(token);
    const session = await findActiveSession(db, sha256Hex(token), clock.now());
    if (!session || session.deleted_at || session.status === 'blocked') throw sessionInvalid(token);
    return session;
  }

  return {
    /** Wrong email and wrong password answer the same 401 after the same work. */
    async signIn(tenantId: string, email: string, password: string): Promise<SessionCreated> {
      const user = await findLiveUserByEmail(db, tenantId, email);
      const stored = user?.password_hash;
      const matches = await verifyPassword(
        password,
        stored ?? (await decoyPasswordHash(deps.passwordHashMemoryKib)),
      );
      if (!user || !stored || !matches || user.status === 'blocked') throw signInFailed();
      // The only moment the password is known: a legacy (scrypt) or weaker hash is replaced now.
      if (needsRehash(stored, deps.passwordHashMemoryKib)) {
        const stronger = await hashPassword(password, deps.passwordHashMemoryKib);
        await replacePasswordHash(db, tenantId, user.id, stored, stronger);
      }
      const now = clock.now();
      const token = `${SESSION_PREFIX}${randomBase62(40)}`;
      const expiresAt = new Date(now.getTime() + SESSION_TTL_MS);
      await insertSession(db, {
        id: newId('ses'),
        tenant_id: tenantId,
        user_id: user.id,
        token_hash: sha256Hex(token),
        expires_at: expiresAt,
        revoked_at: null,
        created_at: now,
      });
      return { token, user_id: user.id, expires_at: expiresAt.toISOString() };
    },

    /** The usable session of a presented bearer token, or 401 with the bearer challenge. */
    authenticate,

    /** Revokes the presented session only; the user's other sessions go on. */
    async signOut(token: string | undefined): Promise<void> {
      const session = await authenticate(token);
      // Two sign-outs racing: only one revokes, the other is refused like any used-up token.
      if (!(await revokeSession(db, session.id, clock.now()))) throw sessionInvalid(token);
    },

    /** Queues the reset: nothing is looked up here, so every email gets the same answer. */
    async requestPasswordReset(tenantId: string, email: string): Promise<void> {
      await enqueueJob(db, {
        queue: PASSWORD_RESET_QUEUE,
        tenantId,
        payload: { email } satisfies PasswordResetJobPayload,
        runAt: clock.now(),
        maxAttempts: 5,
      });
      deps.onQueued();
    },

    /**
     * The job: for a live, unblocked user of a tenant with email settings, one new token and its
     * email in one transaction; for anyone else nothing at all.
     */
    async issuePasswordReset(job: Job<PasswordResetJobPayload>): Promise<void> {
      const tenantId = job.tenantId;
      const email = job.payload?.email;
      if (!tenantId || typeof email !== 'string') throw new PermanentJobError('malformed password reset job');
      const user = await findLiveUserByEmail(db, tenantId, email);
      if (!user || user.status === 'blocked') return;
      const token = `${RESET_PREFIX}${randomBase62(40)}`;
      await db.transaction().execute(async (tx) => {
        const now = clock.now();
        // The portal's page; the token travels in the fragment: browsers never send it to a
        // server or in a Referer.
        const { portalUrl } = await deps.brandOf(tx, tenantId);
        const resetUrl = `${portalUrl}/reset-password#token=${token}`;
        if (!(await deps.emails.queuePasswordReset(tx, user, { reset_url: resetUrl, reset_token: token }))) {
          return;
        }
        await insertPasswordReset(tx, {
          id: newId('pwr'),
          tenant_id: tenantId,
          user_id: user.id,
          token_hash: sha256Hex(token),
          expires_at: new Date(now.getTime() + PASSWORD_RESET_TTL_MS),
          used_at: null,
          created_at: now,
        });
      });
    },

    /**
     * An invitation to choose a password, in the transaction that creates (or looks at) the user:
     * a single-use token valid INVITATION_TTL_MS and its email in the tenant's brand, linking to the
     * portal's page that sets a password (the reset page: the same token, the same rules). False,
     * and nothing written, when the tenant has no email settings.
     */
    async inviteInTx(tx: Tx, user: UserRow): Promise<boolean> {
      const token = `${RESET_PREFIX}${randomBase62(40)}`;
      const now = clock.now();
      const { portalUrl } = await deps.brandOf(tx, user.tenant_id);
      const invitationUrl = `${portalUrl}/reset-password#token=${token}`;
      if (!(await deps.emails.queueUserInvitation(tx, user, { invitation_url: invitationUrl }))) return false;
      await insertPasswordReset(tx, {
        id: newId('pwr'),
        tenant_id: user.tenant_id,
        user_id: user.id,
        token_hash: sha256Hex(token),
        expires_at: new Date(now.getTime() + INVITATION_TTL_MS),
        used_at: null,
        created_at: now,
      });
      return true;
    },

    /** A new invitation for a live, unblocked user (the console's "email a link to set the password"). */
    async invite(tenantId: string, userId: string): Promise<boolean> {
      const sent = await db.transaction().execute(async (tx) => {
        const user = await findUser(tx, tenantId, userId);
        if (!user || user.deleted_at) throw notFound('User');
        if (user.status === 'blocked') throw unprocessable('The user is blocked.');
        const invited = await this.inviteInTx(tx, user);
        if (!invited) auditNothingChanged();
        else {
          await recordAudit(tx, {
            action: 'user.invitation_sent',
            tenantId,
            objectType: 'user',
            objectId: userId,
            fields: [],
            at: clock.now(),
          });
        }
        return invited;
      });
      if (sent) deps.onQueued();
      return sent;
    },

    /**
     * Sets the new password with a reset token (once), signing the user out everywhere. With
     * `tenantId` (a portal's page), a token of another tenant's user is refused like an unknown
     * one, and stays usable on its own portal.
     */
    async resetPassword(
      token: string,
      password: string,
      options: { tenantId?: string } = {},
    ): Promise<PasswordResetDone> {
      if (!token.startsWith(RESET_PREFIX)) throw resetInvalid();
      const tokenHash = sha256Hex(token);
      // Looked at first, so a dead token costs no password hash.
      if (!(await isPasswordResetUsable(db, tokenHash, clock.now()))) throw resetInvalid();
      const passwordHash = await hashPassword(password, deps.passwordHashMemoryKib);
      return db.transaction().execute(async (tx) => {
        const at = clock.now();
        const reset = await usePasswordReset(tx, tokenHash, at);
        // Thrown inside the transaction: the token's use is rolled back with it.
        if (!reset || (options.tenantId !== undefined && reset.tenant_id !== options.tenantId)) {
          throw resetInvalid();
        }
        const user = await findUser(tx, reset.tenant_id, reset.user_id, { forUpdate: true });
        if (!user || user.deleted_at || user.status === 'blocked') throw resetInvalid();
        await setPasswordHash(tx, user.tenant_id, user.id, passwordHash, at);
        await revokeUserSessions(tx, user.tenant_id, user.id, at);
        await endPasswordResets(tx, user.tenant_id, user.id, at);
        return { user_id: user.id };
      });
    },
  };
}

export type SessionService = ReturnType<typeof createSessionService>;
