/**
 * Emails from a durable outbox (docs/design-choices.md): the welcome email and the password-reset email.
 * Creating a user in a tenant with email settings writes the rendered email and its delivery job
 * in the user's transaction, so the email exists exactly when the user does and POST /users never
 * talks to SMTP; a reset email is written in the transaction that stores its token. The job sends it through
 * the tenant's SMTP server, retrying transient failures with exponential back-off for about two
 * hours; permanent rejections end it at once. The outbox row, not the job, is the truth: a job
 * that runs again after the row is sent or failed sends nothing.
 */
import type { Clock } from '../core/clock.js';
import type { Db, Tx } from '../core/db/database.js';
import { listPage } from '../core/db/pagination.js';
import { unprocessable } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { enqueueJob, type Job, PermanentJobError, RetryJobError } from '../core/jobs/runner.js';
import { checkHost, type HostResolver } from '../core/security/outbound-addresses.js';
import type { SecretBox } from '../core/security/secrets.js';
import { findTenant, type TenantRow } from '../tenants/repository.js';
import { smtpUrlOf } from '../tenants/secrets.js';
import { findUser, type UserRow } from '../users/repository.js';
import {
  claimOutboxEmail,
  countOutboxEmails,
  type EmailKind,
  type EmailSender,
  findOutboxEmail,
  finishOutboxAttempt,
  insertOutboxEmail,
  listOutboxEmails,
} from './repository.js';
import type { EmailJobPayload, ListEmailsQuery, OutboxEmail } from './schemas.js';
import type { TemplateStore, TemplateValues } from './templates.js';
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

export function retryDelayMs(attempt: number, random: () => number = Math.random): number {
  const delay = Math.min(RETRY_MAX_MS, RETRY_BASE_MS * 2 ** Math.max(0, attempt - 1));
  return Math.round(delay * (1 + 0.1 * random()));
}

