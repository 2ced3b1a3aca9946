/**
 * Subscriptions: creation, plan changes, periods and credits (docs/api.md "Subscription",
 * docs/design-choices.md). This file is the facade and the request path; the parts live beside it:
 * - plan-change-rules.ts: who may subscribe or change to what, upgrade or downgrade (pure);
 * - agency-billing.ts: agency-billed changes, whole in the request's one transaction;
 * - processor-change.ts: processor-billed changes, in three phases around the processor call;
 * - periods.ts and jobs.ts: the period job, reconciliation, cancellation of a deleted user's.
 *
 * Create and change return a domain result; the route decides the HTTP answer and hands it in as an
 * `AnswerRecorder` (core/idempotency/answer.ts), stored inside the transaction that makes the change.
 */

import { processorKeyBase } from '../billing/processor.js';
import { type AuditChange, recordAudit } from '../core/audit/record.js';
import type { Tx } from '../core/db/database.js';
import { listPage } from '../core/db/pagination.js';
import { type ApiError, notFound, unprocessable } from '../core/errors.js';
import { type AnswerRecorder, recordAnswer } from '../core/idempotency/answer.js';
import type { IdempotencyStore } from '../core/idempotency/store.js';
import { randomBase62, sha256Hex } from '../core/ids.js';
import { findPlan, type PlanRow } from '../plans/repository.js';
import { findUser, type UserRow } from '../users/repository.js';
import { applyAgencyChange } from './agency-billing.js';
import { createCancellation } from './cancellation.js';
import { createSubscriptionWriter, toSubscription } from './events.js';
import {
  checkChangeTarget,
  type DecidedChange,
  decidePlanChange,
  decideSubscribe,
  planAgencyChange,
  type Refusal,
} from './plan-change-rules.js';
import { createProcessorChange, hasCardOnFile, type ProcessorDeps } from './processor-change.js';
import { createSubscriptionJobs, type PeriodEndedHook } from './renewals.js';
import {
  countSubscriptions,
  findCurrentSubscription,
  findOperation,
  findOperationsByRef,
  findPublicSubscription,
  findScheduledSubscriptions,
  findSubscription,
  insertOperation,
  listSubscriptions,
  type OperationRow,
  type SubscriptionRow,
} from './repository.js';
import type {
  ChangePlanBody,
  CreateSubscriptionBody,
  ListSubscriptionsQuery,
  Subscription,
} from './schemas.js';

export { type SubscriptionEventRecorder, toSubscription } from './events.js';
export { PERIOD_QUEUE } from './periods.js';
export { RECONCILE_AFTER_MS, RECONCILE_QUEUE } from './processor-change.js';
export { PROCESSOR_CANCEL_QUEUE } from './renewals.js';

/** Where a retry of a processor change resumes: its pending operation, saved with the key's claim. */
const RECOVERY_POINT = 'processor_call';

/** What a create or plan change did. */
export interface SubscriptionResult {
  /** The subscription the partner is answered with (for an agency downgrade, the one that follows). */
  subscription: Subscription;
  /** The request created that subscription (a first subscription, or an agency downgrade's successor). */
  created: boolean;
}

export type SubscriptionRecorder = AnswerRecorder<SubscriptionResult>;

/**
 * What subscribing `user_id` to `plan_id` would do, decided by the same rules (and refused the same
 * way) as `create`, with nothing changed: shown before an agency confirms it.
 */
export type SubscribePreview =
  | { kind: 'create'; plan: PlanRow }
  | {
      kind: 'upgrade' | 'downgrade';
      plan: PlanRow;
      from: PlanRow;
      subscription: Subscription;
      /** Agency-billed: what happens to the periods and minutes (processor: prorated by the processor). */
      agency?: ReturnType<typeof planAgencyChange>;
    };

type PlanChangeRequest =
  | { kind: 'create'; userId: string; planId: string }
  | { kind: 'change'; subscriptionId: string; planId: string };

export interface SubscriptionServiceDeps extends ProcessorDeps {
  idempotency: IdempotencyStore;
  /** Runs in the transaction that ends each period (overage settlement). */
  periodEnded: PeriodEndedHook;
}

