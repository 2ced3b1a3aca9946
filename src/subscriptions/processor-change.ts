/**
 * Processor-billed changes span the database and the card processor, so they run in three phases
 * (the service's `execute` drives them):
 *   1. a transaction validates, locks and writes a pending operation (`begin`), with the
 *      reconciliation job that settles it if no request does — no visible change;
 *   2. the processor is called (`call`) with an idempotency key derived from the partner's key;
 *   3. a transaction applies the processor's answer (`settle`) and marks the operation applied.
 * A processor timeout or 5xx answers 503 and changes nothing locally; a retry with the same
 * Idempotency-Key resumes the pending operation with the same processor key, so the processor acts
 * once. When no retry comes, the reconciliation job (jobs.ts) adopts what the processor did.
 */
import type { ProcessorAccounts } from '../billing/accounts.js';
import type { PaymentProcessor, ProcessorSubscription } from '../billing/processor.js';
import { ProcessorRequestError, ProcessorUnavailableError } from '../billing/processor.js';
import { findCustomer, findPrice, insertPrice } from '../billing/repository.js';
import type { Clock } from '../core/clock.js';
import type { Db, Executor, Tx } from '../core/db/database.js';
import { ApiError, unprocessable } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { enqueueJob } from '../core/jobs/runner.js';
import { findPlan, type PlanRow } from '../plans/repository.js';
import {
  createSubscriptionWriter,
  type SubscriptionEventRecorder,
  type SubscriptionWriter,
} from './events.js';
import { grantPeriod, scheduleTick } from './periods.js';
import { NO_CARD_MESSAGE } from './plan-change-rules.js';
import {
  findOperation,
  findPendingOperation,
  findSubscription,
  finishOperation,
  type InternalStatus,
  insertOperation,
  type OperationRow,
  type SubscriptionRow,
} from './repository.js';

export const RECONCILE_QUEUE = 'subscriptions.reconcile';
/** When a pending processor operation is reconciled if no retry finished it. */
export const RECONCILE_AFTER_MS = 5 * 60 * 1000;

export interface ProcessorDeps {
  db: Db;
  clock: Clock;
  /** Read at call time, so tests can wrap the processor after the app is built. */
  processor: PaymentProcessor;
  /** Each tenant's processor account: every processor call goes through `accounts.bind`. */
  accounts: ProcessorAccounts;
  /** Records subscription events in the transaction of each change (events.ts). */
  events: SubscriptionEventRecorder;
}

/** The processor's answer was lost or is not usable yet: the partner retries with the same key. */
export const processorUnavailable = () =>
  new ApiError(
    'service_unavailable',
    'The payment processor did not answer; retry with the same Idempotency-Key.',
    undefined,
    { headers: { 'retry-after': '1' } },
  );

/** Whether the user has a card at the processor (processor-billed plans need one). */
export async function hasCardOnFile(
  db: Executor,
  processor: PaymentProcessor,
  tenantId: string,
  userId: string,
): Promise<boolean> {
  const customer = await findCustomer(db, tenantId, userId, processor.name);
  return Boolean(customer?.payment_method_id);
}

/** Phase 3 (and reconciliation): applies the processor's subscription to the local record. */
export async function applyProcessorResult(
  tx: Tx,
  writer: SubscriptionWriter,
  op: OperationRow,
  result: ProcessorSubscription,
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
    sub = await writer.insert(tx, {
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
    const before = await findSubscription(tx, op.tenant_id, op.subscription_id!, { forUpdate: true });
    if (!before) throw new Error(`operation ${op.id}: subscription ${op.subscription_id} vanished`);
    sub = await writer.update(tx, before, {
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

export function createProcessorChange(deps: ProcessorDeps) {
  const { db, clock } = deps;
  const writer = createSubscriptionWriter(deps.events);

  /** Ensures the processor has a monthly price for the plan's current amount. */
  async function priceFor(tenantId: string, plan: PlanRow): Promise<string> {
    const { processor } = await deps.accounts.bind(deps.processor, tenantId);
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

  /** The processor call of a pending operation (safe to repeat: same idempotency key). */
  async function callProcessor(op: OperationRow): Promise<ProcessorSubscription> {
    const { processor, subscriptionFeePercent } = await deps.accounts.bind(deps.processor, op.tenant_id);
    const plan = await findPlan(db, op.tenant_id, op.to_plan_id, { includeArchived: true });
    if (!plan) throw new Error(`operation ${op.id} has no plan`);
    const priceId = await priceFor(op.tenant_id, plan);
    if (op.kind === 'create') {
      const customer = await findCustomer(db, op.tenant_id, op.user_id, processor.name);
      if (!customer?.payment_method_id) {
        throw unprocessable(NO_CARD_MESSAGE);
      }
      return processor.createSubscription(
        {
          customerId: customer.customer_id,
          priceId,
          trialPeriodDays: plan.trial_period_days,
          metadata: { tenant_id: op.tenant_id, user_id: op.user_id, plan_id: plan.id, vp_operation: op.id },
          applicationFeePercent: subscriptionFeePercent,
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

  return {
    /**
     * Phase 1, in its transaction: records the pending operation and queues its reconciliation.
     * One processor change per user at a time: another pending one answers 409.
     */
    async begin(tx: Tx, op: OperationRow, now: Date): Promise<void> {
      const other = await findPendingOperation(tx, op.tenant_id, op.user_id);
      if (other) {
        throw new ApiError(
          'conflict',
          'Another change of this user’s subscription is in progress; retry shortly.',
          undefined,
          { headers: { 'retry-after': '1' } },
        );
      }
      await insertOperation(tx, op);
      await enqueueJob(tx, {
        queue: RECONCILE_QUEUE,
        tenantId: op.tenant_id,
        payload: { operation_id: op.id },
        runAt: new Date(now.getTime() + RECONCILE_AFTER_MS),
        singletonKey: `sub-reconcile:${op.id}`,
      });
    },

    /**
     * Phase 2: the processor call. No answer → 503 and the operation stays pending (a retry or the
     * reconciliation settles it); a refusal abandons the operation and answers 422.
     */
    async call(op: OperationRow): Promise<ProcessorSubscription> {
      try {
        return await callProcessor(op);
      } catch (error) {
        if (error instanceof ProcessorUnavailableError) throw processorUnavailable();
        if (error instanceof ProcessorRequestError) {
          await finishOperation(db, op.tenant_id, op.id, { status: 'abandoned', updated_at: clock.now() });
          throw unprocessable(`The payment processor refused the change: ${error.message}`);
        }
        throw error;
      }
    },

    /**
     * Phase 3, in its transaction: applies the processor's answer, unless the reconciliation job
     * already did (then its subscription is the answer). Returns the answered subscription.
     */
    async settle(
      tx: Tx,
      op: OperationRow,
      result: ProcessorSubscription,
      now: Date,
    ): Promise<SubscriptionRow> {
      const locked = await findOperation(tx, op.tenant_id, op.id, { forUpdate: true });
      let sub: SubscriptionRow | undefined;
      if (locked?.status === 'pending') {
        sub = await applyProcessorResult(tx, writer, locked, result, now);
      } else if (locked?.status === 'applied' && locked.result_subscription_id) {
        sub = await findSubscription(tx, op.tenant_id, locked.result_subscription_id);
      }
      if (!sub) throw processorUnavailable();
      return sub;
    },
  };
}

export type ProcessorChange = ReturnType<typeof createProcessorChange>;
