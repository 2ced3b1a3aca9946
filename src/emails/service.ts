/**
 * Emails from a durable outbox (decisions.md §5): the welcome email and the password-reset email.
 * Creating a user in a tenant with email settings writes the rendered email and its delivery job
 * in the user's transaction, so the email exists exactly when the user does and POST /users never
 * talks to SMTP; a reset email is written in the transaction that stores its token. The job sends it through
 * the tenant's SMTP server, retrying transient failures with exponential back-off for about two
 * hours; permanent rejections end it at once. The outbox row, not the job, is the truth: a job
 * that runs again after the row is sent or failed sends nothing.
 */
import type { Clock } from '../core/clock.js';
import type { Db, Tx } from '../core/db.js';
import { newId } from '../core/ids.js';
import { enqueueJob, type Job, PermanentJobError, RetryJobError } from '../core/jobs.js';
import { listPage } from '../core/pagination.js';
import type { SecretBox } from '../core/secrets.js';
import { findTenant } from '../tenants/repository.js';
import { smtpUrlOf } from '../tenants/secrets.js';
import { findUser, type UserRow } from '../users/repository.js';
import {
  claimOutboxEmail,
  countOutboxEmails,
  type EmailKind,
  findOutboxEmail,
  finishOutboxAttempt,
  insertOutboxEmail,
  listOutboxEmails,
} from './repository.js';
import type { ListEmailsQuery, OutboxEmail } from './schemas.js';
import type { TemplateStore } from './templates.js';
import {
  describeSmtpFailure,
  isPermanentSmtpFailure,
  SEND_DEADLINE_MS,
  type SmtpSender,
} from './transports.js';

export const EMAIL_QUEUE = 'emails.send';
/** SMTP attempts before a transiently failing email is given up. */
export const MAX_SEND_ATTEMPTS = 10;
/** Back-off after attempt n: 30 s · 2^(n-1), at most 30 min, plus up to 10% jitter (≈ 2 h in all). */
export const RETRY_BASE_MS = 30_000;
export const RETRY_MAX_MS = 30 * 60_000;
/**
 * How long an attempt holds its row. Longer than the send deadline, so a worker that takes over
 * an expired job lease never sends while the first attempt may still be talking to the server.
 */
const SEND_LOCK_MS = SEND_DEADLINE_MS + 75_000;
/** Safety net above MAX_SEND_ATTEMPTS: job runs that found the row held by another attempt. */
const JOB_MAX_ATTEMPTS = MAX_SEND_ATTEMPTS * 3;

export interface EmailJobPayload {
  outbox_id: string;
}

export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const delay = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, attempt - 1));
  return Math.round(delay * (1 + 0.1 * random()));
}

/** `<eml_…@domain-of-from>`: derived from the outbox id only, so every attempt sends the same one. */
export function messageIdFor(outboxId: string, from: string): string {
  const address = /<([^<>]+)>\s*$/.exec(from)?.[1] ?? from;
  const domain = address
    .slice(address.lastIndexOf('@') + 1)
    .trim()
    .toLowerCase();
  return `<${outboxId}@${/^[a-z0-9.-]+$/.test(domain) ? domain : 'voiceplane.invalid'}>`;
}

export function toOutboxEmail(row: {
  id: string;
  user_id: string;
  kind: EmailKind;
  to_address: string;
  subject: string;
  status: OutboxEmail['status'];
  attempts: number;
  last_error: string | null;
  created_at: Date;
  sent_at: Date | null;
}): OutboxEmail {
  return {
    id: row.id,
    user_id: row.user_id,
    kind: row.kind,
    to: row.to_address,
    subject: row.subject,
    status: row.status,
    attempts: row.attempts,
    last_error: row.last_error,
    created_at: row.created_at.toISOString(),
    sent_at: row.sent_at ? row.sent_at.toISOString() : null,
  };
}