/**
 * The operation's request_hash: a retry finds the operations of its request by it. The JSON keeps
 * the shape stored since the table was created (`answerStatus` was the HTTP status of each request
 * kind), so operations left pending or abandoned across an upgrade still match their retries.
 */
function requestHashOf(request: PlanChangeRequest): string {
  const stored =
    request.kind === 'create'
      ? { kind: request.kind, userId: request.userId, planId: request.planId, answerStatus: 201 }
      : {
          kind: request.kind,
          subscriptionId: request.subscriptionId,
          planId: request.planId,
          answerStatus: 200,
        };
  return sha256Hex(JSON.stringify(stored));
}

function refusalError(refusal: Refusal): ApiError {
  return refusal.code === 'not_found' ? notFound(refusal.resource) : unprocessable(refusal.message);
}

/** The answered subscription is new unless the operation changed the one it started from. */
function resultOf(
  op: Pick<OperationRow, 'kind' | 'subscription_id'>,
  sub: SubscriptionRow,
): SubscriptionResult {
  return {
    subscription: toSubscription(sub),
    created: op.kind === 'create' || op.subscription_id !== sub.id,
  };
}

export function createSubscriptionService(deps: SubscriptionServiceDeps) {
  const { db, clock } = deps;
  const processorChange = createProcessorChange(deps);
  const jobs = createSubscriptionJobs(deps);
  const writer = createSubscriptionWriter(deps.events);
  const cancellation = createCancellation(deps, writer);

  const cardOnFile = (tx: Tx, tenantId: string, userId: string) =>
    hasCardOnFile(tx, deps.processor, tenantId, userId);

  /**
   * The successors an agency downgrade of the (started, capped) `subscription` scheduled: a change
   * of the subscription replaces them. Read under the user's lock, so none appears meanwhile.
   */
  async function scheduledSuccessors(tx: Tx, tenantId: string, subscription: SubscriptionRow, now: Date) {
    const capped =
      subscription.provider === 'agency' &&
      subscription.cancel_at_period_end &&
      subscription.current_period_start <= now;
    if (!capped) return [];
    return findScheduledSubscriptions(tx, tenantId, subscription.user_id, now, { forUpdate: true });
  }

  /** Moving a locked subscription to `plan`: the facts under lock, then the rules. */
  async function decideChange(
    tx: Tx,
    tenantId: string,
    subscription: SubscriptionRow,
    plan: PlanRow,
    user: UserRow | undefined,
    now: Date,
  ): Promise<DecidedChange> {
    const from = await findPlan(tx, tenantId, subscription.plan_id, { includeArchived: true });
    if (!from) throw new Error(`subscription ${subscription.id} has no plan`);
    const live = user && !user.deleted_at ? user : undefined;
    const hasCard = live && plan.provider === 'processor' ? await cardOnFile(tx, tenantId, live.id) : false;
    const replaces = live ? await scheduledSuccessors(tx, tenantId, subscription, now) : [];
    const scheduledDowngrade = replaces.length > 0;
    const verdict = decidePlanChange({ subscription, from, plan, user, hasCard, scheduledDowngrade });
    if (!verdict.ok) throw refusalError(verdict);
    return { kind: verdict.kind, user: verdict.user, plan, from, subscription, replaces };
  }

  /** Phase 1's decision: loads (and locks) what the request acts on and applies the rules. */
  async function decide(
    tx: Tx,
    tenantId: string,
    request: PlanChangeRequest,
    now: Date,
  ): Promise<DecidedChange> {
    if (request.kind === 'create') {
      const user = await findUser(tx, tenantId, request.userId, { forUpdate: true });
      const plan = await findPlan(tx, tenantId, request.planId, { includeArchived: true });
      const live = user && !user.deleted_at ? user : undefined;
      const current = live ? await findCurrentSubscription(tx, tenantId, live.id, now) : undefined;
      const hasCard =
        live && !current && plan?.provider === 'processor' ? await cardOnFile(tx, tenantId, live.id) : false;
      const verdict = decideSubscribe({ user, plan, current, hasCard });
      if (!verdict.ok) throw refusalError(verdict);
      if (verdict.action === 'create') return { kind: 'create', user: verdict.user, plan: verdict.plan };
      const locked = await findSubscription(tx, tenantId, verdict.subscriptionId, { forUpdate: true });
      if (!locked) throw new Error(`subscription ${verdict.subscriptionId} vanished under its user's lock`);
      return decideChange(tx, tenantId, locked, verdict.plan, verdict.user, now);
    }
    const subscription = await findSubscription(tx, tenantId, request.subscriptionId, { forUpdate: true });
    const plan = subscription
      ? await findPlan(tx, tenantId, request.planId, { includeArchived: true })
      : undefined;
    const target = checkChangeTarget(subscription, plan);
    if (!target.ok) throw refusalError(target);
    const user = await findUser(tx, tenantId, target.subscription.user_id, { forUpdate: true });
    return decideChange(tx, tenantId, target.subscription, target.plan, user, now);
  }

  /**
   * One create or plan change. Agency-billed: all in phase 1's transaction. Processor-billed: the
   * three phases of processor-change.ts. `recorder` stores the route's answer in the transaction
   * that makes the change (phase 1 for agency, phase 3 for the processor), or that finds it made.
   */
  async function execute(
    tenantId: string,
    request: PlanChangeRequest,
    recorder: SubscriptionRecorder | undefined,
  ): Promise<SubscriptionResult> {
    const claim = recorder?.claim;
    const ref = claim ? sha256Hex(claim.key) : null;
    const requestHash = requestHashOf(request);
    const base = claim ? processorKeyBase(tenantId, claim.key) : `vp_${randomBase62(32)}`;

    // Phase 1.
    const phase1 = await db
      .transaction()
      .execute(async (tx): Promise<{ done: SubscriptionResult } | { pending: OperationRow }> => {
        const now = clock.now();
        let previous: OperationRow[] = [];
        const recovered =
          (claim?.recoveryPoint === RECOVERY_POINT &&
            (claim.recoveryData as { operation_id?: string })?.operation_id) ||
          undefined;
        if (recovered) {
          const op = await findOperation(tx, tenantId, recovered, { forUpdate: true });
          if (op) previous = [op];
        }
        if (previous.length === 0 && ref)
          previous = await findOperationsByRef(tx, tenantId, ref, requestHash);
        const latest = previous[0];
        if (latest?.status === 'pending') return { pending: latest };
        if (latest?.status === 'applied' && latest.result_subscription_id) {
          // Applied by reconciliation after this key's earlier attempt answered 503.
          const sub = await findSubscription(tx, tenantId, latest.result_subscription_id);
          if (sub) {
            const result = resultOf(latest, sub);
            await recordAnswer(deps.idempotency, tx, recorder, result);
            return { done: result };
          }
        }

        const change = await decide(tx, tenantId, request, now);
        const abandoned = previous.filter((op) => op.status === 'abandoned').length;
        const op: OperationRow = {
          id: `sop_${randomBase62(24)}`,
          tenant_id: tenantId,
          user_id: change.user.id,
          subscription_id: change.kind === 'create' ? null : change.subscription.id,
          kind: change.kind,
          provider: change.plan.provider,
          from_plan_id: change.kind === 'create' ? null : change.from.id,
          to_plan_id: change.plan.id,
          idempotency_ref: ref,
          request_hash: requestHash,
          // A retry after an abandoned attempt must not replay that attempt's processor answer.
          processor_key: abandoned > 0 ? `${base}_r${abandoned}` : base,
          status: 'pending',
          result_subscription_id: null,
          created_at: now,
          updated_at: now,
        };

        if (change.plan.provider !== 'processor') {
          const sub = await applyAgencyChange(tx, writer, tenantId, change, op.id, now);
          await insertOperation(tx, {
            ...op,
            status: 'applied',
            subscription_id: change.kind === 'create' ? sub.id : op.subscription_id,
            result_subscription_id: sub.id,
          });
          const result = resultOf(op, sub);
          await recordAudit(tx, subscriptionChange(op, sub.id, now));
          await recordAnswer(deps.idempotency, tx, recorder, result);
          return { done: result };
        }

        await processorChange.begin(tx, op, now);
        if (claim)
          await deps.idempotency.saveRecoveryPoint(tx, claim, RECOVERY_POINT, { operation_id: op.id });
        return { pending: op };
      });
    if ('done' in phase1) return phase1.done;
    const op = phase1.pending;

    // Phase 2.
    const remote = await processorChange.call(op);

    // Phase 3.
    return db.transaction().execute(async (tx) => {
      const now = clock.now();
      const sub = await processorChange.settle(tx, op, remote, now);
      const result = resultOf(op, sub);
      await recordAudit(tx, subscriptionChange(op, sub.id, now));
      await recordAnswer(deps.idempotency, tx, recorder, result);
      return result;
    });
  }

  return {
    async list(tenantId: string, query: ListSubscriptionsQuery) {
      const filter = { userId: query.user_id, planId: query.plan_id, status: query.status };
      return listPage(
        query,
        (limit, offset) =>
          listSubscriptions(db, tenantId, { ...filter, sortOrder: query.sort_order, limit, offset }),
        () => countSubscriptions(db, tenantId, filter),
        toSubscription,
      );
    },

    async get(tenantId: string, id: string): Promise<Subscription> {
      const row = await findPublicSubscription(db, tenantId, id);
      if (!row) throw notFound('Subscription');
      return toSubscription(row);
    },

    /**
     * Subscribes the user; if the user has a current subscription on another plan, changes that
     * one's plan instead (as `changePlan`).
     */
    create(tenantId: string, body: CreateSubscriptionBody, recorder?: SubscriptionRecorder) {
      return execute(tenantId, { kind: 'create', userId: body.user_id, planId: body.plan_id }, recorder);
    },

    changePlan(
      tenantId: string,
      subscriptionId: string,
      body: ChangePlanBody,
      recorder?: SubscriptionRecorder,
    ) {
      return execute(tenantId, { kind: 'change', subscriptionId, planId: body.plan_id }, recorder);
    },

    /** What `create` would do (the same refusals), changing nothing. */
    async preview(tenantId: string, body: CreateSubscriptionBody): Promise<SubscribePreview> {
      return db.transaction().execute(async (tx) => {
        const now = clock.now();
        const request = { kind: 'create' as const, userId: body.user_id, planId: body.plan_id };
        const change = await decide(tx, tenantId, request, now);
        if (change.kind === 'create') return { kind: 'create', plan: change.plan };
        const agency =
          change.plan.provider === 'agency'
            ? planAgencyChange({
                kind: change.kind,
                subscription: change.subscription,
                from: change.from,
                plan: change.plan,
                now,
              })
            : undefined;
        return {
          kind: change.kind,
          plan: change.plan,
          from: change.from,
          subscription: toSubscription(change.subscription),
          ...(agency ? { agency } : {}),
        };
      });
    },

    /** Ends the subscription when its current period ends (./cancellation.ts). */
    cancelAtPeriodEnd: cancellation.cancelAtPeriodEnd,

    advance: jobs.advance,
    reconcile: jobs.reconcile,
    cancelAllInTx: jobs.cancelAllInTx,
    cancelAtProcessor: jobs.cancelAtProcessor,
  };
}

export type SubscriptionService = ReturnType<typeof createSubscriptionService>;

/** The audit entry of a subscription created or moved to another plan. */
function subscriptionChange(
  op: Pick<OperationRow, 'kind' | 'tenant_id'>,
  subscriptionId: string,
  at: Date,
): AuditChange {
  const created = op.kind === 'create';
  return {
    action: created ? 'subscription.created' : 'subscription.plan_changed',
    tenantId: op.tenant_id,
    objectType: 'subscription',
    objectId: subscriptionId,
    fields: created ? ['plan_id', 'user_id'] : ['plan_id'],
    at,
  };
}
