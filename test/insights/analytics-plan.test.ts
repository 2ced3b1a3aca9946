/**
 * The calls analytics' statement reads days, not calls: with a million-call tenant in mind, 40,000
 * calls of one tenant over ~2 years (and 40 other tenants' beside them), a 30-day range reads the
 * tenant's rows of `call_day_totals` for those days (migration 0050) and, from `calls`, only the
 * partial indexes of the calls not finished yet; never the table, never the window's calls.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { callAggregatesQuery } from '../../src/insights/analytics-repository.js';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
const DAY_MS = 86_400_000;
const now = new Date('2026-11-20T00:00:00Z');

/**
 * `count` calls of a tenant, one every `spacingMinutes` back from now, mixed outcomes and agents;
 * with `tenants` > 1, the calls are shared out among that many tenants named after `tenantId`.
 */
const calls = (tenantId: string, count: number, spacingMinutes: number, tenants = 1) => sql`
  INSERT INTO calls (id, tenant_id, agent_id, agent_version, user_id, from_number, to_number, name, context,
                     prompt, welcome_message, status, ended_reason, started_at, duration_seconds, billed_minutes,
                     created_at, updated_at)
  SELECT ${tenantId} || '_call_' || g,
         CASE WHEN ${tenants}::int = 1 THEN ${tenantId} ELSE ${tenantId} || (g % ${tenants}::int) END, 'agt_' || (g % 7), 1, 'usr_1', '+14155550100', '+14155550123', 'Ada',
         '{}'::jsonb, 'p', 'w',
         (ARRAY['completed', 'no_answer', 'failed'])[1 + g % 3],
         (ARRAY['customer-ended-call', 'no_answer', 'failed'])[1 + g % 3],
         CASE WHEN g % 3 = 0 THEN ${now}::timestamptz - make_interval(mins => g * ${spacingMinutes}::int) END,
         CASE WHEN g % 3 = 0 THEN 60 END, CASE WHEN g % 3 = 0 THEN 1 ELSE 0 END,
         ${now}::timestamptz - make_interval(mins => g * ${spacingMinutes}::int), ${now}::timestamptz
  FROM generate_series(1, ${count}::int) g`;

beforeAll(async () => {
  t = await startTestApp();
  const db = t.services.database.db;
  await calls('ten_big', 40_000, 30).execute(db); // ~830 days
  // The platform's other agencies: as many calls again, among 40 of them.
  await calls('ten_other', 40_000, 30, 40).execute(db);
  await sql`ANALYZE calls`.execute(db);
}, 120_000);
afterAll(() => t.close());

describe('the calls analytics statement', () => {
  it('reads a 30-day range from call_day_totals and only the live calls from calls', async () => {
    const db = t.services.database.db;
    const compiled = callAggregatesQuery('ten_big', {
      from: new Date(now.getTime() - 30 * DAY_MS),
      to: now,
    }).compile(db);
    const { rows } = await db.executeQuery<{ 'QUERY PLAN': string }>({
      ...compiled,
      sql: `EXPLAIN (ANALYZE, COSTS OFF, TIMING OFF) ${compiled.sql}`,
    });
    const plan = rows.map((row) => row['QUERY PLAN']).join('\n');
    expect(plan, plan).toMatch(/Index Scan using call_day_totals_pkey on call_day_totals/);
    expect(plan, plan).not.toMatch(/Seq Scan on calls/);
    // Only the partial indexes of live calls, never calls_tenant_created (every call of the window).
    for (const [, index] of plan.matchAll(/Scan using (\w+) on calls/g)) {
      expect(['calls_tenant_waiting', 'calls_tenant_active'], plan).toContain(index);
    }
    // 30 days × 7 agents × 3 outcomes at most: the days' rows, not the window's 1,440 calls.
    const read = /on call_day_totals[^\n]*\(actual rows=([\d.]+)/.exec(plan);
    expect(Number(read?.[1]), plan).toBeLessThanOrEqual(30 * 7 * 3);
  });

  it('answers the same totals as the rows say', async () => {
    const db = t.services.database.db;
    const range = { from: new Date(now.getTime() - 30 * DAY_MS), to: now };
    const { rows } = await callAggregatesQuery('ten_big', range).execute(db);
    const perAgent = rows.filter((row) => row.set === 'agent');
    expect(perAgent).toHaveLength(7);
    expect(perAgent.reduce((sum, row) => sum + Number(row.calls), 0)).toBe(1_440);
    expect(perAgent.reduce((sum, row) => sum + Number(row.answered), 0)).toBe(480);
  });
});
