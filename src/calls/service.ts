/**
 * Calls: the call-trigger webhook (partner-api.md, decisions.md §7) and the operator's view.
 * A trigger for a webhook this process has already served costs one database round trip: the
 * statement that stores the call and its dispatch job together, guarded by every condition a call
 * needs (webhook-targets.ts). Otherwise, and whenever that guard refuses, it costs two: one
 * indexed query for the agent, its published version and its owner, which decides the answer,
 * then the guarded statement.
 */

import { findWebhookTarget, type WebhookTarget } from '../agents/repository.js';
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db.js';
import { ApiError, notFound } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { listPage } from '../core/pagination.js';
import { parseTriggerBody, type TriggerInput } from './input.js';
import {
  type CallRow,
  countCalls,
  findCall,
  findCallTenant,
  insertQueuedCall,
  listCalls,
} from './repository.js';
import type { Call, ListCallsQuery, QueuedCall } from './schemas.js';
import { renderTemplate } from './template.js';
import type { CachedWebhookTarget, WebhookTargetCache } from './webhook-targets.js';

export const DISPATCH_QUEUE = 'calls.dispatch';
export const DISPATCH_MAX_ATTEMPTS = 8;

const WEBHOOK_ID = /^webh_[0-9A-Za-z]{16,64}$/;

/** The same answer for an id that never existed and one that was rotated away. */
const unknownWebhook = () => new ApiError('not_found', 'No agent webhook at this address.');

export function toCall(row: CallRow): Call {
  return {
    id: row.id,
    agent_id: row.agent_id,
    agent_version: row.agent_version,
    user_id: row.user_id,
    from: row.from_number,
    to: row.to_number,
    name: row.name,
    email: row.email,
    context: (row.context ?? {}) as Record<string, unknown>,
    prompt: row.prompt,
    welcome_message: row.welcome_message,
    status: row.status,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    ended_at: row.ended_at?.toISOString() ?? null,
    duration_seconds: row.duration_seconds,
    failure_reason: row.failure_reason,
  };
}

/** The refusal a webhook target earns, if any, in the order of decisions.md §7. */
function refusalOf(target: WebhookTarget | undefined): ApiError | undefined {
  if (!target || target.owner_deleted_at) return unknownWebhook();
  if (target.published_version === null || target.prompt === null) {
    return new ApiError(
      'agent_not_published',
      'The agent has no published version; publish it before triggering calls.',
    );
  }
  if (target.owner_status === 'blocked') {
    return new ApiError('agent_unavailable', 'The agent’s owner is blocked; the agent cannot place calls.');
  }
  if (target.credit_balance_minutes <= 0) {
    return new ApiError('insufficient_credits', 'The agent’s owner has no credits left; no call was placed.');
  }
  return undefined;
}

export function createCallService(deps: {
  db: Db;
  clock: Clock;
  /** This process's webhook targets (one per app): skips the target read for a known webhook. */
  webhookTargets: WebhookTargetCache;
  /** Told after each queued call (wakes this process's worker). */
  onQueued?: () => void;
}) {
  const { db, clock, webhookTargets } = deps;

  /**
   * Stores the call for `target` with the guarded insert; undefined when the guard refused it
   * (nothing stored), which says only that `target` is no longer current.
   */
  async function queue(
    webhookId: string,
    target: CachedWebhookTarget,
    input: TriggerInput,
  ): Promise<QueuedCall | undefined> {
    const createdAt = clock.now();
    const id = newId('call');
    const stored = await insertQueuedCall(
      db,
      webhookId,
      {
        id,
        tenantId: target.tenant_id,
        agentId: target.agent_id,
        agentVersion: target.published_version,
        userId: target.user_id,
        from: target.phone_number,
        to: input.phone,
        name: input.name,
        email: input.email,
        context: input.context,
        prompt: renderTemplate(target.prompt, input.templateValues),
        welcomeMessage: renderTemplate(target.welcome_message, input.templateValues),
        createdAt,
      },
      {
        queue: DISPATCH_QUEUE,
        payload: { callId: id, tenantId: target.tenant_id },
        maxAttempts: DISPATCH_MAX_ATTEMPTS,
      },
    );
    if (!stored) return undefined;
    deps.onQueued?.();
    return {
      id,
      status: 'queued',
      agent_id: target.agent_id,
      from: target.phone_number,
      to: input.phone,
      created_at: createdAt.toISOString(),
    };
  }

  async function tenantOfCall(callId: string): Promise<string> {
    const tenantId = await findCallTenant(db, callId);
    if (!tenantId) throw notFound('Call');
    return tenantId;
  }

  return {
    /** Queues one call for the agent behind `webhookId`; no de-duplication (partner-api.md, 4). */
    async trigger(webhookId: string, body: Record<string, unknown>): Promise<QueuedCall> {
      const input = parseTriggerBody(body);
      if (!WEBHOOK_ID.test(webhookId)) throw unknownWebhook();
      const cached = webhookTargets.get(webhookId);
      if (cached) {
        const queued = await queue(webhookId, cached, input);
        if (queued) return queued;
        // Something changed since (rotation, publish, block, deletion, debit): refusals are only
        // ever answered from a fresh read, below.
        webhookTargets.forget(webhookId, cached);
      }
      // A concurrent change (rotation, publish, block, debit) can invalidate the target between
      // the read and the guarded insert; read again once and answer from the fresh state.
      for (let attempt = 0; attempt < 2; attempt++) {
        const found = await findWebhookTarget(db, webhookId);
        const refusal = refusalOf(found);
        if (refusal || !found) throw refusal ?? unknownWebhook();
        const target: CachedWebhookTarget = {
          agent_id: found.agent_id,
          tenant_id: found.tenant_id,
          user_id: found.user_id,
          published_version: found.published_version as number,
          prompt: found.prompt as string,
          welcome_message: found.welcome_message as string,
          phone_number: found.phone_number as string,
        };
        const queued = await queue(webhookId, target, input);
        if (queued) {
          // Cached only once the guarded insert accepted it, so it was current a moment ago.
          webhookTargets.set(webhookId, target);
          return queued;
        }
      }
      throw unknownWebhook();
    },

    async list(query: ListCallsQuery) {
      const filter = { tenantId: query.tenant_id, agentId: query.agent_id, status: query.status };
      return listPage(
        query,
        (limit, offset) => listCalls(db, filter, limit, offset),
        () => countCalls(db, filter),
        toCall,
      );
    },

    async get(callId: string): Promise<Call> {
      const row = await findCall(db, await tenantOfCall(callId), callId);
      if (!row) throw notFound('Call');
      return toCall(row);
    },
  };
}

export type CallService = ReturnType<typeof createCallService>;