export function createEmailService(deps: {
  db: Db;
  clock: Clock;
  templates: TemplateStore;
  sender: SmtpSender;
  /** Opens the tenant's sealed SMTP password. */
  secrets: SecretBox;
}) {
  const { db, clock, templates, sender } = deps;

  /** Renders the email now and writes it with its delivery job; false without email settings. */
  async function queue(
    tx: Tx,
    user: UserRow,
    kind: EmailKind,
    extra: Record<string, string>,
  ): Promise<boolean> {
    const tenant = await findTenant(tx, user.tenant_id);
    if (!tenant?.email_smtp_url || !tenant.email_from) return false;
    const now = clock.now();
    const id = newId('eml');
    const name = user.name ?? user.email;
    const email = await templates.render(kind, tenant.id, {
      ...extra,
      tenant_name: tenant.name,
      user_name: name,
      user_email: user.email,
    });
    await insertOutboxEmail(tx, {
      id,
      tenant_id: tenant.id,
      user_id: user.id,
      kind,
      to_address: user.email,
      to_name: name,
      subject: email.subject,
      text_body: email.text,
      html_body: email.html,
      message_id: messageIdFor(id, tenant.email_from),
      status: 'pending',
      created_at: now,
      updated_at: now,
    });
    await enqueueJob(tx, {
      queue: EMAIL_QUEUE,
      tenantId: tenant.id,
      payload: { outbox_id: id } satisfies EmailJobPayload,
      runAt: now,
      maxAttempts: JOB_MAX_ATTEMPTS,
    });
    return true;
  }

  return {
    /** The user-creation hook: outbox row and delivery job in the user's transaction. */
    async onUserCreated(tx: Tx, user: UserRow): Promise<void> {
      await queue(tx, user, 'welcome', {});
    },

    /**
     * The reset email with its link, in the transaction that stores the reset token. Answers
     * false (and writes nothing) when the tenant has no email settings: no email can go out.
     */
    async queuePasswordReset(
      tx: Tx,
      user: UserRow,
      link: { reset_url: string; reset_token: string },
    ): Promise<boolean> {
      return queue(tx, user, 'password_reset', link);
    },

    /** The job handler: one delivery attempt of one outbox row. */
    async deliver(job: Job<EmailJobPayload>): Promise<void> {
      const tenantId = job.tenantId;
      const outboxId = job.payload?.outbox_id;
      if (!tenantId || typeof outboxId !== 'string') throw new PermanentJobError('malformed email job');
      const now = clock.now();
      const row = await claimOutboxEmail(db, tenantId, outboxId, now, new Date(now.getTime() + SEND_LOCK_MS));
      if (!row) {
        const current = await findOutboxEmail(db, tenantId, outboxId);
        if (!current) throw new PermanentJobError(`outbox email ${outboxId} not found`);
        // Sent or failed already: this is a re-run (a crash before the job was acknowledged).
        if (current.status !== 'pending') return;
        const heldFor = (current.locked_until?.getTime() ?? now.getTime()) - now.getTime();
        throw new RetryJobError(
          'another delivery attempt holds this email',
          Math.max(1_000, heldFor + 1_000),
        );
      }

      const end = async (status: 'sent' | 'failed' | 'pending', lastError: string | null) =>
        finishOutboxAttempt(db, tenantId, outboxId, { status, lastError, at: clock.now() });
      const giveUp = async (reason: string): Promise<never> => {
        await end('failed', reason);
        throw new PermanentJobError(reason);
      };

      const tenant = await findTenant(db, tenantId);
      if (!tenant?.email_smtp_url || !tenant.email_from)
        return giveUp('the tenant has no email settings any more');
      let smtpUrl: string;
      try {
        smtpUrl = smtpUrlOf(deps.secrets, tenant) as string;
      } catch (error) {
        // Altered in the database, or sealed with a key this process lacks: no retry can help.
        return giveUp(`the SMTP password cannot be opened: ${(error as Error).message}`);
      }
      const user = await findUser(db, tenantId, row.user_id);
      if (!user || user.deleted_at) return giveUp('the user was deleted before the email was sent');

      try {
        await sender.send(tenantId, smtpUrl, {
          from: tenant.email_from,
          to: row.to_name ? { name: row.to_name, address: row.to_address } : row.to_address,
          subject: row.subject,
          text: row.text_body,
          html: row.html_body,
          messageId: row.message_id,
          date: clock.now(),
          headers: { 'Auto-Submitted': 'auto-generated' },
        });
      } catch (error) {
        const reason = describeSmtpFailure(error, smtpUrl);
        if (isPermanentSmtpFailure(error)) return giveUp(reason);
        if (row.attempts >= MAX_SEND_ATTEMPTS || job.attempt >= job.maxAttempts) {
          return giveUp(`gave up after ${row.attempts} attempts: ${reason}`);
        }
        await end('pending', reason);
        throw new RetryJobError(reason, retryDelayMs(row.attempts));
      }
      await end('sent', null);
    },

    /** The tenant's emails, newest first. */
    async list(tenantId: string, query: ListEmailsQuery) {
      return listPage(
        query,
        (limit, offset) => listOutboxEmails(db, tenantId, { status: query.status, limit, offset }),
        () => countOutboxEmails(db, tenantId, query.status),
        toOutboxEmail,
      );
    },
  };
}

export type EmailService = ReturnType<typeof createEmailService>;
