/**
 * The campaign scheduler: one live `campaigns.tick` job per campaign, each run queueing the next.
 * The campaign's row names the live chain (`tick_token`); arming a tick (start, resume, retry,
 * each tick's next run) replaces the token, so a job it superseded, or a second run of a job whose
 * lease was taken over, finds another token and ends without acting. A tick, in one transaction
 * holding the campaign's row lock (so two runs of one campaign never overlap): starts a scheduled
 * campaign when due; settles rows whose calls have ended; pauses on a refusal that holds for
 * every row (the owner's credits, the agency's wallet, the agent) and resumes once it no longer
 * does; waits for the campaign's calling hours; then claims due rows (FOR UPDATE SKIP LOCKED) up
 * to the campaign's cap and turns each into a call with the guarded insert, marking the row in
 * the same transaction, so a row becomes at most one call per attempt whatever crashes.
 * The pipeline then applies the agent's own controls to each call.
 */

import { nextOpening } from '../calls/calling-hours.js';
import { campaignTarget, queueCampaignCall } from '../calls/campaign-calls.js';
import type { CallService } from '../calls/service.js';
import type { CachedWebhookTarget } from '../calls/webhook-targets.js';
import type { Clock } from '../core/clock.js';
import type { Db, Executor } from '../core/db/database.js';
import { ApiError } from '../core/errors.js';
import { randomBase62 } from '../core/ids.js';
import { enqueueJob, type Job } from '../core/jobs/runner.js';
import { recordEvent } from '../events/record.js';
import type { EventType } from '../events/schemas.js';
import {
  type CampaignRow,
  claimDue,
  countCalling,
  findCampaign,
  listedPhones,
  markCalling,
  markSkipped,
  pendingState,
  setTickToken,
  settleEndedCalls,
  updateCampaign,
} from './repository.js';
import type { PauseReason } from './schemas.js';
import { campaignView } from './serializers.js';
import { campaignsPausedFor, pullTickForward } from './wakes.js';

export const CAMPAIGN_TICK_QUEUE = 'campaigns.tick';
/** Rows turned into calls per transaction. */
export const TICK_BATCH = 50;
/**
 * A campaign without `max_concurrent_calls` keeps this many calls outstanding, not its whole list:
 * balances move only when calls end, so a list turned into queued calls at once would outrun the
 * owner's credits, the tenant's wallet, a pause and do-not-call listings made meanwhile.
 */
export const DEFAULT_CONCURRENT_CALLS = 10;
/** How soon a running campaign looks again at its calls (ends free its slots). */
export const ACTIVE_POLL_MS = 5_000;
/** How soon a campaign paused by itself checks whether it may resume. */
export const PAUSED_POLL_MS = 60_000;
const TICK_MAX_ATTEMPTS = 2_147_483_647;

export interface TickPayload {
  tenantId: string;
  campaignId: string;
  token: string;
}

/** The singleton key of the tick job carrying `token` for the campaign. */
const tickKeyOf = (campaignId: string, token: string) => `campaign:${campaignId}:${token}`;

/** Queues the campaign's next tick for `runAt` as its live chain (call with the campaign locked). */
export async function armTick(
  tx: Executor,
  campaign: Pick<CampaignRow, 'id' | 'tenant_id' | 'tick_token'>,
  runAt: Date,
): Promise<void> {
  const token = randomBase62(16);
  campaign.tick_token = token;
  await setTickToken(tx, campaign.id, token);
  await enqueueJob(tx, {
    queue: CAMPAIGN_TICK_QUEUE,
    tenantId: campaign.tenant_id,
    payload: { tenantId: campaign.tenant_id, campaignId: campaign.id, token } satisfies TickPayload,
    runAt,
    maxAttempts: TICK_MAX_ATTEMPTS,
    singletonKey: tickKeyOf(campaign.id, token),
  });
}

/** Records a campaign event with the campaign as GET shows it after the change (same transaction). */
export async function recordCampaignEvent(
  tx: Executor,
  campaign: CampaignRow,
  type: Extract<EventType, `campaign.${string}`>,
  at: Date,
): Promise<void> {
  const object = await campaignView(tx, campaign);
  await recordEvent(tx, { tenantId: campaign.tenant_id, type, object, at });
}

/** The pause a refusal of every call means; undefined for one that only concerns the row. */
function pauseReasonOf(refusal: ApiError): PauseReason | undefined {
  switch (refusal.code as string) {
    case 'insufficient_credits':
      return 'insufficient_credits';
    case 'tenant_balance_exhausted':
      return 'tenant_balance_exhausted';
    case 'not_found':
    case 'agent_not_published':
    case 'agent_unavailable':
      return 'agent_unavailable';
    default:
      return undefined;
  }
}

