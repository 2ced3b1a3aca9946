import { type Selectable, sql } from 'kysely';
import type { Executor } from '../core/db/database.js';
import type { EmailStatus } from './schemas.js';

export type EmailKind = 'welcome' | 'password_reset' | 'member_invitation' | 'test' | 'user_invitation';
/** Whose SMTP server sends the row: the tenant's settings or the platform's (PLATFORM_SMTP_URL). */
export type EmailSender = 'tenant' | 'platform';

export interface EmailOutboxTable {
  id: string;
  tenant_id: string;
  /** The user the email is about; null for a member invitation or a test email. */
  user_id: string | null;
  kind: EmailKind;
  to_address: string;
  to_name: string | null;
  subject: string;
  text_body: string;
  html_body: string;
  message_id: string;
  status: EmailStatus;
  attempts: import('kysely').Generated<number>;
  last_error: string | null;
  locked_until: Date | null;
  created_at: Date;
  updated_at: Date;
  sent_at: Date | null;
  sender: import('kysely').Generated<EmailSender>;
}

declare module '../core/db/database.js' {
  interface Tables {
    email_outbox: EmailOutboxTable;
  }
}

export type OutboxRow = Selectable<EmailOutboxTable>;

export async function insertOutboxEmail(
  db: Executor,
  row: Omit<EmailOutboxTable, 'attempts' | 'last_error' | 'locked_until' | 'sent_at' | 'sender'> & {
    sender?: EmailSender;
  },
): Promise<void> {
  await db.insertInto('email_outbox').values(row).execute();
}

export async function findOutboxEmail(
  db: Executor,
  tenantId: string,
  id: string,
): Promise<OutboxRow | undefined> {
  return db
    .selectFrom('email_outbox')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .executeTakeFirst();
}

/**
 * Takes a pending row for one delivery attempt: counts the attempt and holds the row until
 * `lockUntil`. Answers undefined when the row is sent, failed, or held by another attempt.
 */
export async function claimOutboxEmail(
  db: Executor,
  tenantId: string,
  id: string,
  now: Date,
  lockUntil: Date,
): Promise<OutboxRow | undefined> {
  return db
    .updateTable('email_outbox')
    .set((eb) => ({ attempts: eb('attempts', '+', 1), locked_until: lockUntil, updated_at: now }))
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .where((eb) => eb.or([eb('locked_until', 'is', null), eb('locked_until', '<=', now)]))
    .returningAll()
    .executeTakeFirst();
}

/** Kinds whose body holds a credential (the reset link, the invitation link): kept only until the email is done. */
const SECRET_BODY_KINDS: EmailKind[] = ['password_reset', 'member_invitation', 'user_invitation'];

/**
 * Ends an attempt: sent, failed, or back to pending with its error (only while still pending). A
 * finished email whose body holds a credential keeps its subject but loses its bodies, so the
 * database never holds a usable reset link longer than its delivery takes.
 */
export async function finishOutboxAttempt(
  db: Executor,
  tenantId: string,
  id: string,
  outcome: { status: EmailStatus; lastError: string | null; at: Date },
): Promise<void> {
  const finished = outcome.status !== 'pending';
  const scrubbed = (column: 'text_body' | 'html_body') =>
    sql<string>`CASE WHEN kind IN (${sql.join(SECRET_BODY_KINDS)}) THEN '' ELSE ${sql.ref(column)} END`;
  await db
    .updateTable('email_outbox')
    .set({
      status: outcome.status,
      last_error: outcome.lastError,
      locked_until: null,
      updated_at: outcome.at,
      ...(outcome.status === 'sent' ? { sent_at: outcome.at } : {}),
      ...(finished ? { text_body: scrubbed('text_body'), html_body: scrubbed('html_body') } : {}),
    })
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('status', '=', 'pending')
    .execute();
}

function filtered(db: Executor, tenantId: string, status: EmailStatus | undefined) {
  let query = db.selectFrom('email_outbox').where('tenant_id', '=', tenantId);
  if (status) query = query.where('status', '=', status);
  return query;
}

export async function listOutboxEmails(
  db: Executor,
  tenantId: string,
  options: { status?: EmailStatus; limit: number; offset: number },
) {
  return filtered(db, tenantId, options.status)
    .select([
      'id',
      'user_id',
      'kind',
      'to_address',
      'subject',
      'status',
      'attempts',
      'last_error',
      'created_at',
      'sent_at',
      sql<number>`count(*) over ()`.as('total'),
    ])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(options.limit)
    .offset(options.offset)
    .execute();
}

export async function countOutboxEmails(
  db: Executor,
  tenantId: string,
  status: EmailStatus | undefined,
): Promise<number> {
  const row = await filtered(db, tenantId, status)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
