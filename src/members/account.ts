/**
 * A member's own account: the password (the current one required; other sessions end) and the
 * TOTP second factor. Turning it on shows a new secret, sealed into the confirmation form so it
 * cannot be swapped, and stores it (sealed with the context `members.totp:<memberId>`) only once
 * a code from it is confirmed; turning it off needs a current code, and so does replacing a
 * secret that is already on (a stolen session cannot swap the second factor for its own).
 */

import { Secret, TOTP } from 'otpauth';
import { recordAudit, writeAudited } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import { notFound, validationFailed } from '../core/errors.js';
import { hashPassword, verifyPassword } from '../core/security/passwords.js';
import type { SecretBox } from '../core/security/secrets.js';
import { memberChange } from './audit.js';
import { findLiveMember, revokeOtherMemberSessions, updateMember } from './repository.js';
import type { ChangePasswordBody } from './schemas.js';

/** What the account functions need of the signed-in member's session. */
export interface AccountSession {
  sessionId: string;
  memberId: string;
  tenantId: string;
  email: string;
  totpSecret: string | null;
}

/** The issuer authenticator apps show when none is given; the console passes the platform's name. */
export const TOTP_ISSUER = 'voiceplane';
const totpContext = (memberId: string) => `members.totp:${memberId}`;
const setupContext = (memberId: string) => `members.totp-setup:${memberId}`;

const PERIOD_S = 30;

/**
 * The time step (30-second period since the epoch) whose code `code` is, when it is the code of
 * the period at `at` or of a neighbouring one; null otherwise.
 */
export function totpStep(secret: string, code: string, at: Date): number | null {
  const digits = code.replace(/\s/g, '');
  if (!/^\d{6}$/.test(digits)) return null;
  const timestamp = at.getTime();
  const delta = new TOTP({ secret, digits: 6, period: PERIOD_S }).validate({
    token: digits,
    window: 1,
    timestamp,
  });
  return delta === null ? null : Math.floor(timestamp / 1000 / PERIOD_S) + delta;
}

/** Whether `code` is the current (or the neighbouring) 6-digit code of a base32 secret. */
export function totpCodeValid(secret: string, code: string, at: Date): boolean {
  return totpStep(secret, code, at) !== null;
}

const wrongCode = () =>
  validationFailed([{ field: 'code', issue: 'is not the current code of your authenticator app.' }]);

export function createAccountFunctions(deps: {
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  passwordHashMemoryKib: number;
}) {
  const { db, clock, secrets } = deps;

  return {
    /** A new password: the current one is required, and every other session of the member ends. */
    async changePassword(session: AccountSession, input: ChangePasswordBody): Promise<void> {
      const member = await findLiveMember(db, session.tenantId, session.memberId);
      if (!member) throw notFound('Member');
      if (!(await verifyPassword(input.current_password, member.password_hash))) {
        throw validationFailed([{ field: 'current_password', issue: 'is not your current password.' }]);
      }
      const hash = await hashPassword(input.new_password, deps.passwordHashMemoryKib);
      const now = clock.now();
      await db.transaction().execute(async (tx) => {
        await updateMember(tx, session.tenantId, session.memberId, { password_hash: hash, updated_at: now });
        await revokeOtherMemberSessions(tx, session.memberId, session.sessionId, now);
        await recordAudit(
          tx,
          memberChange('member.password_changed', session.tenantId, session.memberId, ['password'], now),
        );
      });
    },

    /**
     * A secret to scan: base32, its otpauth:// URI, and the sealed form for the confirmation. New,
     * unless `sealed` is the set-up shown before (a mistyped code is tried again on the same secret).
     * `issuer` is what the authenticator app shows: the platform's name (the operator's brand).
     */
    totpSetup(
      session: AccountSession,
      sealed?: string,
      issuer = TOTP_ISSUER,
    ): { secret: string; uri: string; sealed: string } {
      let secret = new Secret({ size: 20 }).base32;
      if (sealed) {
        try {
          secret = secrets.open(sealed, setupContext(session.memberId));
        } catch {}
      }
      const uri = new TOTP({
        issuer,
        label: session.email,
        secret,
        digits: 6,
        period: 30,
      }).toString();
      return { secret, uri, sealed: secrets.seal(secret, setupContext(session.memberId)) };
    },

    /**
     * Turns the second factor on once a code of the new secret is confirmed; other sessions end.
     * When it is on already, a current code of the secret in use (`currentCode`) is required too.
     */
    async enableTotp(
      session: AccountSession,
      sealedSetup: string,
      code: string,
      currentCode = '',
    ): Promise<void> {
      const member = await findLiveMember(db, session.tenantId, session.memberId);
      if (!member) throw notFound('Member');
      if (member.totp_enabled_at && member.totp_secret) {
        const inUse = secrets.open(member.totp_secret, totpContext(session.memberId));
        if (!totpCodeValid(inUse, currentCode, clock.now())) {
          throw validationFailed([
            {
              field: 'current_code',
              issue: 'must be a current code of the authenticator app already set up: two-factor is on.',
            },
          ]);
        }
      }
      let secret: string;
      try {
        secret = secrets.open(sealedSetup, setupContext(session.memberId));
      } catch {
        throw validationFailed([
          { field: 'code', issue: 'belongs to an outdated set-up: scan the new code.' },
        ]);
      }
      if (!totpCodeValid(secret, code, clock.now())) throw wrongCode();
      const now = clock.now();
      await db.transaction().execute(async (tx) => {
        await updateMember(tx, session.tenantId, session.memberId, {
          totp_secret: secrets.seal(secret, totpContext(session.memberId)),
          totp_enabled_at: now,
          updated_at: now,
        });
        await revokeOtherMemberSessions(tx, session.memberId, session.sessionId, now);
        await recordAudit(
          tx,
          memberChange('member.two_factor_enabled', session.tenantId, session.memberId, ['totp'], now),
        );
      });
    },

    /** Turns the second factor off; a current code is required. */
    async disableTotp(session: AccountSession, code: string): Promise<void> {
      if (!session.totpSecret) return;
      const secret = secrets.open(session.totpSecret, totpContext(session.memberId));
      if (!totpCodeValid(secret, code, clock.now())) throw wrongCode();
      const now = clock.now();
      await writeAudited(
        db,
        (executor) =>
          updateMember(executor, session.tenantId, session.memberId, {
            totp_secret: null,
            totp_enabled_at: null,
            updated_at: now,
          }),
        () => memberChange('member.two_factor_disabled', session.tenantId, session.memberId, ['totp'], now),
      );
    },
  };
}
