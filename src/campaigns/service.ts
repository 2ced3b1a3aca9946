/**
 * Campaigns (docs/campaigns.md): a list of recipients one agent of the tenant calls, started now,
 * at `scheduled_at` or by hand, paused and resumed, canceled, retried. Every write locks the
 * campaign's row, so it is ordered with the scheduler's ticks (./scheduler.ts), which do the dialling.
 *
 *   draft ─start→ running ⇄ paused ─→ completed ─retry→ running
 *   scheduled ─(its time, or start)→ running;   any state but completed ─cancel→ canceled
 */

import { findAgentTarget } from '../agents/repository.js';
import { isKnownTimeZone } from '../agents/settings.js';
import { withdrawQueuedCampaignCalls } from '../calls/campaign-calls.js';
import { type AuditChange, recordAudit } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import type { Db, Executor } from '../core/db/database.js';
import { listPage } from '../core/db/pagination.js';
import { ApiError, type FieldIssue, notFound, validationFailed } from '../core/errors.js';
import { type AnswerRecorder, recordAnswer } from '../core/idempotency/answer.js';
import type { IdempotencyStore } from '../core/idempotency/store.js';
import { newId } from '../core/ids.js';
import { checkRows, type RawRecipient, rowsIssues, takeIn } from './intake.js';
import {
  type CampaignRow,
  cancelPending,
  countCampaigns,
  countRecipients,
  findCampaign,
  insertCampaign,
  insertRecipients,
  listCampaigns,
  listRecipients,
  requeueUnsuccessful,
  updateCampaign,
} from './repository.js';
import { campaignResultsCsv } from './results.js';
import { armTick, recordCampaignEvent } from './scheduler.js';
import type {
  Campaign,
  CampaignStatus,
  CampaignWithImport,
  CreateCampaignBody,
  ListCampaignsQuery,
  ListRecipientsQuery,
  RetryAnswer,
} from './schemas.js';
import { campaignView, campaignViews, toRecipient } from './serializers.js';

/** The campaign fields of a create request, recipients apart (JSON or CSV). */
export type CampaignInput = Omit<CreateCampaignBody, 'recipients'>;

const missing = () => notFound('Campaign');

function illegal(campaign: CampaignRow, action: string): ApiError {
  return new ApiError('conflict', `A ${campaign.status} campaign cannot be ${action}.`, {
    status: campaign.status,
  });
}

/** The JSON list's rows: line = 1-based position in `recipients`. */
export function jsonRows(recipients: CreateCampaignBody['recipients']): RawRecipient[] {
  return recipients.map((recipient, index) => ({
    ...recipient,
    line: index + 1,
    field: `recipients.${index}`,
  }));
}

/** What the schema cannot say about a campaign's settings: every problem, not the first. */
export function settingsIssues(input: Pick<CampaignInput, 'calling_hours'>): FieldIssue[] {
  const issues: FieldIssue[] = [];
  const hours = input.calling_hours;
  if (hours && !isKnownTimeZone(hours.timezone))
    issues.push({ field: 'calling_hours.timezone', issue: 'must be an IANA time zone name.' });
  if (hours && hours.start === hours.end)
    issues.push({ field: 'calling_hours.end', issue: 'must differ from start.' });
  return issues;
}

