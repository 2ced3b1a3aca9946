/**
 * Subscriptions: creation, plan changes, periods and credits (partner-api.md "Subscription",
 * decisions.md §6).
 *
 * Agency-billed subscriptions live only here: one transaction per request. Processor-billed ones
 * span the database and the processor, in atomic phases:
 *   1. a transaction validates, locks, and writes a pending operation (and the idempotency
 *      recovery point) — no visible change;
 *   2. the processor is called with an idempotency key derived from the partner's key;
 *   3. a transaction applies the processor's answer, marks the operation applied and stores the
 *      partner's answer.
 * A processor timeout or 5xx answers 503 and changes nothing locally; a retry with the same
 * Idempotency-Key resumes the pending operation with the same processor key, so the processor acts
 * once. When no retry comes, a reconciliation job adopts what the processor did.
 */

import {
  addMonths,
  DAY_MS,
  lastMinuteOfUtcMonth,
  periodEndAfter,
  startOfNextUtcMonth,
} from '../billing/periods.js';
import type { PaymentProcessor } from '../billing/processor.js';
import { ProcessorRequestError, ProcessorUnavailableError, processorKeyBase } from '../billing/processor.js';
import { findCustomer, findPlanOfPrice, findPrice, insertPrice } from '../billing/repository.js';
import type { Clock } from '../core/clock.js';
import type { Db, Executor, Tx } from '../core/db.js';
import { ApiError, notFound, unprocessable } from '../core/errors.js';
import type { IdempotencyClaim, IdempotencyStore } from '../core/idempotency.js';
import { newId, randomBase62, sha256Hex } from '../core/ids.js';
import { enqueueJob } from '../core/jobs.js';
import { listPage } from '../core/pagination.js';
import { addCreditEntry } from '../credits/repository.js';
import type { PlanRow } from '../plans/repository.js';
import { findUser, type UserRow } from '../users/repository.js';
import {
  countSubscriptions,
  findCurrentSubscription,
  findLiveSubscriptions,
  findOperation,
  findOperationsByRef,
  findPendingOperation,
  findPublicSubscription,
  findSubscription,
  finishOperation,
  type InternalStatus,
  insertOperation,
  insertSubscription,
  LIVE_STATUSES,
  listSubscriptions,
  type OperationRow,
  type PublicSubscriptionRow,
  type SubscriptionRow,
  updateSubscription,
} from './repository.js';
import {
  type ChangePlanBody,
  type CreateSubscriptionBody,
  type ListSubscriptionsQuery,
  PUBLIC_STATUSES,
  type PublicStatus,
  type Subscription,
} from './schemas.js';

export const PERIOD_QUEUE = 'subscriptions.period';
export const RECONCILE_QUEUE = 'subscriptions.reconcile';
export const PROCESSOR_CANCEL_QUEUE = 'subscriptions.cancel_at_processor';
/** When a pending processor operation is reconciled if no retry finished it. */
export const RECONCILE_AFTER_MS = 5 * 60 * 1000;
const RECOVERY_POINT = 'processor_call';

const PUBLIC: ReadonlySet<string> = new Set(PUBLIC_STATUSES);

export function publicStatus(status: InternalStatus): PublicStatus {
  return (PUBLIC.has(status) ? status : 'inactive') as PublicStatus;
}

