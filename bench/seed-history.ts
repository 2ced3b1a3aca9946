/**
 * A call history for the benchmark tenant: finished calls with their timelines and their
 * `call.completed` events, as a database that has been placing calls for a while holds.
 *
 * Why: the statements that move calls along read a call's earlier timeline (call_events) and
 * are prepared, so each connection keeps the plan it made after a few runs. Against tables empty
 * at the seed's ANALYZE, that plan scans call_events whole for every call, and keeps doing so as
 * the run grows the table, until autovacuum's next ANALYZE replaces it (up to a minute later): a
 * cost a live database does not have. With a history, the plans are those of a live database.
 */
import { sql } from 'kysely';
import type { Database } from '../src/core/db/database.js';

/** Finished calls in the history; each has 4 timeline rows and 1 event. */
export const HISTORY_CALLS = 20_000;

export async function seedCallHistory(
  db: Database['db'],
  options: { tenantId: string; ownerUserId: string; salt: string; now: Date },
): Promise<void> {
  const { tenantId, ownerUserId, salt } = options;
  const start = new Date(options.now.getTime() - 2 * 24 * 3600_000);
  await sql`
    INSERT INTO calls (id, tenant_id, agent_id, agent_version, user_id, from_number, to_number, name, email,
                       context, prompt, welcome_message, status, created_at, started_at, ended_at,
                       duration_seconds, updated_at, attempts, billed_minutes, ended_reason)
    SELECT 'call_' || md5('h' || g || ${salt}), ${tenantId}, 'agt_benchhistory' || ${salt}, 1, ${ownerUserId},
           '+14155550198', '+1415' || lpad(g::text, 7, '0'), 'Earlier callee ' || g, NULL,
           jsonb_build_object('company', 'Bench Co'), 'You are calling Earlier callee ' || g || '.',
           'Hello Earlier callee ' || g || '.', 'completed',
           ${start}::timestamptz + g * interval '1 second',
           ${start}::timestamptz + g * interval '1 second' + interval '5 seconds',
           ${start}::timestamptz + g * interval '1 second' + interval '65 seconds',
           60, ${start}::timestamptz + g * interval '1 second' + interval '65 seconds', 1, 1, 'completed'
    FROM generate_series(1, ${HISTORY_CALLS}::int) g`.execute(db);
  await sql`
    INSERT INTO call_events (tenant_id, call_id, status, at, detail)
    SELECT ${tenantId}, 'call_' || md5('h' || g || ${salt}), s.status,
           ${start}::timestamptz + g * interval '1 second' + s.after, '{}'::jsonb
    FROM generate_series(1, ${HISTORY_CALLS}::int) g
    CROSS JOIN (VALUES ('queued', interval '0 seconds'), ('dialing', interval '1 second'),
                       ('in_progress', interval '5 seconds'), ('completed', interval '65 seconds')) s(status, after)
    ORDER BY g, s.after`.execute(db);
  await sql`
    INSERT INTO events (id, tenant_id, type, created_at, data)
    SELECT 'evt_' || md5('h' || g || ${salt}), ${tenantId}, 'call.completed',
           ${start}::timestamptz + g * interval '1 second' + interval '65 seconds',
           jsonb_build_object('object', jsonb_build_object('id', 'call_' || md5('h' || g || ${salt}),
                                                          'status', 'completed'))
    FROM generate_series(1, ${HISTORY_CALLS}::int) g`.execute(db);
}
