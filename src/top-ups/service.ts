/**
 * Retail top-ups (docs/wallets.md, docs/top-ups.md): a user buys minutes beyond the plan's at the
 * current plan's topup_rate. Agency-billed: credited at once and recorded for the agency's own
 * invoicing, in one transaction. Processor-billed: written pending, the card charged, then
 * credited (./charges.ts), so a crash or a lost answer anywhere between is finished by a retry with
 * the same Idempotency-Key or by reconciliation, with one charge and one credit.
 *
 * `create` returns the top-up; the route decides the HTTP answer and hands it in as an
 * `AnswerRecorder`, stored in the transaction that credits the minutes (or finds them credited).
 */

import type { ProcessorAccounts } from '../billing/accounts.js';
import { type PaymentProcessor, processorKeyBase } from '../billing/processor.js';
import { findCustomer } from '../billing/repository.js';
import { recordAudit } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import type { Db, Tx } from '../core/db/database.js';
import { listPage } from '../core/db/pagination.js';
import { ApiError, notFound, unprocessable } from '../core/errors.js';
import { type AnswerRecorder, recordAnswer } from '../core/idempotency/answer.js';
import { IDEMPOTENCY_WINDOW_MS, type IdempotencyStore } from '../core/idempotency/store.js';
import { newId, randomBase62, sha256Hex } from '../core/ids.js';
import { enqueueJob } from '../core/jobs/runner.js';
import { findPlan } from '../plans/repository.js';
import { NO_CARD_MESSAGE } from '../subscriptions/plan-change-rules.js';
import { findCurrentSubscription } from '../subscriptions/repository.js';
import { findUser } from '../users/repository.js';
import {
  createTopUpCharges,
  creditTopUp,
  declinedError,
  TOP_UP_RECONCILE_AFTER_MS,
  TOP_UP_RECONCILE_QUEUE,
} from './charges.js';
import { topUpAmount } from './pricing.js';
import {
  countTopUps,
  findTopUp,
  findTopUpsByRef,
  insertTopUp,
  listTopUps,
  type TopUpRow,
} from './repository.js';
import type { CreateTopUpBody, ListTopUpsQuery, TopUp } from './schemas.js';

export { TOP_UP_RECONCILE_AFTER_MS, TOP_UP_RECONCILE_QUEUE } from './charges.js';

/** Where a retry of a processor-billed top-up resumes: its pending top-up, saved with the key's claim. */
const RECOVERY_POINT = 'top_up_charge';

export type TopUpRecorder = AnswerRecorder<TopUp>;

export interface TopUpServiceDeps {
  db: Db;
  clock: Clock;
  /** Read at call time, so tests can wrap the processor after the app is built. */
  processor: PaymentProcessor;
  /** Each tenant's processor account (charges.ts binds the processor to it). */
  accounts: ProcessorAccounts;
  idempotency: IdempotencyStore;
}

export function toTopUp(row: TopUpRow): TopUp {
  if (row.status !== 'succeeded' && row.status !== 'declined') {
    throw new Error(`top-up ${row.id} is ${row.status}, not an answer`);
  }
  return {
    id: row.id,
    user_id: row.user_id,
    plan_id: row.plan_id,
    minutes: row.minutes,
    amount: row.amount,
    currency: row.currency,
    billing: row.billing,
    status: row.status,
    processor_charge_id: row.processor_charge_id,
    decline_code: row.decline_code,
    created_at: row.created_at.toISOString(),
  };
}

/** What the first transaction left: an answer, or a top-up to charge. */
type FirstStep = { settled: TopUpRow } | { pending: TopUpRow };

