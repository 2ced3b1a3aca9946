/**
 * call_day_totals (migration 0050) stays equal to a count over the finished calls themselves
 * whatever happens to them: inserted finished or live, moved through their statuses one by one or
 * in batches, changed after they finished (minutes, reason, an analysis that counts nothing),
 * deleted.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';

let t: TestApp;
const db = () => t.services.database.db;

const insert = (prefix: string, count: number, status: string) => sql`
  INSERT INTO calls (id, tenant_id, agent_id, agent_version, user_id, from_number, to_number, name, context,
                     prompt, welcome_message, status, ended_reason, started_at, duration_seconds, billed_minutes,
                     created_at, updated_at)
  SELECT ${prefix} || g, 'ten_' || (g % 2), CASE WHEN g % 5 = 0 THEN NULL ELSE 'agt_' || (g % 3) END, 1, 'usr_1',
         '+14155550100', '+14155550123', 'Ada', '{}'::jsonb, 'p', 'w', ${status},
         CASE WHEN ${status} IN ('completed', 'no_answer', 'failed') THEN ${status} END,
         CASE WHEN g % 2 = 0 THEN timestamptz '2026-11-01' + make_interval(hours => g) END,
         CASE WHEN g % 2 = 0 THEN 30 + g END, g % 3,
         timestamptz '2026-11-01' + make_interval(hours => g), now()
  FROM generate_series(1, ${count}::int) g`;

/** The table's rows against the same sums over the finished calls, key by key (zeros left out). */
async function expectInStep() {
  const { rows: totals } = await sql<{ key: string }>`
    SELECT concat_ws('|', tenant_id, day, agent_id, status, ended_reason, calls, answered, minutes, seconds) AS key
    FROM call_day_totals WHERE calls <> 0 OR answered <> 0 OR minutes <> 0 OR seconds <> 0 ORDER BY 1`.execute(
    db(),
  );
  const { rows: counted } = await sql<{ key: string }>`
    SELECT concat_ws('|', tenant_id, (created_at AT TIME ZONE 'UTC')::date, coalesce(agent_id, ''), status,
                     coalesce(ended_reason, ''), count(*), count(*) FILTER (WHERE started_at IS NOT NULL),
                     coalesce(sum(billed_minutes), 0),
                     coalesce(sum(duration_seconds) FILTER (WHERE started_at IS NOT NULL), 0)) AS key
    FROM calls WHERE status IN ('completed', 'no_answer', 'failed')
    GROUP BY tenant_id, (created_at AT TIME ZONE 'UTC')::date, coalesce(agent_id, ''), status, coalesce(ended_reason, '')
    ORDER BY 1`.execute(db());
  expect(totals.map((r) => r.key)).toEqual(counted.map((r) => r.key));
}

beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('call_day_totals', () => {
  it('counts calls inserted finished, and nothing for live ones', async () => {
    await insert('done_', 200, 'completed').execute(db());
    await insert('missed_', 50, 'no_answer').execute(db());
    await insert('live_', 120, 'queued').execute(db());
    await expectInStep();
  });

  it('follows live calls through their statuses, one by one and in batches', async () => {
    await sql`UPDATE calls SET status = 'dialing' WHERE id LIKE 'live_%'`.execute(db());
    await sql`UPDATE calls SET status = 'in_progress' WHERE id = 'live_7'`.execute(db());
    await sql`UPDATE calls SET status = 'completed', ended_reason = 'completed', billed_minutes = 2
              WHERE id IN ('live_7', 'live_8')`.execute(db());
    await sql`UPDATE calls SET status = CASE WHEN id < 'live_5' THEN 'failed' ELSE 'no_answer' END,
                               ended_reason = 'engine_error'
              WHERE id LIKE 'live_%' AND status = 'dialing'`.execute(db());
    await expectInStep();
  });

  it('applies changes to finished calls, and writes nothing for a change it does not count', async () => {
    await sql`UPDATE calls SET billed_minutes = billed_minutes + 1, ended_reason = 'customer-ended-call'
              WHERE id LIKE 'done_1%'`.execute(db());
    await sql`UPDATE calls SET status = 'failed' WHERE id = 'done_3'`.execute(db());
    const before = await sql<{ n: string }>`SELECT sum(xmin::text::bigint) AS n FROM call_day_totals`.execute(
      db(),
    );
    await sql`UPDATE calls SET analysis = '{"summary": "ok"}'::jsonb WHERE id LIKE 'done_2%'`.execute(db());
    const after = await sql<{ n: string }>`SELECT sum(xmin::text::bigint) AS n FROM call_day_totals`.execute(
      db(),
    );
    expect(after.rows[0].n).toBe(before.rows[0].n);
    await expectInStep();
  });

  it('forgets deleted calls', async () => {
    await sql`DELETE FROM calls WHERE id LIKE 'missed_%' OR id = 'done_42'`.execute(db());
    await expectInStep();
  });
});