export function createCampaignService(deps: {
  db: Db;
  clock: Clock;
  idempotency: IdempotencyStore;
  /** The telephony engine's name, shown on the call events of withdrawn calls. */
  engine: string;
  /** Told after a change queued the scheduler's job (wakes this process's worker). */
  onQueued?: () => void;
}) {
  const { db, clock, idempotency } = deps;

  async function locked(tx: Executor, tenantId: string, campaignId: string): Promise<CampaignRow> {
    const campaign = await findCampaign(tx, tenantId, campaignId, { forUpdate: true });
    if (!campaign) throw missing();
    return campaign;
  }

  async function save(tx: Executor, campaign: CampaignRow, changes: Partial<CampaignRow>, at: Date) {
    Object.assign(campaign, changes, { updated_at: at });
    await updateCampaign(tx, campaign.tenant_id, campaign.id, {
      status: campaign.status,
      pause_reason: campaign.pause_reason,
      started_at: campaign.started_at,
      finished_at: campaign.finished_at,
      next_position: campaign.next_position,
      updated_at: at,
    });
  }

  /** Stores the rows of an upload (all or none) after the campaign's last. */
  async function store(tx: Executor, campaign: CampaignRow, rows: RawRecipient[], isNew: boolean, at: Date) {
    const intake = await takeIn(tx, campaign.tenant_id, isNew ? undefined : campaign.id, rows);
    await insertRecipients(tx, campaign.tenant_id, campaign.id, campaign.next_position, intake.accepted, at);
    campaign.next_position += intake.accepted.length;
    return intake.report;
  }

  /** A state change of the locked campaign, answered with the campaign after it. */
  async function transition(
    tenantId: string,
    campaignId: string,
    action: string,
    change: (tx: Executor, campaign: CampaignRow, now: Date) => Promise<void>,
  ): Promise<Campaign> {
    const view = await db.transaction().execute(async (tx) => {
      const campaign = await locked(tx, tenantId, campaignId);
      const now = clock.now();
      await change(tx, campaign, now);
      await recordAudit(tx, campaignChange(action, tenantId, campaignId, ['status'], now));
      return campaignView(tx, campaign);
    });
    deps.onQueued?.();
    return view;
  }

  async function run(tx: Executor, campaign: CampaignRow, now: Date): Promise<void> {
    await save(
      tx,
      campaign,
      { status: 'running', pause_reason: null, started_at: campaign.started_at ?? now },
      now,
    );
    await armTick(tx, campaign, now);
  }

  return {
    async create(
      tenantId: string,
      input: CampaignInput,
      rows: RawRecipient[],
      recorder?: AnswerRecorder<CampaignWithImport>,
    ): Promise<CampaignWithImport> {
      // The settings' problems and the rows' together: one 422 naming every offending field.
      const issues = [...settingsIssues(input), ...rowsIssues(rows)];
      if (issues.length > 0) throw validationFailed(issues);
      const result = await db.transaction().execute(async (tx) => {
        const agent = await findAgentTarget(tx, tenantId, input.agent_id);
        if (!agent || agent.owner_deleted_at) throw notFound('Agent');
        const now = clock.now();
        const scheduledAt = input.scheduled_at ? new Date(input.scheduled_at) : null;
        const campaign: CampaignRow = {
          id: newId('cmp'),
          tenant_id: tenantId,
          agent_id: input.agent_id,
          name: input.name,
          status: scheduledAt ? 'scheduled' : 'draft',
          pause_reason: null,
          scheduled_at: scheduledAt,
          tick_token: null,
          settings: {
            max_concurrent_calls: input.max_concurrent_calls,
            calling_hours: input.calling_hours,
            retry: input.retry,
          },
          next_position: 1,
          created_at: now,
          updated_at: now,
          started_at: null,
          finished_at: null,
        };
        await insertCampaign(tx, campaign);
        const report = await store(tx, campaign, rows, true, now);
        await save(tx, campaign, {}, now);
        if (scheduledAt) await armTick(tx, campaign, scheduledAt > now ? scheduledAt : now);
        const answer = { ...(await campaignView(tx, campaign)), import: report };
        await recordAudit(
          tx,
          campaignChange('campaign.created', tenantId, campaign.id, Object.keys(input), now),
        );
        await recordAnswer(idempotency, tx, recorder, answer);
        return answer;
      });
      if (result.status === 'scheduled') deps.onQueued?.();
      return result;
    },

    /** POST …/recipients: more rows, while the campaign has not ended. */
    async addRecipients(
      tenantId: string,
      campaignId: string,
      rows: RawRecipient[],
      recorder?: AnswerRecorder<CampaignWithImport>,
    ): Promise<CampaignWithImport> {
      checkRows(rows);
      const answer = await db.transaction().execute(async (tx) => {
        const campaign = await locked(tx, tenantId, campaignId);
        if (campaign.status === 'completed' || campaign.status === 'canceled')
          throw illegal(campaign, 'given more recipients');
        const now = clock.now();
        const report = await store(tx, campaign, rows, false, now);
        await save(tx, campaign, {}, now);
        // The running chain may be asleep until a retry's delay is up: the new rows go now.
        if (campaign.status === 'running' && report.accepted > 0) await armTick(tx, campaign, now);
        const result = { ...(await campaignView(tx, campaign)), import: report };
        await recordAudit(
          tx,
          campaignChange('campaign.recipients_added', tenantId, campaignId, ['recipients'], now),
        );
        await recordAnswer(idempotency, tx, recorder, result);
        return result;
      });
      deps.onQueued?.();
      return answer;
    },

    async list(tenantId: string, query: ListCampaignsQuery) {
      const page = await listPage(
        query,
        (limit, offset) => listCampaigns(db, tenantId, query.status, limit, offset),
        () => countCampaigns(db, tenantId, query.status),
        (row) => row as CampaignRow,
      );
      return { data: await campaignViews(db, tenantId, page.data), pagination: page.pagination };
    },

    async get(tenantId: string, campaignId: string): Promise<Campaign> {
      const campaign = await findCampaign(db, tenantId, campaignId);
      if (!campaign) throw missing();
      return campaignView(db, campaign);
    },

    async recipients(tenantId: string, campaignId: string, query: ListRecipientsQuery) {
      if (!(await findCampaign(db, tenantId, campaignId))) throw missing();
      return listPage(
        query,
        (limit, offset) => listRecipients(db, tenantId, campaignId, query.status, limit, offset),
        () => countRecipients(db, tenantId, campaignId, query.status),
        toRecipient,
      );
    },

    /** Every recipient with its latest call, as CSV (./results.ts). */
    async resultsCsv(tenantId: string, campaignId: string): Promise<string> {
      if (!(await findCampaign(db, tenantId, campaignId))) throw missing();
      return campaignResultsCsv(db, tenantId, campaignId);
    },

    start: (tenantId: string, campaignId: string) =>
      transition(tenantId, campaignId, 'campaign.started', async (tx, campaign, now) => {
        if (campaign.status !== 'draft' && campaign.status !== 'scheduled')
          throw illegal(campaign, 'started');
        await run(tx, campaign, now);
        await recordCampaignEvent(tx, campaign, 'campaign.started', now);
      }),

    /** Manual pause; a campaign paused by itself becomes paused by hand (it no longer resumes alone). */
    pause: (tenantId: string, campaignId: string) =>
      transition(tenantId, campaignId, 'campaign.paused', async (tx, campaign, now) => {
        const selfPaused = campaign.status === 'paused' && campaign.pause_reason !== 'manual';
        if (campaign.status !== 'running' && !selfPaused) throw illegal(campaign, 'paused');
        await save(tx, campaign, { status: 'paused', pause_reason: 'manual' }, now);
        if (!selfPaused) await recordCampaignEvent(tx, campaign, 'campaign.paused', now);
      }),

    resume: (tenantId: string, campaignId: string) =>
      transition(tenantId, campaignId, 'campaign.resumed', async (tx, campaign, now) => {
        if (campaign.status !== 'paused') throw illegal(campaign, 'resumed');
        await run(tx, campaign, now);
      }),

    cancel: (tenantId: string, campaignId: string) =>
      transition(tenantId, campaignId, 'campaign.canceled', async (tx, campaign, now) => {
        const final: CampaignStatus[] = ['completed', 'canceled'];
        if (final.includes(campaign.status)) throw illegal(campaign, 'canceled');
        await withdrawQueuedCampaignCalls(tx, tenantId, campaign.id, now, deps.engine);
        await cancelPending(tx, campaign.id, now);
        await save(tx, campaign, { status: 'canceled', pause_reason: null, finished_at: now }, now);
      }),

    /** Dials again the recipients whose last call ended no_answer or failed. */
    async retry(tenantId: string, campaignId: string): Promise<RetryAnswer> {
      let requeued = 0;
      const campaign = await transition(tenantId, campaignId, 'campaign.retried', async (tx, row, now) => {
        if (row.status === 'draft' || row.status === 'scheduled' || row.status === 'canceled')
          throw illegal(row, 'retried');
        requeued = await requeueUnsuccessful(tx, row.id, now);
        if (requeued === 0) return;
        if (row.status === 'completed') {
          await save(tx, row, { status: 'running', finished_at: null }, now);
          await recordCampaignEvent(tx, row, 'campaign.started', now);
        }
        if (row.status === 'running') await armTick(tx, row, now);
      });
      return { ...campaign, requeued };
    },
  };
}

export type CampaignService = ReturnType<typeof createCampaignService>;

function campaignChange(
  action: string,
  tenantId: string,
  campaignId: string,
  fields: string[],
  at: Date,
): AuditChange {
  return { action, tenantId, objectType: 'campaign', objectId: campaignId, fields, at };
}