export function createTopUpService(deps: TopUpServiceDeps) {
  const { db, clock } = deps;
  const charges = createTopUpCharges(deps);

  /** The user's live, unblocked record, locked; 404 or 422 otherwise. */
  async function lockedUser(tx: Tx, tenantId: string, userId: string) {
    const user = await findUser(tx, tenantId, userId, { forUpdate: true });
    if (!user || user.deleted_at) throw notFound('User');
    if (user.status === 'blocked') throw unprocessable('The user is blocked.');
    return user;
  }

  /** A top-up started earlier with this request's key, if any (the newest within the key's window). */
  async function previousAttempts(tx: Tx, tenantId: string, recorder: TopUpRecorder | undefined, now: Date) {
    const claim = recorder?.claim;
    if (!claim) return [];
    const recovered =
      claim.recoveryPoint === RECOVERY_POINT
        ? (claim.recoveryData as { top_up_id?: string } | null)?.top_up_id
        : undefined;
    if (recovered) {
      const found = await findTopUp(tx, tenantId, recovered, { forUpdate: true });
      if (found) return [found];
    }
    const windowStart = new Date(now.getTime() - IDEMPOTENCY_WINDOW_MS);
    return findTopUpsByRef(tx, tenantId, sha256Hex(claim.key), windowStart);
  }

  /** Step 1, in one transaction: resume the key's top-up, or check the rules and write a new one. */
  async function firstStep(
    tx: Tx,
    tenantId: string,
    userId: string,
    minutes: number,
    recorder: TopUpRecorder | undefined,
  ): Promise<FirstStep> {
    const now = clock.now();
    const requestHash = sha256Hex(JSON.stringify({ userId, minutes }));
    const previous = await previousAttempts(tx, tenantId, recorder, now);
    const latest = previous[0];
    if (latest && latest.request_hash !== requestHash) {
      // The key's record was released (a 503) and the key came back with another request.
      throw new ApiError(
        'idempotency_key_reuse',
        'This Idempotency-Key was already used with a different request body or path.',
      );
    }
    if (latest?.status === 'pending') return { pending: latest };
    if (latest?.status === 'succeeded' || latest?.status === 'declined') return { settled: latest };

    const user = await lockedUser(tx, tenantId, userId);
    const current = await findCurrentSubscription(tx, tenantId, user.id, now);
    if (!current) {
      throw unprocessable(
        'The user has no active or trialing subscription; a top-up is priced by the current plan’s topup_rate.',
      );
    }
    const plan = await findPlan(tx, tenantId, current.plan_id, { includeArchived: true });
    if (!plan) throw new Error(`subscription ${current.id} has no plan`);

    const amount = topUpAmount(minutes, plan.topup_rate, plan.currency);
    // Minutes that round to nothing at a paying rate would be free minutes, one request at a time.
    if (amount === 0 && plan.topup_rate > 0) {
      throw new ApiError('validation_failed', 'The request has invalid fields.', [
        {
          field: 'minutes',
          issue: `costs less than the smallest amount in ${plan.currency.toUpperCase()}: buy more minutes`,
        },
      ]);
    }
    const base = recorder ? processorKeyBase(tenantId, recorder.claim.key) : `vp_${randomBase62(32)}`;
    // A retry after an abandoned attempt must not replay that attempt's processor answer.
    const abandoned = previous.filter((row) => row.status === 'abandoned').length;
    const row = {
      id: newId('top'),
      tenant_id: tenantId,
      user_id: user.id,
      subscription_id: current.id,
      plan_id: plan.id,
      minutes,
      amount,
      currency: plan.currency,
      billing: plan.provider,
      idempotency_ref: recorder ? sha256Hex(recorder.claim.key) : null,
      request_hash: requestHash,
      processor: null,
      processor_customer_id: null,
      processor_payment_method_id: null,
      processor_key: null,
      processor_charge_id: null,
      decline_code: null,
      created_at: now,
      updated_at: now,
    };

    if (plan.provider === 'processor') {
      const customer = await findCustomer(tx, tenantId, user.id, deps.processor.name);
      if (!customer?.payment_method_id) throw unprocessable(NO_CARD_MESSAGE);
      // A zero topup_rate is free: nothing to charge (a processor refuses a charge of 0).
      if (row.amount > 0) {
        const pending = await insertTopUp(tx, {
          ...row,
          status: 'pending',
          processor: deps.processor.name,
          processor_customer_id: customer.customer_id,
          processor_payment_method_id: customer.payment_method_id,
          processor_key: `${base}_topup${abandoned > 0 ? `_r${abandoned}` : ''}`,
        });
        await enqueueJob(tx, {
          queue: TOP_UP_RECONCILE_QUEUE,
          tenantId,
          payload: { top_up_id: pending.id },
          runAt: new Date(now.getTime() + TOP_UP_RECONCILE_AFTER_MS),
          singletonKey: `top-up-reconcile:${pending.id}`,
        });
        if (recorder) {
          await deps.idempotency.saveRecoveryPoint(tx, recorder.claim, RECOVERY_POINT, {
            top_up_id: pending.id,
          });
        }
        return { pending };
      }
    }
    const credited = await insertTopUp(tx, { ...row, status: 'succeeded' });
    await creditTopUp(tx, credited, now);
    return { settled: credited };
  }

  /** 404 unless the user is a live user of the tenant. */
  async function checkUser(tenantId: string, userId: string): Promise<void> {
    const user = await findUser(db, tenantId, userId);
    if (!user || user.deleted_at) throw notFound('User');
  }

  /** Stores a succeeded top-up's answer in `tx`; a decline's 422 is stored once sent (core/idempotency/store.ts). */
  async function recordSucceeded(tx: Tx, settled: TopUpRow, recorder: TopUpRecorder | undefined) {
    if (settled.status !== 'succeeded') return;
    await recordAudit(tx, {
      action: 'top_up.created',
      tenantId: settled.tenant_id,
      objectType: 'top_up',
      objectId: settled.id,
      fields: ['minutes'],
      at: settled.created_at,
    });
    await recordAnswer(deps.idempotency, tx, recorder, toTopUp(settled));
  }

  /** A settled top-up as the request's answer: itself, or (declined) the 422 naming it. */
  function answerOf(settled: TopUpRow): TopUp {
    if (settled.status === 'declined') throw declinedError(settled);
    return toTopUp(settled);
  }

  return {
    /**
     * Tops the user up by `minutes`. A declined card is 422 (the declined top-up is listed); no
     * answer from the processor is 503, to be retried with the same Idempotency-Key.
     */
    async create(
      tenantId: string,
      userId: string,
      body: CreateTopUpBody,
      recorder?: TopUpRecorder,
    ): Promise<TopUp> {
      const first = await db.transaction().execute(async (tx) => {
        const step = await firstStep(tx, tenantId, userId, body.minutes, recorder);
        if ('settled' in step) await recordSucceeded(tx, step.settled, recorder);
        return step;
      });
      if ('settled' in first) return answerOf(first.settled);
      const charge = await charges.charge(first.pending);
      const settled = await db.transaction().execute(async (tx) => {
        const row = await charges.settle(tx, first.pending, charge, clock.now());
        await recordSucceeded(tx, row, recorder);
        return row;
      });
      return answerOf(settled);
    },

    /** The user's top-ups (succeeded and declined), newest first. */
    async list(tenantId: string, userId: string, query: ListTopUpsQuery) {
      await checkUser(tenantId, userId);
      return listPage(
        query,
        (limit, offset) => listTopUps(db, tenantId, userId, { limit, offset }),
        () => countTopUps(db, tenantId, userId),
        toTopUp,
      );
    },

    async get(tenantId: string, userId: string, topUpId: string): Promise<TopUp> {
      await checkUser(tenantId, userId);
      const row = await findTopUp(db, tenantId, topUpId);
      if (!row || row.user_id !== userId || (row.status !== 'succeeded' && row.status !== 'declined')) {
        throw notFound('Top-up');
      }
      return toTopUp(row);
    },

    reconcile: charges.reconcile,
  };
}

export type TopUpService = ReturnType<typeof createTopUpService>;
