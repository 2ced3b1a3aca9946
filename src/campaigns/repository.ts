import { sql } from 'kysely';
import type { Executor } from '../core/db/database.js';
import type { CampaignStatus, Outcome, PauseReason, RecipientStatus } from './schemas.js';

export interface CampaignSettings {
  max_concurrent_calls?: number;
  calling_hours?: import('../agents/settings.js').CallingHours;
  retry?: import('../agents/settings.js').RetryPolicy;
}

export interface CampaignsTable {
  id: string;
  tenant_id: string;
  agent_id: string;
  name: string;
  status: CampaignStatus;
  pause_reason: PauseReason | null;
  scheduled_at: Date | null;
  settings: CampaignSettings;
  tick_token: string | null;
  next_position: number;
  created_at: Date;
  updated_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export interface CampaignRecipientsTable {
  campaign_id: string;
  position: number;
  tenant_id: string;
  phone_number: string;
  name: string;
  email: string | null;
  context: unknown;
  line: number;
  status: RecipientStatus;
  skip_reason: string | null;
  call_id: string | null;
  outcome: Outcome | null;
  attempts: number;
  not_before: Date | null;
  updated_at: Date;
}

declare module '../core/db/database.js' {
  interface Tables {
    campaigns: CampaignsTable;
    campaign_recipients: CampaignRecipientsTable;
  }
}

export type CampaignRow = CampaignsTable;

/** A recipient to store: its place in the upload and what the call is placed with. */
export interface NewRecipient {
  line: number;
  phone: string;
  name: string;
  email: string | null;
  context: Record<string, unknown>;
}

export async function insertCampaign(tx: Executor, row: CampaignRow): Promise<void> {
  await sql`
    INSERT INTO campaigns (id, tenant_id, agent_id, name, status, pause_reason, scheduled_at, settings, tick_token,
                           next_position, created_at, updated_at, started_at, finished_at)
    VALUES (${row.id}, ${row.tenant_id}, ${row.agent_id}, ${row.name}, ${row.status}, ${row.pause_reason},
            ${row.scheduled_at}, ${JSON.stringify(row.settings)}::jsonb, ${row.tick_token}, ${row.next_position},
            ${row.created_at}, ${row.updated_at}, ${row.started_at}, ${row.finished_at})`.execute(tx);
}

export async function findCampaign(
  db: Executor,
  tenantId: string,
  campaignId: string,
  options: { forUpdate?: boolean } = {},
): Promise<CampaignRow | undefined> {
  let query = db
    .selectFrom('campaigns')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', campaignId);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function updateCampaign(
  tx: Executor,
  tenantId: string,
  campaignId: string,
  changes: Partial<
    Pick<CampaignRow, 'status' | 'pause_reason' | 'started_at' | 'finished_at' | 'next_position'>
  > & {
    updated_at: Date;
  },
): Promise<void> {
  await tx
    .updateTable('campaigns')
    .set(changes)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', campaignId)
    .execute();
}

export async function listCampaigns(
  db: Executor,
  tenantId: string,
  status: CampaignStatus | undefined,
  limit: number,
  offset: number,
) {
  let query = db.selectFrom('campaigns').selectAll().where('tenant_id', '=', tenantId);
  if (status !== undefined) query = query.where('status', '=', status);
  return query
    .select(sql<number>`count(*) over ()`.as('total'))
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function countCampaigns(
  db: Executor,
  tenantId: string,
  status?: CampaignStatus,
): Promise<number> {
  let query = db.selectFrom('campaigns').where('tenant_id', '=', tenantId);
  if (status !== undefined) query = query.where('status', '=', status);
  const row = await query.select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow();
  return Number(row.n);
}

const FINAL = `('completed', 'no_answer', 'failed')`;
/** A call ended unplaced because its number was listed while it waited (calls/pipeline.ts). */
const REFUSED = `c.ended_reason = 'do_not_call'`;
/**
 * A recipient's status as the API shows it: a calling row whose call has ended is done, or skipped
 * when the call was refused for the do-not-call list (as settleEndedCalls will record it).
 */
export const SHOWN_STATUS = sql.raw(
  `CASE WHEN r.status = 'calling' AND c.status IN ${FINAL} THEN (CASE WHEN ${REFUSED} THEN 'skipped' ELSE 'done' END)
        ELSE r.status END`,
);
export const SHOWN_OUTCOME = sql.raw(
  `CASE WHEN c.status IN ${FINAL} AND NOT (${REFUSED}) THEN c.status ELSE r.outcome END`,
);

export interface CampaignTally {
  campaign_id: string;
  status: RecipientStatus;
  outcome: Outcome | null;
  recipients: number;
  minutes: number;
}

/** Recipients of each campaign grouped by shown status and outcome, with the minutes billed. */
export async function tallyCampaigns(db: Executor, tenantId: string, campaignIds: string[]) {
  if (campaignIds.length === 0) return [];
  const result = await sql<CampaignTally>`
    SELECT r.campaign_id, ${SHOWN_STATUS} AS status, ${SHOWN_OUTCOME} AS outcome,
           count(*)::integer AS recipients, coalesce(sum(c.billed_minutes), 0)::integer AS minutes
    FROM campaign_recipients r
    LEFT JOIN calls c ON c.id = r.call_id AND c.tenant_id = r.tenant_id
    WHERE r.tenant_id = ${tenantId} AND r.campaign_id = ANY(${campaignIds}::text[])
    GROUP BY 1, 2, 3`.execute(db);
  return result.rows;
}

export interface RecipientView {
  position: number;
  line: number;
  phone_number: string;
  name: string;
  email: string | null;
  context: unknown;
  status: RecipientStatus;
  skip_reason: string | null;
  call_id: string | null;
  outcome: Outcome | null;
  attempts: number;
  total: number;
}

/** A page of recipients in position order, with their calls' outcomes and the total. */
export async function listRecipients(
  db: Executor,
  tenantId: string,
  campaignId: string,
  status: RecipientStatus | undefined,
  limit: number,
  offset: number,
): Promise<RecipientView[]> {
  const result = await sql<RecipientView>`
    SELECT shown.*, (count(*) OVER ())::integer AS total FROM (
      SELECT r.position, r.line, r.phone_number, r.name, r.email, r.context, ${SHOWN_STATUS} AS status,
             r.skip_reason, r.call_id, ${SHOWN_OUTCOME} AS outcome, r.attempts
      FROM campaign_recipients r
      LEFT JOIN calls c ON c.id = r.call_id AND c.tenant_id = r.tenant_id
      WHERE r.tenant_id = ${tenantId} AND r.campaign_id = ${campaignId}
    ) shown
    WHERE ${status ?? null}::text IS NULL OR shown.status = ${status ?? null}::text
    ORDER BY position
    LIMIT ${limit} OFFSET ${offset}`.execute(db);
  return result.rows;
}

export async function countRecipients(
  db: Executor,
  tenantId: string,
  campaignId: string,
  status: RecipientStatus | undefined,
): Promise<number> {
  const result = await sql<{ n: number }>`
    SELECT count(*)::integer AS n
    FROM campaign_recipients r
    LEFT JOIN calls c ON c.id = r.call_id AND c.tenant_id = r.tenant_id
    WHERE r.tenant_id = ${tenantId} AND r.campaign_id = ${campaignId}
      AND (${status ?? null}::text IS NULL OR ${SHOWN_STATUS} = ${status ?? null}::text)`.execute(db);
  return result.rows[0].n;
}

/** Of `phones`, those the campaign already holds. */
export async function existingPhones(
  tx: Executor,
  campaignId: string,
  phones: string[],
): Promise<Set<string>> {
  if (phones.length === 0) return new Set();
  const result = await sql<{ phone_number: string }>`
    SELECT phone_number FROM campaign_recipients
    WHERE campaign_id = ${campaignId} AND phone_number = ANY(${phones}::text[])`.execute(tx);
  return new Set(result.rows.map((row) => row.phone_number));
}

/** Of `phones`, those on the tenant's do-not-call list. */
export async function listedPhones(tx: Executor, tenantId: string, phones: string[]): Promise<Set<string>> {
  if (phones.length === 0) return new Set();
  const result = await sql<{ phone_number: string }>`
    SELECT phone_number FROM do_not_call
    WHERE tenant_id = ${tenantId} AND phone_number = ANY(${phones}::text[])`.execute(tx);
  return new Set(result.rows.map((row) => row.phone_number));
}

/**
 * Stores recipients from `firstPosition` on, in one statement whatever their number (one jsonb
 * argument: a multi-row VALUES would exceed the protocol's 65,535 parameters).
 */
export async function insertRecipients(
  tx: Executor,
  tenantId: string,
  campaignId: string,
  firstPosition: number,
  rows: NewRecipient[],
  at: Date,
): Promise<void> {
  if (rows.length === 0) return;
  const input = rows.map((row, index) => ({
    position: firstPosition + index,
    line: row.line,
    phone_number: row.phone,
    name: row.name,
    email: row.email,
    context: row.context,
  }));
  await sql`
    INSERT INTO campaign_recipients (campaign_id, position, tenant_id, phone_number, name, email, context, line,
                                     status, updated_at)
    SELECT ${campaignId}, i.position, ${tenantId}, i.phone_number, i.name, i.email, i.context, i.line, 'pending', ${at}
    FROM jsonb_to_recordset(${JSON.stringify(input)}::jsonb)
      AS i(position integer, line integer, phone_number text, name text, email text, context jsonb)`.execute(
    tx,
  );
}

/**
 * Cancels the rows not yet called and those whose call was withdrawn before it was dialled
 * (withdrawQueuedCampaignCalls, calls/campaign-calls.ts); calls already dialled go on.
 */
export async function cancelPending(tx: Executor, campaignId: string, at: Date): Promise<void> {
  await sql`
    UPDATE campaign_recipients r SET status = 'canceled', updated_at = ${at}
    WHERE r.campaign_id = ${campaignId}
      AND (r.status = 'pending' OR (r.status = 'calling' AND EXISTS (
        SELECT 1 FROM calls c WHERE c.tenant_id = r.tenant_id AND c.id = r.call_id
          AND c.status = 'failed' AND c.ended_reason = 'canceled')))`.execute(tx);
}

/**
 * Rows whose calls have ended become done, or pending again (after `delayMinutes`) when the call
 * went unanswered and the campaign's retry allows another call; a call refused at dial time for
 * the do-not-call list makes its row skipped, as the tick's own check does.
 */
export async function settleEndedCalls(
  tx: Executor,
  campaignId: string,
  at: Date,
  retry: { maxAttempts: number; delayMinutes: number },
): Promise<void> {
  await sql`
    UPDATE campaign_recipients r
    SET status = CASE WHEN ${sql.raw(REFUSED)} THEN 'skipped'
                      WHEN c.status = 'no_answer' AND r.attempts < ${retry.maxAttempts} THEN 'pending' ELSE 'done' END,
        skip_reason = CASE WHEN ${sql.raw(REFUSED)} THEN 'do_not_call' END,
        outcome = CASE WHEN ${sql.raw(REFUSED)} THEN NULL ELSE c.status END,
        not_before = CASE WHEN c.status = 'no_answer' AND r.attempts < ${retry.maxAttempts}
                          THEN ${at}::timestamptz + make_interval(mins => ${retry.delayMinutes}) END,
        updated_at = ${at}
    FROM calls c
    WHERE r.campaign_id = ${campaignId} AND r.status = 'calling' AND c.id = r.call_id
      AND c.tenant_id = r.tenant_id AND c.status IN ('completed', 'no_answer', 'failed')`.execute(tx);
}

/** Rows with a call not ended yet (after settleEndedCalls: exactly the calling rows). */
export async function countCalling(tx: Executor, campaignId: string): Promise<number> {
  const result = await sql<{ n: number }>`
    SELECT count(*)::integer AS n FROM campaign_recipients
    WHERE campaign_id = ${campaignId} AND status = 'calling'`.execute(tx);
  return result.rows[0].n;
}

/** Pending rows still waiting for a retry's delay or due now, and the earliest wait. */
export async function pendingState(
  tx: Executor,
  campaignId: string,
  at: Date,
): Promise<{ due: number; waiting: number; nextAt: Date | null }> {
  const result = await sql<{ due: number; waiting: number; next_at: Date | null }>`
    SELECT count(*) FILTER (WHERE not_before IS NULL OR not_before <= ${at})::integer AS due,
           count(*) FILTER (WHERE not_before > ${at})::integer AS waiting,
           min(not_before) FILTER (WHERE not_before > ${at}) AS next_at
    FROM campaign_recipients WHERE campaign_id = ${campaignId} AND status = 'pending'`.execute(tx);
  const row = result.rows[0];
  return { due: row.due, waiting: row.waiting, nextAt: row.next_at ? new Date(row.next_at) : null };
}

export type ClaimedRecipient = Pick<
  CampaignRecipientsTable,
  'position' | 'phone_number' | 'name' | 'email' | 'context' | 'attempts'
>;

/** Locks up to `limit` due pending rows, in order; rows another worker holds are skipped. */
export async function claimDue(
  tx: Executor,
  campaignId: string,
  at: Date,
  limit: number,
): Promise<ClaimedRecipient[]> {
  const result = await sql<ClaimedRecipient>`
    SELECT position, phone_number, name, email, context, attempts FROM campaign_recipients
    WHERE campaign_id = ${campaignId} AND status = 'pending' AND (not_before IS NULL OR not_before <= ${at})
    ORDER BY position
    LIMIT ${limit}
    FOR UPDATE SKIP LOCKED`.execute(tx);
  return result.rows;
}

/** The row's call is stored (same transaction): it is calling, and never claimed again as such. */
export async function markCalling(
  tx: Executor,
  campaignId: string,
  position: number,
  callId: string,
  at: Date,
): Promise<void> {
  await sql`
    UPDATE campaign_recipients
    SET status = 'calling', call_id = ${callId}, outcome = NULL, attempts = attempts + 1, not_before = NULL,
        updated_at = ${at}
    WHERE campaign_id = ${campaignId} AND position = ${position} AND status = 'pending'`.execute(tx);
}

export async function markSkipped(
  tx: Executor,
  campaignId: string,
  position: number,
  reason: string,
  at: Date,
): Promise<void> {
  await sql`
    UPDATE campaign_recipients SET status = 'skipped', skip_reason = ${reason}, updated_at = ${at}
    WHERE campaign_id = ${campaignId} AND position = ${position} AND status = 'pending'`.execute(tx);
}

/** POST …/retry: done rows whose last call went unanswered or failed are pending again. */
export async function requeueUnsuccessful(tx: Executor, campaignId: string, at: Date): Promise<number> {
  const result = await sql`
    UPDATE campaign_recipients r SET status = 'pending', not_before = NULL, updated_at = ${at}
    FROM calls c
    WHERE r.campaign_id = ${campaignId} AND r.status IN ('done', 'calling') AND c.id = r.call_id
      AND c.tenant_id = r.tenant_id AND c.status IN ('no_answer', 'failed')`.execute(tx);
  return Number(result.numAffectedRows ?? 0);
}

/** Makes `token` the campaign's live scheduler chain. */
export async function setTickToken(tx: Executor, campaignId: string, token: string): Promise<void> {
  await sql`UPDATE campaigns SET tick_token = ${token} WHERE id = ${campaignId}`.execute(tx);
}
