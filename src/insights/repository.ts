/** Aggregates over a tenant's calls and subscriptions for the console's overview. */
import { sql } from 'kysely';
import type { Executor } from '../core/db/database.js';

export interface DailyCalls {
  /** The UTC day, YYYY-MM-DD. */
  day: string;
  calls: number;
  completed: number;
  minutes: number;
}

/**
 * Calls per UTC day since `since`, with those completed and the minutes billed. A range scan of
 * calls_tenant_created (migration 0014): its cost follows the tenant's calls in the window.
 */
export async function dailyCalls(db: Executor, tenantId: string, since: Date): Promise<DailyCalls[]> {
  const result = await sql<{ day: string; calls: string; completed: string; minutes: string }>`
    SELECT to_char(date_trunc('day', created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day,
           count(*) AS calls,
           count(*) FILTER (WHERE status = 'completed') AS completed,
           coalesce(sum(billed_minutes), 0) AS minutes
    FROM calls
    WHERE tenant_id = ${tenantId} AND created_at >= ${since}
    GROUP BY 1
    ORDER BY 1`.execute(db);
  return result.rows.map((row) => ({
    day: row.day,
    calls: Number(row.calls),
    completed: Number(row.completed),
    minutes: Number(row.minutes),
  }));
}

/** Minutes billed for calls placed since `since` (the current period). */
export async function minutesBilledSince(db: Executor, tenantId: string, since: Date): Promise<number> {
  const result = await sql<{ minutes: string }>`
    SELECT coalesce(sum(billed_minutes), 0) AS minutes
    FROM calls WHERE tenant_id = ${tenantId} AND created_at >= ${since}`.execute(db);
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
