/**
 * Calls: the call-trigger webhook (docs/api.md), POST/GET /api/v1/calls and the operator's view.
 * Both ways of placing a call share one path (`place`, placement.ts): the guarded insert that
 * stores the call, its first timeline event and its dispatch job in one statement, shared by the
 * calls placed together. A trigger for a webhook this process has already served costs one
 * database round trip, that statement (webhook-targets.ts). Otherwise, and whenever that guard
 * refuses, it costs two: one indexed query for the agent, its published version and its owner,
 * which decides the answer, then the guarded statement. An Idempotency-Key (opt-in) adds its
 * claim, and the answer is stored in the transaction that stores the call, so a retry replays it
 * and never calls twice.
 */

import { findAgentTarget, findAgentTenant, findWebhookTarget } from '../agents/repository.js';
import type { Clock } from '../core/clock.js';
import type { Db, Executor } from '../core/db/database.js';
import { listJsonPageCountedApart, listPageCountedApart } from '../core/db/pagination.js';
import { ApiError, notFound, validationFailed } from '../core/errors.js';
import { checkStorable } from '../core/http/validation.js';
import type { AnswerRecorder } from '../core/idempotency/answer.js';
import type { IdempotencyStore } from '../core/idempotency/store.js';
import { MAX_CONTEXT_DEPTH, MAX_CONTEXT_KEYS, parseTriggerBody, type TriggerInput } from './input.js';
import {
  type CallFilter,
  countCallsPastPage,
  listCalls,
  listCallsJson,
  partnerCallFilter,
} from './list-repository.js';
import { createCallPlacement } from './placement.js';
import { refusalOf } from './refusal.js';
import { type CallRow, findCall, findCallTenant, listCallEvents } from './repository.js';
import type {
  CallDetail,
  CallListItem,
  CreateCallBody,
  ListCallsQuery,
  ListPartnerCallsQuery,
  OperatorCall,
  QueuedCall,
} from './schemas.js';
import { outcomeOf, toCall, toOperatorCall } from './serializers.js';
import { type CachedWebhookTarget, cacheable, type WebhookTargetCache } from './webhook-targets.js';

const WEBHOOK_ID = /^webh_[0-9A-Za-z]{16,64}$/;

/** The same answer for an id that never existed and one that was rotated away. */
const unknownWebhook = () => new ApiError('not_found', 'No agent webhook at this address.');

/** The API's `context`: the webhook's limits on extra keys, as field errors. */
function checkContext(context: Record<string, unknown>): void {
  if (Object.keys(context).length > MAX_CONTEXT_KEYS) {
    throw validationFailed([{ field: 'context', issue: `must have at most ${MAX_CONTEXT_KEYS} keys.` }]);
  }
  if (checkStorable(context, MAX_CONTEXT_DEPTH + 1).tooDeep) {
    throw validationFailed([
      { field: 'context', issue: `values may be nested at most ${MAX_CONTEXT_DEPTH} levels deep.` },
    ]);
  }
}

