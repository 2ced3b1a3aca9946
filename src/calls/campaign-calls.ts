/**
 * How a campaign (src/campaigns) places a call: the call service's guarded insert, run in the
 * campaign's own transaction so the recipient's row and its call commit together. A refusal is a
 * value, the ApiError POST /api/v1/calls would answer (a listed number: `do_not_call`).
 */
import { findAgentTarget } from '../agents/repository.js';
import { type Executor, runPrepared } from '../core/db/database.js';
import { ApiError, notFound } from '../core/errors.js';
import { isOnDoNotCallList } from '../do-not-call/repository.js';
import type { TriggerInput } from './input.js';
import { refusalOf } from './refusal.js';
import { recordCallEvents } from './repository.js';
import type { QueuedCall } from './schemas.js';
import type { CallService } from './service.js';
import { type CachedWebhookTarget, cacheable } from './webhook-targets.js';

export interface CampaignCallInput {
  phone: string;
  name: string;
  email: string | null;
  context: Record<string, unknown>;
}

export type CampaignCallResult = { call: QueuedCall; target: CachedWebhookTarget } | { refused: ApiError };

/** The agent's current target, or the refusal a call to it would get now. */
export async function campaignTarget(
  executor: Executor,
  tenantId: string,
  agentId: string,
): Promise<CachedWebhookTarget | ApiError> {
  const found = await findAgentTarget(executor, tenantId, agentId);
  const refusal = refusalOf(found, () => notFound('Agent'));
  if (refusal || !found) return refusal ?? notFound('Agent');
  return cacheable(found);
}

/**
 * Queues one call in `executor` (the caller's transaction; the caller wakes the worker after its
 * commit). `target` from an earlier answer skips the agent's read; when the guard refuses, the
 * refusal is explained from a fresh read.
 */
export async function queueCampaignCall(
  calls: CallService,
  executor: Executor,
  tenantId: string,
  agentId: string,
  recipient: CampaignCallInput,
  target?: CachedWebhookTarget,
): Promise<CampaignCallResult> {
  const templateValues: Record<string, unknown> = { ...recipient.context, phone: recipient.phone };
  if (recipient.name !== '') templateValues.name = recipient.name;
  if (recipient.email !== null) templateValues.email = recipient.email;
  const input: TriggerInput = { ...recipient, templateValues };
  let current = target;
  // Two rounds: a cached target may be stale (a publish); a fresh one refused is a real refusal.
  for (let round = 0; round < 2; round++) {
    if (!current) {
      const fresh = await campaignTarget(executor, tenantId, agentId);
      if (fresh instanceof ApiError) return { refused: fresh };
      current = fresh;
    }
    const call = await calls.insertInTx(executor, current, input);
    if (call) return { call, target: current };
    if (await isOnDoNotCallList(executor, tenantId, recipient.phone)) {
      return { refused: new ApiError('do_not_call', 'The number is on the tenant’s do-not-call list.') };
    }
    current = undefined;
  }
  return { refused: new ApiError('conflict', 'The agent changed while the call was being placed.') };
}

/**
 * A canceled campaign's calls not dialled yet (queued, also between retry attempts) end `failed`
 * with `ended_reason` `canceled`, their timeline event and `call.failed`; a dispatch job that
 * comes later finds them final and does nothing. Calls already dialling or talking go on.
 * Answers how many were withdrawn.
 */
export async function withdrawQueuedCampaignCalls(
  tx: Executor,
  tenantId: string,
  campaignId: string,
  at: Date,
  engine: string,
): Promise<number> {
  const rows = await runPrepared<{ id: string }>(tx, {
    name: 'calls_withdraw_campaign_queued',
    text: `
      WITH withdrawn AS (
        UPDATE calls c SET status = 'failed', ended_reason = 'canceled', ended_at = $3, updated_at = $3,
               failure_reason = 'The campaign was canceled before this call was dialled.', scheduled_for = NULL
        FROM campaign_recipients r
        WHERE r.campaign_id = $2 AND r.tenant_id = $1 AND r.status = 'calling'
          AND c.tenant_id = r.tenant_id AND c.id = r.call_id AND c.status = 'queued'
        RETURNING c.*
      ), withdrawn_event AS (
        INSERT INTO call_events (tenant_id, call_id, status, at, detail)
        SELECT tenant_id, id, 'failed', $3, jsonb_build_object('failure_reason', failure_reason, 'ended_reason', 'canceled')
        FROM withdrawn
        RETURNING id, call_id, status, at, detail
      ), ${recordCallEvents({ calls: 'withdrawn', type: "'call.failed'", newEvents: 'withdrawn_event', engine: '$4::text' })}
      SELECT id FROM withdrawn`,
    values: [tenantId, campaignId, at, engine],
  });
  return rows.length;
}