/** The platform's sender: as configured when it names itself, else `"<platform name>" <address>`. */
export function platformSender(from: string | undefined, name: string | undefined): string | undefined {
  if (!from || !name || from.includes('<')) return from;
  return `"${name.replace(/["\\\r\n]/g, '')}" <${from.trim()}>`;
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
  user_id: string | null;
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
  /** How a tenant's SMTP host is checked before each send (SMTP_ALLOW_PRIVATE, the resolver). */
  outbound: { allowPrivate: boolean; resolve: HostResolver };
  /** The platform's SMTP server, for invitations of tenants without settings (PLATFORM_SMTP_URL). */
  platformEmail?: { smtpUrl: string; from: string };
  /** The platform's name (the operator's brand): the sender's name of its own emails when PLATFORM_EMAIL_FROM has none. */
  platformName?: () => string;
  /** Wakes this process's job runner after an email is queued outside a user's request. */
  onQueued?: () => void;
  /**
   * The name and portal address a tenant's clients know it by (white-label, src/branding): a
   * user's emails say the brand's name and link to its portal, never the platform's.
   */
  brandOf?: (executor: Tx, tenantId: string) => Promise<{ name: string; portalUrl: string } | undefined>;
}) {
  const { db, clock, templates, sender } = deps;

  /** Renders the email now and writes it with its delivery job, in the caller's transaction. */
  async function write(
    tx: Tx,
    email: {
      tenant: TenantRow;
      kind: EmailKind;
      userId: string | null;
      to: string;
      toName: string | null;
      sender: EmailSender;
      from: string;
      values: TemplateValues;
    },
  ): Promise<string> {
    const now = clock.now();
    const id = newId('eml');
    const rendered = await templates.render(email.kind, email.tenant.id, email.values);
    await insertOutboxEmail(tx, {
      id,
      tenant_id: email.tenant.id,
      user_id: email.userId,
      kind: email.kind,
      to_address: email.to,
      to_name: email.toName,
      subject: rendered.subject,
      text_body: rendered.text,
      html_body: rendered.html,
      message_id: messageIdFor(id, email.from),
      status: 'pending',
      sender: email.sender,
      created_at: now,
      updated_at: now,
    });
    await enqueueJob(tx, {
      queue: EMAIL_QUEUE,
      tenantId: email.tenant.id,
      payload: { outbox_id: id } satisfies EmailJobPayload,
      runAt: now,
      maxAttempts: JOB_MAX_ATTEMPTS,
    });
    return id;
  }

  /** A user's email; false without email settings. */
  async function queue(
    tx: Tx,
    user: UserRow,
    kind: EmailKind,
    extra: Record<string, string>,
  ): Promise<boolean> {
    const tenant = await findTenant(tx, user.tenant_id);
    if (!tenant?.email_smtp_url || !tenant.email_from) return false;
    const name = user.name ?? user.email;
    const brand = await deps.brandOf?.(tx, tenant.id);
    await write(tx, {
      tenant,
      kind,
      userId: user.id,
      to: user.email,
      toName: name,
      sender: 'tenant',
      from: tenant.email_from,
      values: {
        ...extra,
        tenant_name: brand?.name ?? tenant.name,
        portal_url: brand?.portalUrl ?? '',
        user_name: name,
        user_email: user.email,
      },
    });
    return true;
  }

  /** The SMTP URL and sender of a row: the tenant's settings, or the platform's. */
  function transportOf(tenant: TenantRow, sender: EmailSender): { smtpUrl: string; from: string } | string {
    if (sender === 'platform') {
      const platform = deps.platformEmail;
      if (!platform) return 'the platform has no email settings (PLATFORM_SMTP_URL) any more';
      return { ...platform, from: platformSender(platform.from, deps.platformName?.()) ?? platform.from };
    }
    if (!tenant.email_smtp_url || !tenant.email_from) return 'the tenant has no email settings any more';
    try {
      return { smtpUrl: smtpUrlOf(deps.secrets, tenant) as string, from: tenant.email_from };
    } catch (error) {
      // Altered in the database, or sealed with a key this process lacks: no retry can help.
      return `the SMTP password cannot be opened: ${(error as Error).message}`;
    }
  }

  return {
    /**
     * The user-creation hook: outbox row and delivery job in the user's transaction. A user created
     * without a password (invited from the console) gets the invitation instead.
     */
    async onUserCreated(tx: Tx, user: UserRow): Promise<void> {
      if (user.password_hash === null) return;
      await queue(tx, user, 'welcome', {});
    },

    /** A user's invitation to choose a password, with its link; false without email settings. */
    async queueUserInvitation(tx: Tx, user: UserRow, link: { invitation_url: string }): Promise<boolean> {
      return queue(tx, user, 'user_invitation', link);
    },

    /** Whether the tenant can send its users email (its own SMTP settings). */
    async canEmailUsers(tenantId: string): Promise<boolean> {
      const tenant = await findTenant(db, tenantId);
      return Boolean(tenant?.email_smtp_url && tenant.email_from);
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

    /**
     * A console member invitation with its link, in the invitation's transaction: through the
     * tenant's SMTP settings when it has them, otherwise the platform's. False (nothing written)
     * when neither exists.
     */
    async queueMemberInvitation(
      tx: Tx,
      tenantId: string,
      invitation: { email: string; role: string; invited_by: string; invitation_url: string },
    ): Promise<boolean> {
      const tenant = await findTenant(tx, tenantId);
      if (!tenant) return false;
      const own = tenant.email_smtp_url && tenant.email_from ? tenant.email_from : undefined;
      const from = own ?? deps.platformEmail?.from;
      if (!from) return false;
      await write(tx, {
        tenant,
        kind: 'member_invitation',
        userId: null,
        to: invitation.email,
        toName: null,
        sender: own ? 'tenant' : 'platform',
        from,
        values: {
          tenant_name: tenant.name,
          user_name: invitation.email,
          user_email: invitation.email,
          role: invitation.role,
          invited_by: invitation.invited_by,
          invitation_url: invitation.invitation_url,
        },
      });
      return true;
    },

    /** A test email to a member, through the tenant's own settings (422 without them). */
    async sendTest(tenantId: string, to: { email: string; name: string | null }): Promise<OutboxEmail> {
      const id = await db.transaction().execute(async (tx) => {
        const tenant = await findTenant(tx, tenantId);
        if (!tenant?.email_smtp_url || !tenant.email_from) {
          throw unprocessable('Save the email settings first: a test email goes through them.');
        }
        const name = to.name ?? to.email;
        return write(tx, {
          tenant,
          kind: 'test',
          userId: null,
          to: to.email,
          toName: name,
          sender: 'tenant',
          from: tenant.email_from,
          values: { tenant_name: tenant.name, user_name: name, user_email: to.email },
        });
      });
      deps.onQueued?.();
      const row = await findOutboxEmail(db, tenantId, id);
      if (!row) throw new Error('the test email vanished');
      return toOutboxEmail(row);
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
      // A failure another attempt may not meet (a connection, DNS, a 4xx), until the attempts run out.
      const retryLater = async (reason: string): Promise<never> => {
        if (row.attempts >= MAX_SEND_ATTEMPTS || job.attempt >= job.maxAttempts) {
          return giveUp(`gave up after ${row.attempts} attempts: ${reason}`);
        }
        await end('pending', reason);
        throw new RetryJobError(reason, retryDelayMs(row.attempts));
      };

      const tenant = await findTenant(db, tenantId);
      if (!tenant) return giveUp('the tenant no longer exists');
      const transport = transportOf(tenant, row.sender);
      if (typeof transport === 'string') return giveUp(transport);
      const { smtpUrl, from } = transport;
      if (row.user_id) {
        const user = await findUser(db, tenantId, row.user_id);
        if (!user || user.deleted_at) return giveUp('the user was deleted before the email was sent');
      }

      // A tenant names its server: it is reached only at an address the outbound guard accepts,
      // checked at every send (the name may resolve elsewhere since the settings were saved).
      let addresses: string[] | undefined;
      if (row.sender === 'tenant' && !deps.outbound.allowPrivate) {
        const host = await checkHost(new URL(smtpUrl).hostname, deps.outbound);
        if (!host.ok && host.reason === 'forbidden') return giveUp(`the SMTP server ${host.issue}`);
        if (!host.ok) return retryLater(host.issue);
        addresses = host.addresses.map((a) => a.address);
      }

      try {
        // The platform's server has one pool of its own, apart from every tenant's.
        await sender.send(
          row.sender === 'platform' ? 'platform' : tenantId,
          smtpUrl,
          {
            from,
            to: row.to_name ? { name: row.to_name, address: row.to_address } : row.to_address,
            subject: row.subject,
            text: row.text_body,
            html: row.html_body,
            messageId: row.message_id,
            date: clock.now(),
            headers: { 'Auto-Submitted': 'auto-generated' },
          },
          addresses,
        );
      } catch (error) {
        const reason = describeSmtpFailure(error, smtpUrl);
        return isPermanentSmtpFailure(error) ? giveUp(reason) : retryLater(reason);
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