export function toSubscription(row: PublicSubscriptionRow): Subscription {
  return {
    id: row.id,
    user_id: row.user_id,
    plan_id: row.plan_id,
    status: publicStatus(row.status),
    provider: row.provider,
    provider_subscription_id: row.provider_subscription_id,
    cancel_at_period_end: row.cancel_at_period_end,
    current_period_start: row.current_period_start.toISOString(),
    current_period_end: row.current_period_end.toISOString(),
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export interface SubscriptionAnswer {
  status: 200 | 201;
  subscription: Subscription;
  location: string;
}

type Request =
  | { kind: 'create'; userId: string; planId: string; answerStatus: 201 }
  | { kind: 'change'; subscriptionId: string; planId: string; answerStatus: 200 };

/** What phase 1 decided. */
type Decision =
  | { kind: 'create'; user: UserRow; plan: PlanRow }
  | {
      kind: 'upgrade' | 'downgrade';
      user: UserRow;
      plan: PlanRow;
      from: PlanRow;
      subscription: SubscriptionRow;
    };

export interface SubscriptionServiceDeps {
  db: Db;
  clock: Clock;
  idempotency: IdempotencyStore;
  /** Read at call time, so tests can wrap the processor after the app is built. */
  processor: () => PaymentProcessor;
  publicBaseUrl: string;
}

async function findPlanAnyState(db: Executor, tenantId: string, planId: string) {
  return db
    .selectFrom('plans')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', planId)
    .executeTakeFirst();
}

const unavailable = () =>
  new ApiError(
    'service_unavailable',
    'The payment processor did not answer; retry with the same Idempotency-Key.',
    undefined,
    {
      headers: { 'retry-after': '1' },
    },
  );

export function createSubscriptionService(deps: SubscriptionServiceDeps) {
  const { db, clock } = deps;
  const location = (id: string) => `${deps.publicBaseUrl}/api/v1/subscriptions/${id}`;

  async function scheduleTick(tx: Executor, sub: SubscriptionRow, now: Date, runAt?: Date) {
    if (!LIVE_STATUSES.includes(sub.status)) return;
    const at = runAt ?? (sub.current_period_start > now ? sub.current_period_start : sub.current_period_end);
    await enqueueJob(tx, {
      queue: PERIOD_QUEUE,
      tenantId: sub.tenant_id,
      payload: { subscription_id: sub.id },
      runAt: at,
      singletonKey: `sub-period:${sub.id}:${at.toISOString()}`,
    });
  }

  /** Grants the plan's minutes for the period that started at current_period_start (once). */
  async function grantPeriod(tx: Tx, sub: SubscriptionRow, now: Date) {
    if (sub.status !== 'active' && sub.status !== 'trialing') return;
    if (sub.current_period_start > now) return;
    const plan = await findPlanAnyState(tx, sub.tenant_id, sub.plan_id);
    if (!plan || plan.included_minutes <= 0) return;
    await addCreditEntry(tx, {
      tenantId: sub.tenant_id,
      userId: sub.user_id,
      minutes: plan.included_minutes,
      reason: `${plan.name}: included minutes for the period from ${sub.current_period_start.toISOString()}`,
      reference: `period:${sub.id}:${sub.current_period_start.toISOString()}`,
      at: now,
    });
  }

  async function needCard(tx: Executor, tenantId: string, userId: string) {
    const customer = await findCustomer(tx, tenantId, userId, deps.processor().name);
    if (!customer?.payment_method_id) {
      throw unprocessable(
        'The user has no payment method on file; the plan is billed by the card processor.',
      );
    }
    return customer;
  }

  async function decideChange(
    tx: Tx,
    tenantId: string,
    sub: SubscriptionRow,
    plan: PlanRow,
    user: UserRow | undefined,
  ): Promise<Decision> {
    if (!user || user.deleted_at) throw notFound('User');
    const from = await findPlanAnyState(tx, tenantId, sub.plan_id);
    if (!from) throw new Error(`subscription ${sub.id} has no plan`);
    if (sub.plan_id === plan.id) throw unprocessable('The subscription is already on the target plan.');
    if (plan.provider !== sub.provider) {
      throw unprocessable(
        `The target plan is billed by ${plan.provider}, the subscription by ${sub.provider}.`,
      );
    }
    if (plan.currency !== from.currency) {
      throw unprocessable(`The target plan is in ${plan.currency}, the current plan in ${from.currency}.`);
    }
    if (user.status === 'blocked') throw unprocessable('The user is blocked.');
    if (!LIVE_STATUSES.includes(sub.status))
      throw unprocessable(`The subscription is ${publicStatus(sub.status)}; it cannot change plan.`);
    if (sub.cancel_at_period_end) {
      throw unprocessable(
        'The subscription ends at the end of its period; change the plan of the subscription that follows it.',
      );
    }
    if (plan.provider === 'processor') await needCard(tx, tenantId, user.id);
    return {
      kind: plan.monthly_price >= from.monthly_price ? 'upgrade' : 'downgrade',
      user,
      plan,
      from,
      subscription: sub,
    };
  }

  async function decide(tx: Tx, tenantId: string, request: Request, now: Date): Promise<Decision> {
    if (request.kind === 'create') {
      const user = await findUser(tx, tenantId, request.userId, { forUpdate: true });
      if (!user || user.deleted_at) throw notFound('User');
      const plan = await findPlanAnyState(tx, tenantId, request.planId);
      if (!plan || plan.archived_at) throw notFound('Plan');
      if (!plan.active) throw unprocessable('The plan is not active.');
      if (user.status === 'blocked') throw unprocessable('The user is blocked.');
      const current = await findCurrentSubscription(tx, tenantId, user.id, now);
      if (current) {
        if (current.plan_id === plan.id) throw unprocessable('The user is already subscribed to this plan.');
        const locked = await findSubscription(tx, tenantId, current.id, { forUpdate: true });
        return decideChange(tx, tenantId, locked!, plan, user);
      }
      if (plan.provider === 'processor') await needCard(tx, tenantId, user.id);
      return { kind: 'create', user, plan };
    }
    const sub = await findSubscription(tx, tenantId, request.subscriptionId, { forUpdate: true });
    if (!sub) throw notFound('Subscription');
    const plan = await findPlanAnyState(tx, tenantId, request.planId);
    if (!plan || plan.archived_at || !plan.active) throw notFound('Plan');
    const user = await findUser(tx, tenantId, sub.user_id, { forUpdate: true });
    return decideChange(tx, tenantId, sub, plan, user);
  }

  /** Agency-billed: the whole change in the phase-1 transaction. Returns the answered subscription. */
  async function applyAgency(
    tx: Tx,
    tenantId: string,
    decision: Decision,
    operationId: string,
    now: Date,
  ): Promise<SubscriptionRow> {
    const { plan, user } = decision;
    if (decision.kind === 'create') {
      const trial = plan.trial_period_days > 0;
      const end = trial ? new Date(now.getTime() + plan.trial_period_days * DAY_MS) : addMonths(now, 1);
      const sub = await insertSubscription(tx, {
        id: newId('sub'),
        tenant_id: tenantId,
        user_id: user.id,
        plan_id: plan.id,
        status: trial ? 'trialing' : 'active',
        provider: 'agency',
        provider_subscription_id: null,
        provider_item_id: null,
        cancel_at_period_end: false,
        current_period_start: now,
        current_period_end: end,
        billing_anchor: trial ? end : now,
        trial_end: trial ? end : null,
        canceled_at: null,
        created_at: now,
        updated_at: now,
      });
      await grantPeriod(tx, sub, now);
      await scheduleTick(tx, sub, now);
      return sub;
    }
    const sub = decision.subscription;
    const started = sub.current_period_start <= now;
    if (decision.kind === 'upgrade' || !started) {
      // A scheduled subscription that has not started yet simply takes the new plan.
      const updated = await updateSubscription(tx, tenantId, sub.id, { plan_id: plan.id, updated_at: now });
      const difference = plan.included_minutes - decision.from.included_minutes;
      if (
        decision.kind === 'upgrade' &&
        started &&
        difference > 0 &&
        (sub.status === 'active' || sub.status === 'trialing')
      ) {
        await addCreditEntry(tx, {
          tenantId,
          userId: user.id,
          minutes: difference,
          reason: `Upgrade from ${decision.from.name} to ${plan.name}: difference of included minutes for the current period`,
          reference: `upgrade:${operationId}`,
          at: now,
        });
      }
      return updated;
    }
    // Downgrade: cap the current subscription at the end of the UTC month, start the new one a minute later.
    const capEnd = lastMinuteOfUtcMonth(now);
    const capped = await updateSubscription(tx, tenantId, sub.id, {
      cancel_at_period_end: true,
      current_period_end: capEnd,
      updated_at: now,
    });
    await scheduleTick(tx, capped, now, capEnd);
    const start = startOfNextUtcMonth(now);
    const next = await insertSubscription(tx, {
      id: newId('sub'),
      tenant_id: tenantId,
      user_id: user.id,
      plan_id: plan.id,
      status: 'active',
      provider: 'agency',
      provider_subscription_id: null,
      provider_item_id: null,
      cancel_at_period_end: false,
      current_period_start: start,
      current_period_end: addMonths(start, 1),
      billing_anchor: start,
      trial_end: null,
      canceled_at: null,
      created_at: now,
      updated_at: now,
    });
    await scheduleTick(tx, next, now);
    return next;
  }

  /** Ensures the processor has a monthly price for the plan's current amount. */
  async function priceFor(tenantId: string, plan: PlanRow): Promise<string> {
    const processor = deps.processor();
    const key = {
      planId: plan.id,
      processor: processor.name,
      currency: plan.currency,
      unitAmount: plan.monthly_price,
    };
    const existing = await findPrice(db, tenantId, key);
    if (existing) return existing;
    const price = await processor.createPrice(
      {
        currency: plan.currency,
        unitAmount: plan.monthly_price,
        productName: plan.name,
        metadata: { tenant_id: tenantId, plan_id: plan.id },
      },
      `vp_price_${plan.id}_${plan.currency}_${plan.monthly_price}`,
    );
    await insertPrice(db, {
      tenant_id: tenantId,
      plan_id: plan.id,
      processor: processor.name,
      currency: plan.currency,
      unit_amount: plan.monthly_price,
      price_id: price.id,
      created_at: clock.now(),
    });
    return (await findPrice(db, tenantId, key)) ?? price.id;
  }

  /** Phase 2: the processor call of a pending operation (safe to repeat: same idempotency key). */
  async function callProcessor(op: OperationRow) {
    const processor = deps.processor();
    const plan = await findPlanAnyState(db, op.tenant_id, op.to_plan_id);
    if (!plan) throw new Error(`operation ${op.id} has no plan`);
    const priceId = await priceFor(op.tenant_id, plan);
    if (op.kind === 'create') {
      const customer = await needCard(db, op.tenant_id, op.user_id);
      return processor.createSubscription(
        {
          customerId: customer.customer_id,
          priceId,
          trialPeriodDays: plan.trial_period_days,
          metadata: { tenant_id: op.tenant_id, user_id: op.user_id, plan_id: plan.id, vp_operation: op.id },
        },
        `${op.processor_key}_create`,
      );
    }
    const sub = await findSubscription(db, op.tenant_id, op.subscription_id!);
    if (!sub?.provider_subscription_id || !sub.provider_item_id)
      throw new Error(`operation ${op.id}: subscription has no processor reference`);
    return processor.changePrice(
      {
        subscriptionId: sub.provider_subscription_id,
        itemId: sub.provider_item_id,
        priceId,
        invoiceNow: op.kind === 'upgrade',
      },
      `${op.processor_key}_update`,
    );
  }

  /** Phase 3 (and reconciliation): applies the processor's subscription to the local record. */
  async function applyProcessorResult(
    tx: Tx,
    op: OperationRow,
    result: Awaited<ReturnType<PaymentProcessor['retrieveSubscription']>>,
    now: Date,
  ): Promise<SubscriptionRow> {
    const fields = {
      status: result.status as InternalStatus,
      provider_subscription_id: result.id,
      provider_item_id: result.itemId,
      cancel_at_period_end: result.cancelAtPeriodEnd,
      current_period_start: result.currentPeriodStart,
      current_period_end: result.currentPeriodEnd,
      trial_end: result.trialEnd,
      updated_at: now,
    };
    let sub: SubscriptionRow;
    if (op.kind === 'create') {
      sub = await insertSubscription(tx, {
        id: newId('sub'),
        tenant_id: op.tenant_id,
        user_id: op.user_id,
        plan_id: op.to_plan_id,
        provider: 'processor',
        billing_anchor: result.trialEnd ?? result.currentPeriodStart,
        canceled_at: null,
        created_at: now,
        ...fields,
      });
    } else {
      sub = await updateSubscription(tx, op.tenant_id, op.subscription_id!, {
        plan_id: op.to_plan_id,
        ...fields,
      });
    }
    await grantPeriod(tx, sub, now);
    await scheduleTick(tx, sub, now);
    await finishOperation(tx, op.tenant_id, op.id, {
      status: 'applied',
      subscription_id: sub.id,
      result_subscription_id: sub.id,
      updated_at: now,
    });
    return sub;
  }

  function answerOf(op: Pick<OperationRow, 'answer_status'>, sub: SubscriptionRow): SubscriptionAnswer {
    return {
      status: op.answer_status === 201 ? 201 : 200,
      subscription: toSubscription(sub),
      location: location(sub.id),
    };
  }

  async function record(tx: Tx, claim: IdempotencyClaim | undefined, answer: SubscriptionAnswer) {
    if (!claim) return;
    await deps.idempotency.recordInTx(tx, claim, {
      status: answer.status,
      body: { data: answer.subscription },
      headers: answer.status === 201 ? { location: answer.location } : {},
    });
  }

  async function execute(
    tenantId: string,
    request: Request,
    claim: IdempotencyClaim | undefined,
  ): Promise<SubscriptionAnswer> {
    const ref = claim ? sha256Hex(claim.key) : null;
    const requestHash = sha256Hex(JSON.stringify(request));
    const base = claim ? processorKeyBase(tenantId, claim.key) : `vp_${randomBase62(32)}`;

    // Phase 1.
    const phase1 = await db
      .transaction()
      .execute(async (tx): Promise<{ done: SubscriptionAnswer } | { pending: OperationRow }> => {
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
            const answer = answerOf(latest, sub);
            await record(tx, claim, answer);
            return { done: answer };
          }
        }

        const decision = await decide(tx, tenantId, request, now);
        const abandoned = previous.filter((op) => op.status === 'abandoned').length;
        const op: OperationRow = {
          id: `sop_${randomBase62(24)}`,
          tenant_id: tenantId,
          user_id: decision.user.id,
          subscription_id: decision.kind === 'create' ? null : decision.subscription.id,
          kind: decision.kind,
          provider: decision.plan.provider,
          from_plan_id: decision.kind === 'create' ? null : decision.from.id,
          to_plan_id: decision.plan.id,
          idempotency_ref: ref,
          request_hash: requestHash,
          // A retry after an abandoned attempt must not replay that attempt's processor answer.
          processor_key: abandoned > 0 ? `${base}_r${abandoned}` : base,
          status: 'pending',
          result_subscription_id: null,
          answer_status: request.answerStatus,
          created_at: now,
          updated_at: now,
        };

        if (decision.plan.provider !== 'processor') {
          const sub = await applyAgency(tx, tenantId, decision, op.id, now);
          await insertOperation(tx, {
            ...op,
            status: 'applied',
            subscription_id: decision.kind === 'create' ? sub.id : op.subscription_id,
            result_subscription_id: sub.id,
          });
          const answer = answerOf(op, sub);
          await record(tx, claim, answer);
          return { done: answer };
        }

        const other = await findPendingOperation(tx, tenantId, decision.user.id);
        if (other) {
          throw new ApiError(
            'conflict',
            'Another change of this user’s subscription is in progress; retry shortly.',
            undefined,
            {
              headers: { 'retry-after': '1' },
            },
          );
        }
        await insertOperation(tx, op);
        if (claim)
          await deps.idempotency.saveRecoveryPoint(tx, claim, RECOVERY_POINT, { operation_id: op.id });
        await enqueueJob(tx, {
          queue: RECONCILE_QUEUE,
          tenantId,
          payload: { operation_id: op.id },
          runAt: new Date(now.getTime() + RECONCILE_AFTER_MS),
          singletonKey: `sub-reconcile:${op.id}`,
        });
        return { pending: op };
      });
    if ('done' in phase1) return phase1.done;
    const op = phase1.pending;

    // Phase 2.
    let result: Awaited<ReturnType<typeof callProcessor>>;
    try {
      result = await callProcessor(op);
    } catch (error) {
      if (error instanceof ProcessorUnavailableError) throw unavailable();
      if (error instanceof ProcessorRequestError) {
        await finishOperation(db, tenantId, op.id, { status: 'abandoned', updated_at: clock.now() });
        throw unprocessable(`The payment processor refused the change: ${error.message}`);
      }
      throw error;
    }

    // Phase 3.
    return db.transaction().execute(async (tx) => {
      const now = clock.now();
      const locked = await findOperation(tx, tenantId, op.id, { forUpdate: true });
      let sub: SubscriptionRow | undefined;
      if (locked?.status === 'pending') {
        sub = await applyProcessorResult(tx, locked, result, now);
      } else if (locked?.status === 'applied' && locked.result_subscription_id) {
        sub = await findSubscription(tx, tenantId, locked.result_subscription_id);
      }
      if (!sub) throw unavailable();
      const answer = answerOf(op, sub);
      await record(tx, claim, answer);
      return answer;
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

    create(tenantId: string, body: CreateSubscriptionBody, claim: IdempotencyClaim | undefined) {
      return execute(
        tenantId,
        { kind: 'create', userId: body.user_id, planId: body.plan_id, answerStatus: 201 },
        claim,
      );
    },

    changePlan(
      tenantId: string,
      subscriptionId: string,
      body: ChangePlanBody,
      claim: IdempotencyClaim | undefined,
    ) {
      return execute(
        tenantId,
        { kind: 'change', subscriptionId, planId: body.plan_id, answerStatus: 200 },
        claim,
      );
    },

    /** Job: brings one subscription's periods up to now (renewals, trial ends, scheduled starts, credits). */
    async advance(tenantId: string, subscriptionId: string): Promise<void> {
      const snapshot = await findSubscription(db, tenantId, subscriptionId);
      if (!snapshot || !LIVE_STATUSES.includes(snapshot.status)) return;
      if (snapshot.provider === 'processor' && snapshot.provider_subscription_id) {
        const remote = await deps.processor().retrieveSubscription(snapshot.provider_subscription_id);
        await db.transaction().execute(async (tx) => {
          const now = clock.now();
          const sub = await findSubscription(tx, tenantId, subscriptionId, { forUpdate: true });
          if (!sub || !LIVE_STATUSES.includes(sub.status)) return;
          const planId =
            (await findPlanOfPrice(tx, tenantId, deps.processor().name, remote.priceId)) ?? sub.plan_id;
          const synced = await updateSubscription(tx, tenantId, sub.id, {
            plan_id: planId,
            status: remote.status as InternalStatus,
            cancel_at_period_end: remote.cancelAtPeriodEnd,
            current_period_start: remote.currentPeriodStart,
            current_period_end: remote.currentPeriodEnd,
            trial_end: remote.trialEnd,
            canceled_at: remote.status === 'canceled' ? (sub.canceled_at ?? now) : sub.canceled_at,
            updated_at: now,
          });
          await grantPeriod(tx, synced, now);
          // The processor renews shortly after the period ends; look again later if it has not yet.
          const behind = synced.current_period_end <= now;
          await scheduleTick(tx, synced, now, behind ? new Date(now.getTime() + 10 * 60 * 1000) : undefined);
        });
        return;
      }
      await db.transaction().execute(async (tx) => {
        const now = clock.now();
        let sub = await findSubscription(tx, tenantId, subscriptionId, { forUpdate: true });
        while (sub && LIVE_STATUSES.includes(sub.status)) {
          await grantPeriod(tx, sub, now);
          if (sub.current_period_end > now) break;
          if (sub.cancel_at_period_end) {
            sub = await updateSubscription(tx, tenantId, sub.id, {
              status: 'canceled',
              canceled_at: sub.current_period_end,
              updated_at: now,
            });
            break;
          }
          const start = sub.current_period_end;
          const trialEnded = sub.status === 'trialing';
          const anchor = trialEnded ? start : (sub.billing_anchor ?? sub.current_period_start);
          sub = await updateSubscription(tx, tenantId, sub.id, {
            status: trialEnded ? 'active' : sub.status,
            billing_anchor: anchor,
            current_period_start: start,
            current_period_end: periodEndAfter(anchor, start),
            updated_at: now,
          });
        }
        if (sub) await scheduleTick(tx, sub, now);
      });
    },

    /** Job: settles an operation whose request never finished (503, crash), adopting what the processor did. */
    async reconcile(tenantId: string, operationId: string): Promise<void> {
      const op = await findOperation(db, tenantId, operationId);
      if (op?.status !== 'pending') return;
      const processor = deps.processor();
      let remote: Awaited<ReturnType<PaymentProcessor['retrieveSubscription']>> | undefined;
      if (op.kind === 'create') {
        const customer = await findCustomer(db, tenantId, op.user_id, processor.name);
        remote = customer
          ? await processor.findSubscriptionByOperation(customer.customer_id, op.id)
          : undefined;
      } else {
        const sub = await findSubscription(db, tenantId, op.subscription_id!);
        if (sub?.provider_subscription_id) {
          const current = await processor.retrieveSubscription(sub.provider_subscription_id);
          const planId = await findPlanOfPrice(db, tenantId, processor.name, current.priceId);
          if (planId === op.to_plan_id) remote = current;
        }
      }
      await db.transaction().execute(async (tx) => {
        const now = clock.now();
        const locked = await findOperation(tx, tenantId, operationId, { forUpdate: true });
        if (locked?.status !== 'pending') return;
        if (remote) await applyProcessorResult(tx, locked, remote, now);
        else await finishOperation(tx, tenantId, operationId, { status: 'abandoned', updated_at: now });
      });
    },

    /** In the user-deletion transaction: ends every subscription of the user, at the processor by a job. */
    async cancelAllInTx(tx: Tx, tenantId: string, userId: string, at: Date): Promise<void> {
      for (const sub of await findLiveSubscriptions(tx, tenantId, userId)) {
        await updateSubscription(tx, tenantId, sub.id, {
          status: 'canceled',
          cancel_at_period_end: false,
          canceled_at: at,
          updated_at: at,
        });
        if (sub.provider === 'processor' && sub.provider_subscription_id) {
          await enqueueJob(tx, {
            queue: PROCESSOR_CANCEL_QUEUE,
            tenantId,
            payload: { subscription_id: sub.id, provider_subscription_id: sub.provider_subscription_id },
            runAt: at,
            maxAttempts: 25,
            singletonKey: `sub-cancel:${sub.id}`,
          });
        }
      }
    },

    /** Job: cancels at the processor; a subscription the processor already ended counts as done. */
    async cancelAtProcessor(subscriptionId: string, providerSubscriptionId: string): Promise<void> {
      try {
        await deps.processor().cancelSubscription(providerSubscriptionId, `vp_cancel_${subscriptionId}`);
      } catch (error) {
        if (error instanceof ProcessorRequestError) return;
        throw error;
      }
    },
  };
}

export type SubscriptionService = ReturnType<typeof createSubscriptionService>;
