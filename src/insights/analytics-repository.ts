/**
 * The calls analytics' one read: a tenant's calls created in a date range, aggregated three ways in
 * a single pass (GROUPING SETS): per UTC day and status, per UTC day and ended_reason, per agent.
 *
 * Why it stays cheap for a tenant with a million calls: the WHERE clause is the leading columns of
 * `calls_tenant_created` (tenant_id, created_at; migration 0014), so PostgreSQL reads one index range
 * bounded on both ends (a bitmap or index scan) and fetches only the calls inside the window, never
 * the tenant's older calls nor another tenant's. The aggregation is one hash over those rows, and
 * its result is small (days × statuses + days × reasons + agents) whatever the calls. Its cost
 * follows the calls in the window: measured on 40,000 calls of one tenant among 41, a 30-day window
 * (1,440 calls) touched 46 pages. A covering index would spare the heap reads, but every index of
 * `calls` is written by each call's status changes (the hottest writes of the service), so none is
 * added. test/insights/analytics-plan.test.ts checks the plan.
 */
import { sql } from 'kysely';
import type { Executor } from '../core/db/database.js';

export interface CallRange {
  /** Inclusive. */
  from: Date;
  /** Exclusive. */
  to: Date;
}

/** Counts of one group of calls. */
export interface CallCounts {
  calls: number;
  /** Calls the callee picked up (a person or voicemail): they have a start. */
  answered: number;
  /** Calls that reached a final status (completed, no answer, failed): the answer rate's base. */
  ended: number;
  /** Minutes billed. */
  minutes: number;
  /** Seconds talked on answered calls. */
  seconds: number;
}

export interface DayStatusRow extends CallCounts {
  day: string;
  status: string;
}
export interface DayReasonRow {
  day: string;
  /** null: the call has not ended (or ended before reasons were recorded). */
  reason: string | null;
  calls: number;
}
export interface AgentRow extends CallCounts {
  agent_id: string;
  /** null: the agent is gone from the agents table. */
  name: string | null;
}

export interface CallAggregates {
  byDayStatus: DayStatusRow[];
  byDayReason: DayReasonRow[];
  byAgent: AgentRow[];
}

interface Row {
  set: 'status' | 'reason' | 'agent';
  day: string | null;
  status: string | null;
  reason: string | null;
  agent_id: string | null;
  calls: string;
  answered: string;
  ended: string;
  minutes: string;
  seconds: string;
}

/** The statement, for EXPLAIN in the tests. */
export function callAggregatesQuery(tenantId: string, range: CallRange) {
  return sql<Row>`
    SELECT CASE WHEN GROUPING(c.status) = 0 THEN 'status'
                WHEN GROUPING(c.ended_reason) = 0 THEN 'reason' ELSE 'agent' END AS set,
           to_char(date_trunc('day', c.created_at AT TIME ZONE 'UTC'), 'YYYY-MM-DD') AS day,
           c.status, c.ended_reason AS reason, c.agent_id,
           count(*) AS calls,
           count(*) FILTER (WHERE c.started_at IS NOT NULL) AS answered,
           count(*) FILTER (WHERE c.status IN ('completed', 'no_answer', 'failed')) AS ended,
           coalesce(sum(c.billed_minutes), 0) AS minutes,
           coalesce(sum(c.duration_seconds) FILTER (WHERE c.started_at IS NOT NULL), 0) AS seconds
    FROM calls c
    WHERE c.tenant_id = ${tenantId} AND c.created_at >= ${range.from} AND c.created_at < ${range.to}
    GROUP BY GROUPING SETS (
      (date_trunc('day', c.created_at AT TIME ZONE 'UTC'), c.status),
      (date_trunc('day', c.created_at AT TIME ZONE 'UTC'), c.ended_reason),
      (c.agent_id)
    )`;
}

const counts = (row: Row): CallCounts => ({
  calls: Number(row.calls),
  answered: Number(row.answered),
  ended: Number(row.ended),
  minutes: Number(row.minutes),
  seconds: Number(row.seconds),
});

export async function callAggregates(
  db: Executor,
  tenantId: string,
  range: CallRange,
): Promise<CallAggregates> {
  const { rows } = await callAggregatesQuery(tenantId, range).execute(db);
  const result: CallAggregates = { byDayStatus: [], byDayReason: [], byAgent: [] };
  for (const row of rows) {
    if (row.set === 'status')
      result.byDayStatus.push({ day: row.day ?? '', status: row.status ?? '', ...counts(row) });
    else if (row.set === 'reason')
      result.byDayReason.push({ day: row.day ?? '', reason: row.reason, calls: Number(row.calls) });
    else result.byAgent.push({ agent_id: row.agent_id ?? '', name: null, ...counts(row) });
  }
  if (result.byAgent.length > 0) {
    // The agents of the range by primary key: deleted ones too (their calls stay).
    const names = await db
      .selectFrom('agents')
      .select(['id', 'name'])
      .where('tenant_id', '=', tenantId)
      .where(
        'id',
        'in',
        result.byAgent.map((a) => a.agent_id),
      )
      .execute();
    const byId = new Map(names.map((agent) => [agent.id, agent.name]));
    for (const agent of result.byAgent) agent.name = byId.get(agent.agent_id) ?? null;
  }
  return result;
}
