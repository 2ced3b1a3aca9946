/**
 * What a subscription's period brings, written in the caller's transaction: the plan's included
 * minutes (once per period) and the job that looks at the subscription again when the period
 * turns (renewal, trial end, a scheduled start or end; see jobs.ts `advance`).
 */
import { sql } from 'kysely';
import type { Executor, Tx } from '../core/db/database.js';
import { enqueueJob } from '../core/jobs/runner.js';
import { addCreditEntry } from '../credits/repository.js';
import { findPlan } from '../plans/repository.js';
import { LIVE_STATUSES, type SubscriptionRow } from './repository.js';

export const PERIOD_QUEUE = 'subscriptions.period';

/** Queues the period job at `runAt`, by default the next boundary (the start if it is ahead, else the end). */
export async function scheduleTick(tx: Executor, sub: SubscriptionRow, now: Date, runAt?: Date) {
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

/**
 * Grants the plan's minutes for the period that started at current_period_start (once), and
 * records what a paid (not trialing) period bills: the plan's monthly price (the overview's revenue).
 */
export async function grantPeriod(tx: Tx, sub: SubscriptionRow, now: Date) {
  if (sub.status !== 'active' && sub.status !== 'trialing') return;
  if (sub.current_period_start > now) return;
  const plan = await findPlan(tx, sub.tenant_id, sub.plan_id, { includeArchived: true });
  if (!plan) return;
  if (sub.status === 'active') {
    await sql`
      INSERT INTO subscription_charges
        (tenant_id, user_id, subscription_id, plan_id, period_start, amount, currency, provider, created_at)
      VALUES (${sub.tenant_id}, ${sub.user_id}, ${sub.id}, ${plan.id}, ${sub.current_period_start},
              ${plan.monthly_price}, ${plan.currency}, ${plan.provider}, ${now})
      ON CONFLICT (subscription_id, period_start) DO NOTHING`.execute(tx);
  }
  if (plan.included_minutes <= 0) return;
  await addCreditEntry(tx, {
    tenantId: sub.tenant_id,
    userId: sub.user_id,
    minutes: plan.included_minutes,
    reason: `${plan.name}: included minutes for the period from ${sub.current_period_start.toISOString()}`,
    reference: `period:${sub.id}:${sub.current_period_start.toISOString()}`,
    at: now,
  });
}