export function createCallService(deps: {
  db: Db;
  clock: Clock;
  /** This process's webhook targets (one per app): skips the target read for a known webhook. */
  webhookTargets: WebhookTargetCache;
  idempotency: IdempotencyStore;
  /** The telephony engine's name, shown on each call. */
  engine: string;
  /** Told after each queued call (wakes this process's worker). */
  onQueued?: () => void;
}) {
  const { db, clock, webhookTargets, idempotency } = deps;

  const { insert, place } = createCallPlacement({
    db,
    clock,
    idempotency,
    engine: deps.engine,
    onQueued: deps.onQueued,
  });

  async function tenantOfCall(callId: string): Promise<string> {
    const tenantId = await findCallTenant(db, callId);
    if (!tenantId) throw notFound('Call');
    return tenantId;
  }

  function toItem(row: CallRow): CallListItem {
    return {
      ...toCall(row),
      ...outcomeOf(row),
      scheduled_for: row.scheduled_for?.toISOString() ?? null,
      attempts: row.attempts,
      billed_minutes: row.billed_minutes,
      ended_reason: row.ended_reason,
      engine: row.engine ?? deps.engine,
      engine_call_id: row.engine_call_id,
      transcript: row.transcript,
      recording_url: row.recording_url,
    };
  }

  async function detail(
    executor: Executor,
    tenantId: string,
    callId: string,
  ): Promise<CallDetail | undefined> {
    const row = await findCall(executor, tenantId, callId);
    if (!row) return undefined;
    const events = await listCallEvents(executor, tenantId, callId);
    return {
      ...toItem(row),
      events: events.map((event) => ({
        status: event.status,
        at: event.at.toISOString(),
        detail: (event.detail ?? {}) as Record<string, unknown>,
      })),
    };
  }

  function page<Item>(
    request: { page: number; limit: number },
    filter: CallFilter,
    order: 'asc' | 'desc',
    toListItem: (row: CallRow) => Item,
  ) {
    return listPageCountedApart(
      request,
      (limit, offset) => listCalls(db, filter, limit, offset, order),
      () => countCallsPastPage(db, filter, request),
      toListItem,
    );
  }

  return {
    /**
     * Queues one call for the agent behind `webhookId`. Without a recorder (no Idempotency-Key)
     * there is no de-duplication (docs/api.md).
     */
    async trigger(
      webhookId: string,
      body: Record<string, unknown>,
      recorder?: AnswerRecorder<QueuedCall>,
    ): Promise<QueuedCall> {
      const input = parseTriggerBody(body);
      if (!WEBHOOK_ID.test(webhookId)) throw unknownWebhook();
      return place({
        webhookId,
        input,
        cached: webhookTargets.get(webhookId),
        refresh: async () => {
          const found = await findWebhookTarget(db, webhookId);
          const refusal = refusalOf(found, unknownWebhook);
          if (refusal || !found) throw refusal ?? unknownWebhook();
          return cacheable(found);
        },
        doNotCall: () =>
          new ApiError('do_not_call', 'The number is on the tenant’s do-not-call list; no call was placed.'),
        exhausted: unknownWebhook,
        answer: async (_executor, queued) => queued,
        recorder,
        // Cached only once the guarded insert accepted it, so it was current a moment ago;
        // refusals are only ever answered from a fresh read.
        accepted: (target) => webhookTargets.set(webhookId, target),
        rejected: (target) => webhookTargets.forget(webhookId, target),
      });
    },

    /** POST /api/v1/calls: the webhook's rules, for an agent of the caller's tenant. */
    async create(
      tenantId: string,
      body: CreateCallBody,
      recorder?: AnswerRecorder<CallDetail>,
    ): Promise<CallDetail> {
      const context = body.context ?? {};
      checkContext(context);
      const name = body.name?.trim() ?? '';
      const templateValues: Record<string, unknown> = { ...context, phone: body.phone };
      if (name !== '') templateValues.name = name;
      if (body.email !== undefined) templateValues.email = body.email;
      const input: TriggerInput = {
        phone: body.phone,
        name,
        email: body.email ?? null,
        context,
        templateValues,
        auditFields: Object.keys(body),
      };
      const agentMissing = () => notFound('Agent');
      return place({
        webhookId: null,
        input,
        refresh: async () => {
          const found = await findAgentTarget(db, tenantId, body.agent_id);
          const refusal = refusalOf(found, agentMissing);
          if (refusal || !found) throw refusal ?? agentMissing();
          return cacheable(found);
        },
        doNotCall: () =>
          new ApiError(
            'unprocessable_entity',
            'The number is on the tenant’s do-not-call list; no call was placed.',
          ),
        exhausted: () =>
          new ApiError('conflict', 'The agent changed while the call was being placed; retry.', undefined, {
            headers: { 'retry-after': '1' },
          }),
        answer: async (executor, queued) => {
          const call = await detail(executor, tenantId, queued.id);
          if (!call) throw new Error('a call stored in this transaction was not found');
          return call;
        },
        recorder,
      });
    },

    /** Campaigns (calls/campaign-calls.ts): the guarded insert in the caller's transaction; undefined when refused. */
    insertInTx: (executor: Executor, target: CachedWebhookTarget, input: TriggerInput) =>
      insert(executor, null, target, input),

    /** GET /api/v1/calls, newest first unless asked otherwise; the console also filters by `to` (a number). */
    async listForTenant(tenantId: string, query: ListPartnerCallsQuery, extra: { to?: string } = {}) {
      return page(query, partnerCallFilter(tenantId, query, extra), query.sort_order ?? 'desc', toItem);
    },

    /**
     * GET /api/v1/calls: the same page as listForTenant, as the answer's JSON text, built by the
     * database (list-repository.ts `listCallsJson`).
     */
    async listForTenantJson(tenantId: string, query: ListPartnerCallsQuery): Promise<string> {
      const filter = partnerCallFilter(tenantId, query);
      const order = query.sort_order ?? 'desc';
      return listJsonPageCountedApart(
        query,
        (limit, offset) => listCallsJson(db, filter, limit, offset, order, deps.engine),
        () => countCallsPastPage(db, filter, query),
      );
    },

    /** GET /api/v1/calls/{id}: the whole call with its timeline. */
    async getForTenant(tenantId: string, callId: string): Promise<CallDetail> {
      const call = await detail(db, tenantId, callId);
      if (!call) throw notFound('Call');
      return call;
    },

    /**
     * Operator list (every tenant, or one). An agent belongs to one tenant for good, so an agent
     * filter is read as that tenant's (the (tenant, agent, created_at) index serves it; there is
     * no index by agent alone, migration 0022); an agent never created lists nothing.
     */
    async list(query: ListCallsQuery) {
      let tenantId = query.tenant_id;
      if (query.agent_id !== undefined && tenantId === undefined) {
        tenantId = await findAgentTenant(db, query.agent_id, { deleted: 'include' });
        if (tenantId === undefined)
          return listPageCountedApart(
            query,
            async () => [],
            async () => 0,
            toOperatorCall,
          );
      }
      const filter = { tenantId, agentId: query.agent_id, status: query.status, direction: query.direction };
      return page(query, filter, 'desc', toOperatorCall);
    },

    async get(callId: string): Promise<OperatorCall> {
      const row = await findCall(db, await tenantOfCall(callId), callId);
      if (!row) throw notFound('Call');
      return toOperatorCall(row);
    },
  };
}

export type CallService = ReturnType<typeof createCallService>;
