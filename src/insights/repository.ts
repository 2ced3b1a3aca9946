/** Aggregates over a tenant's calls and subscriptions for the console's overview. */
import { sql } from 'kysely';
import type { Executor } from '../core/db/database.js';
import { countedCalls } from './analytics-repository.js';

/** The end of "since": later than any call's day. */
const FAR_FUTURE = new Date('9999-01-01T00:00:00Z');

export interface DailyCalls {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  calls: number;
  completed: number;
  minutes: number;
}

/**
 * Calls per UTC day since `since` (a UTC midnight), with those completed and the minutes billed:
 * the finished calls from call_day_totals (migration 0050), the others from the live partial
 * indexes (analytics-repository.ts `countedCalls`). Its cost follows the days, not the calls.
 */
export async function dailyCalls(db: Executor, tenantId: string, since: Date): Promise<DailyCalls[]> {
  const result = await sql<{ day: string; calls: string; completed: string; minutes: string }>`
    SELECT to_char(c.day, 'YYYY-MM-DD') AS day,
           sum(c.calls) AS calls,
           coalesce(sum(c.calls) FILTER (WHERE c.status = 'completed'), 0) AS completed,
           sum(c.minutes) AS minutes
    FROM (${countedCalls(tenantId, { from: since, to: FAR_FUTURE })}) c
    GROUP BY c.day
    ORDER BY c.day`.execute(db);
  return result.rows.map((row) => ({
    day: row.day,
    calls: Number(row.calls),
    completed: Number(row.completed),
    minutes: Number(row.minutes),
  }));
}

/** Minutes billed for calls placed since `since` (a UTC midnight: the current period's start). */
export async function minutesBilledSince(db: Executor, tenantId: string, since: Date): Promise<number> {
  const result = await sql<{ minutes: string }>`
    SELECT coalesce(sum(c.minutes), 0) AS minutes
    FROM (${countedCalls(tenantId, { from: since, to: FAR_FUTURE })}) c`.execute(db);
  return Number(result.rows[0]?.minutes ?? 0);
}

/** Subscriptions that are paying or trialling now. */
export async function countLiveSubscriptions(db: Executor, tenantId: string): Promise<number> {
  const result = await sql<{ n: string }>`
    SELECT count(*) AS n FROM subscriptions
    WHERE tenant_id = ${tenantId} AND status IN ('active', 'trialing', 'past_due')`.execute(db);
  return Number(result.rows[0]?.n ?? 0);
}

/** Live (not deleted) users, kept on the tenant row by a trigger (migration 0008): no count needed. */
export async function liveUsers(db: Executor, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('tenants')
    .select('live_users')
    .where('id', '=', tenantId)
    .executeTakeFirst();
  return Number(row?.live_users ?? 0);
}