export function createCampaignScheduler(deps: {
  db: Db;
  clock: Clock;
  calls: CallService;
  /** Told after a tick committed new calls (wakes this process's worker). */
  onQueued?: () => void;
}) {
  const { db, clock } = deps;

  /** Moves the locked campaign to `changes`, keeping `campaign` in step, with its event if any. */
  async function move(
    tx: Executor,
    campaign: CampaignRow,
    changes: Partial<CampaignRow>,
    at: Date,
    event?: Extract<EventType, `campaign.${string}`>,
  ): Promise<void> {
    Object.assign(campaign, changes, { updated_at: at });
    await updateCampaign(tx, campaign.tenant_id, campaign.id, {
      status: campaign.status,
      pause_reason: campaign.pause_reason,
      started_at: campaign.started_at,
      finished_at: campaign.finished_at,
      updated_at: at,
    });
    if (event) await recordCampaignEvent(tx, campaign, event, at);
  }

  /** True when the campaign has nothing left to call: then it is completed. */
  async function completeIfDone(tx: Executor, campaign: CampaignRow, now: Date): Promise<boolean> {
    const pending = await pendingState(tx, campaign.id, now);
    if (pending.due + pending.waiting > 0 || (await countCalling(tx, campaign.id)) > 0) return false;
    await move(
      tx,
      campaign,
      { status: 'completed', pause_reason: null, finished_at: now },
      now,
      'campaign.completed',
    );
    return true;
  }

  async function pause(tx: Executor, campaign: CampaignRow, reason: PauseReason, now: Date): Promise<Date> {
    await move(tx, campaign, { status: 'paused', pause_reason: reason }, now, 'campaign.paused');
    return new Date(now.getTime() + PAUSED_POLL_MS);
  }

  /** Dials up to the cap; answers when to look again. */
  async function dispatch(
    tx: Executor,
    campaign: CampaignRow,
    target: CachedWebhookTarget,
    now: Date,
  ): Promise<{ nextAt: Date | undefined; queued: number }> {
    const hours = campaign.settings.calling_hours;
    if (hours) {
      const opens = nextOpening(now, hours);
      if (opens > now) return { nextAt: opens, queued: 0 };
    }
    const calling = await countCalling(tx, campaign.id);
    const cap = campaign.settings.max_concurrent_calls ?? DEFAULT_CONCURRENT_CALLS;
    const limit = Math.min(TICK_BATCH, cap - calling);
    const soon = new Date(now.getTime() + ACTIVE_POLL_MS);
    if (limit <= 0) return { nextAt: soon, queued: 0 };
    const rows = await claimDue(tx, campaign.id, now, limit);
    const listed = await listedPhones(
      tx,
      campaign.tenant_id,
      rows.map((row) => row.phone_number),
    );
    let queued = 0;
    let current = target;
    for (const row of rows) {
      if (listed.has(row.phone_number)) {
        await markSkipped(tx, campaign.id, row.position, 'do_not_call', now);
        continue;
      }
      const recipient = {
        phone: row.phone_number,
        name: row.name,
        email: row.email,
        context: (row.context ?? {}) as Record<string, unknown>,
      };
      const result = await queueCampaignCall(
        deps.calls,
        tx,
        campaign.tenant_id,
        campaign.agent_id,
        recipient,
        current,
      );
      if ('call' in result) {
        await markCalling(tx, campaign.id, row.position, result.call.id, now);
        current = result.target;
        queued += 1;
        continue;
      }
      if (result.refused.code === 'do_not_call') {
        await markSkipped(tx, campaign.id, row.position, 'do_not_call', now);
        continue;
      }
      const reason = pauseReasonOf(result.refused);
      if (reason) return { nextAt: await pause(tx, campaign, reason, now), queued };
      return { nextAt: soon, queued };
    }
    if (queued === 0 && (await completeIfDone(tx, campaign, now))) return { nextAt: undefined, queued };
    if (rows.length === TICK_BATCH) return { nextAt: now, queued };
    if (queued === 0 && calling === 0) {
      // Only rows waiting for a retry's delay: come back when the first is due.
      const pending = await pendingState(tx, campaign.id, now);
      if (pending.due === 0 && pending.nextAt) return { nextAt: pending.nextAt, queued };
    }
    return { nextAt: soon, queued };
  }

  /** One tick on the locked campaign: when to run the next (undefined: no next). */
  async function step(tx: Executor, campaign: CampaignRow, now: Date) {
    if (campaign.status === 'scheduled') {
      if (campaign.scheduled_at && new Date(campaign.scheduled_at) > now)
        return { nextAt: new Date(campaign.scheduled_at), queued: 0 };
      await move(tx, campaign, { status: 'running', started_at: now }, now, 'campaign.started');
    }
    const selfPaused = campaign.status === 'paused' && campaign.pause_reason !== 'manual';
    if (campaign.status !== 'running' && !selfPaused) return { nextAt: undefined, queued: 0 };
    const retry = campaign.settings.retry;
    await settleEndedCalls(tx, campaign.id, now, {
      maxAttempts: retry?.max_attempts ?? 1,
      delayMinutes: retry?.delay_minutes ?? 0,
    });
    const target = await campaignTarget(tx, campaign.tenant_id, campaign.agent_id);
    if (target instanceof ApiError) {
      if (selfPaused) return { nextAt: new Date(now.getTime() + PAUSED_POLL_MS), queued: 0 };
      if (await completeIfDone(tx, campaign, now)) return { nextAt: undefined, queued: 0 };
      const reason = pauseReasonOf(target) ?? 'agent_unavailable';
      return { nextAt: await pause(tx, campaign, reason, now), queued: 0 };
    }
    // Resumed without an event of its own: GET shows it running again.
    if (selfPaused) await move(tx, campaign, { status: 'running', pause_reason: null }, now);
    return dispatch(tx, campaign, target, now);
  }

  /**
   * A tick out of the chain's turn: the step under the campaign's lock, for a running campaign or
   * one paused by itself, then the chain's next tick pulled forward when the step wants to look
   * again sooner (or armed, if the chain has none).
   */
  async function wakeOnce(tenantId: string, campaignId: string): Promise<void> {
    const queued = await db.transaction().execute(async (tx) => {
      const campaign = await findCampaign(tx, tenantId, campaignId, { forUpdate: true });
      if (!campaign) return 0;
      const selfPaused = campaign.status === 'paused' && campaign.pause_reason !== 'manual';
      if (campaign.status !== 'running' && !selfPaused) return 0;
      const now = clock.now();
      const { nextAt, queued } = await step(tx, campaign, now);
      const live =
        nextAt &&
        campaign.tick_token &&
        (await pullTickForward(tx, tickKeyOf(campaign.id, campaign.tick_token), nextAt));
      if (nextAt && !live) await armTick(tx, campaign, nextAt);
      return queued;
    });
    if (queued > 0) deps.onQueued?.();
  }

  /** Wakes under way in this process, by campaign; `again`: another wake came while one ran. */
  const waking = new Map<string, { again: boolean; done: Promise<void> }>();

  /**
   * Runs a tick of the campaign now. Wakes of one campaign in this process run one at a time; those
   * that come while one runs share one more run after it, which starts after their jobs were
   * claimed, so it sees what they announced (a call that ended, credits that came back).
   */
  function wake(tenantId: string, campaignId: string): Promise<void> {
    const key = `${tenantId}/${campaignId}`;
    const running = waking.get(key);
    if (running) {
      running.again = true;
      return running.done;
    }
    const entry = { again: false, done: Promise.resolve() };
    waking.set(key, entry);
    entry.done = (async () => {
      try {
        do {
          entry.again = false;
          await wakeOnce(tenantId, campaignId);
        } while (entry.again);
      } finally {
        waking.delete(key);
      }
    })();
    return entry.done;
  }

  return {
    /** One of the campaign's calls ended: its slot is filled now rather than at the next tick. */
    callEnded: (tenantId: string, campaignId: string) => wake(tenantId, campaignId),

    /**
     * The balance that paused campaigns came back above zero (an owner's credits, the tenant's
     * wallet): they resume now rather than at their next check.
     */
    async balanceRestored(
      tenantId: string,
      reason: 'insufficient_credits' | 'tenant_balance_exhausted',
      ownerId?: string,
    ): Promise<void> {
      for (const campaignId of await campaignsPausedFor(db, tenantId, reason, ownerId))
        await wake(tenantId, campaignId);
    },

    async tick(job: Job<TickPayload>): Promise<void> {
      const { tenantId, campaignId, token } = job.payload;
      const queued = await db.transaction().execute(async (tx) => {
        const campaign = await tx
          .selectFrom('campaigns')
          .selectAll()
          .where('tenant_id', '=', tenantId)
          .where('id', '=', campaignId)
          .forUpdate()
          .executeTakeFirst();
        if (!campaign || campaign.tick_token !== token) return 0;
        const now = clock.now();
        const { nextAt, queued } = await step(tx, campaign, now);
        if (nextAt) await armTick(tx, campaign, nextAt);
        return queued;
      });
      if (queued > 0) deps.onQueued?.();
    },
  };
}

export type CampaignScheduler = ReturnType<typeof createCampaignScheduler>;
