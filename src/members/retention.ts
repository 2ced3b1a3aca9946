/**
 * Retention of the console's sign-in records: sessions are deleted SESSION_RETENTION_MS after they
 * ended (expired or revoked), and invitations INVITATION_RETENTION_MS after they expired or were
 * used or revoked, by a recurring maintenance job (src/services.ts), so neither table grows
 * forever. Nothing refers to either row once it has ended.
 *
 * Deletion goes in small batches, one statement each, like the events' (src/events/retention.ts).
 */
import { sql } from 'kysely';
import type { Executor } from '../core/db/database.js';

const DAY_MS = 24 * 3_600_000;
export const SESSION_RETENTION_MS = 7 * DAY_MS;
export const INVITATION_RETENTION_MS = 30 * DAY_MS;

export interface MemberPurgeOptions {
  now: Date;
  /** Rows per statement. */
  batchSize?: number;
  /** Statements per table per call; the caller comes back for the rest (see `more`). */
  maxBatches?: number;
}

export interface MemberPurgeResult {
  sessions: number;
  invitations: number;
  /** A last batch was full: more rows may be past their retention. */
  more: boolean;
}

/** Sessions that ended (expired or were revoked) before `cutoff`. */
async function purgeSessionBatch(db: Executor, cutoff: Date, batchSize: number): Promise<number> {
  const result = await sql`
    DELETE FROM member_sessions WHERE id IN (
      SELECT id FROM member_sessions WHERE expires_at < ${cutoff}
      UNION
      SELECT id FROM member_sessions WHERE revoked_at < ${cutoff}
      LIMIT ${batchSize}
    )`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

/** Invitations that expired, or were accepted or revoked, before `cutoff`. */
async function purgeInvitationBatch(db: Executor, cutoff: Date, batchSize: number): Promise<number> {
  const result = await sql`
    DELETE FROM member_invitations WHERE id IN (
      SELECT id FROM member_invitations
      WHERE expires_at < ${cutoff} OR accepted_at < ${cutoff} OR revoked_at < ${cutoff}
      LIMIT ${batchSize}
    )`.execute(db);
  return Number(result.numAffectedRows ?? 0);
}

async function inBatches(
  batch: (size: number) => Promise<number>,
  batchSize: number,
  maxBatches: number,
): Promise<{ deleted: number; more: boolean }> {
  let deleted = 0;
  for (let i = 0; i < maxBatches; i++) {
    const count = await batch(batchSize);
    deleted += count;
    if (count < batchSize) return { deleted, more: false };
  }
  return { deleted, more: true };
}

/** Deletes ended sessions and spent invitations past their retention, in batches. */
export async function purgeEndedMemberRecords(
  db: Executor,
  options: MemberPurgeOptions,
): Promise<MemberPurgeResult> {
  const batchSize = options.batchSize ?? 500;
  const maxBatches = options.maxBatches ?? 100;
  const sessionCutoff = new Date(options.now.getTime() - SESSION_RETENTION_MS);
  const invitationCutoff = new Date(options.now.getTime() - INVITATION_RETENTION_MS);
  const sessions = await inBatches(
    (size) => purgeSessionBatch(db, sessionCutoff, size),
    batchSize,
    maxBatches,
  );
  const invitations = await inBatches(
    (size) => purgeInvitationBatch(db, invitationCutoff, size),
    batchSize,
    maxBatches,
  );
  return {
    sessions: sessions.deleted,
    invitations: invitations.deleted,
    more: sessions.more || invitations.more,
  };
}
