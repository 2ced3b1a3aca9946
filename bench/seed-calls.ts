/**
 * The million calls of the lists at scale: finished calls of the benchmark tenant, one a second
 * ending a day before the seed, spread over LIST_AGENTS agents, with the statuses and directions
 * a busy agency's history has (70 % completed, 15 % no answer, 15 % failed; one in five inbound).
 * Statuses and directions come from hashes of the row number, so they are independent of the
 * agent (agent = row number modulo LIST_AGENTS): every filter combination has rows.
 * Set-based: one `INSERT … SELECT generate_series` per CALL_BATCH rows, with the table's
 * secondary indexes dropped for the load and rebuilt after it (bench/seed.ts).
 */
import { sql } from 'kysely';
import type { Database } from '../src/core/db/database.js';

/** The tenant's calls spread over this many agents (10,000 each for 1,000,000 calls). */
export const LIST_AGENTS = 100;
/** The tenant's seeded calls. */
export const CALLS_LIST_CALLS = 1_000_000;
const CALL_BATCH = 250_000;

/** The list agent whose calls `calls_list` pages through. */
export const listAgentId = (salt: string, n = 7) => `agt_benchlist${salt}${String(n).padStart(4, '0')}`;

export interface SeededCalls {
  /** created_at of the first and last seeded call (ISO): the date-range scenario picks inside. */
  firstCallAt: string;
  lastCallAt: string;
}

export async function seedListCalls(
  db: Database['db'],
  options: { tenantId: string; ownerUserId: string; salt: string; now: Date; calls: number },
): Promise<SeededCalls> {
  const { tenantId, ownerUserId, salt, calls } = options;
  const callsStart = new Date(options.now.getTime() - 24 * 3600_000 - calls * 1000);
  for (let from = 1; from <= calls; from += CALL_BATCH) {
    const to = Math.min(calls, from + CALL_BATCH - 1);
    await sql`
      INSERT INTO calls (id, tenant_id, agent_id, agent_version, user_id, from_number, to_number, name, email,
                         context, prompt, welcome_message, status, direction, created_at, started_at, ended_at,
                         duration_seconds, updated_at, attempts, billed_minutes, ended_reason)
      SELECT 'call_' || md5('c' || g || ${salt}), ${tenantId},
             'agt_benchlist' || ${salt} || lpad((g % ${LIST_AGENTS})::text, 4, '0'), 1, ${ownerUserId},
             CASE WHEN k.inbound THEN '+1415' || lpad(g::text, 7, '0') ELSE '+14155550199' END,
             CASE WHEN k.inbound THEN '+14155550199' ELSE '+1415' || lpad(g::text, 7, '0') END,
             'Callee ' || g, NULL,
             jsonb_build_object('company', 'Bench Co'), 'You are calling Callee ' || g || ' from Bench Co.',
             'Hello Callee ' || g || '.', k.status, CASE WHEN k.inbound THEN 'inbound' ELSE 'outbound' END,
             ${callsStart}::timestamptz + g * interval '1 second',
             CASE WHEN k.status = 'completed' THEN ${callsStart}::timestamptz + g * interval '1 second' + interval '5 seconds' END,
             ${callsStart}::timestamptz + g * interval '1 second' + interval '65 seconds',
             CASE WHEN k.status = 'completed' THEN 60 ELSE 0 END,
             ${callsStart}::timestamptz + g * interval '1 second' + interval '65 seconds', 1,
             CASE WHEN k.status = 'completed' THEN 1 ELSE 0 END,
             CASE k.status WHEN 'completed' THEN 'completed' WHEN 'no_answer' THEN 'no_answer' ELSE 'engine_error' END
      FROM generate_series(${from}::int, ${to}::int) g
      CROSS JOIN LATERAL (
        SELECT abs(hashint4(g)) % 20 AS h, abs(hashint4(g + 7919)) % 5 = 0 AS inbound
      ) m
      CROSS JOIN LATERAL (
        SELECT CASE WHEN m.h < 14 THEN 'completed' WHEN m.h < 17 THEN 'no_answer' ELSE 'failed' END AS status,
               m.inbound
      ) k`.execute(db);
  }
  return {
    firstCallAt: new Date(callsStart.getTime() + 1000).toISOString(),
    lastCallAt: new Date(callsStart.getTime() + calls * 1000).toISOString(),
  };
}
