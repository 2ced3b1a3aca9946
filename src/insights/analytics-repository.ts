/**
 * The calls analytics' one read: a tenant's calls created in a range of UTC days, aggregated three
 * ways in a single pass (GROUPING SETS): per UTC day and status, per UTC day and ended_reason, per
 * agent.
 *
 * Why it stays cheap for a tenant with a million calls: finished calls are read from
 * `call_day_totals` (migration 0050: a row per day, agent, status and reason, kept exact by
 * triggers), so 30 days of a busy tenant are a few thousand rows whatever its calls; the calls not
 * finished yet come from the partial indexes of migration 0014 (`calls_tenant_waiting`,
 * `calls_tenant_active`), which hold only live calls. test/insights/analytics-plan.test.ts checks
 * the plan and the totals.
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

/** A range's bounds as UTC days: the counted rows are per day. */
const utcDay = (at: Date) => at.toISOString().slice(0, 10);

/**
 * Every call of a tenant created in [from, to) as rows of counts (`day`, `status`, `reason`,
 * `agent_id`, `calls`, `answered`, `ended`, `minutes`, `seconds`): the finished ones from
 * call_day_totals, the others one row each from the live partial indexes. `from` and `to` are UTC
 * midnights (the callers' ranges are whole UTC days).
 */
export function countedCalls(tenantId: string, range: CallRange) {
  const live = (statuses: string) => sql`
    SELECT (c.created_at AT TIME ZONE 'UTC')::date AS day, c.status, c.ended_reason AS reason, c.agent_id,
           1 AS calls, CASE WHEN c.started_at IS NOT NULL THEN 1 ELSE 0 END AS answered, 0 AS ended,
           coalesce(c.billed_minutes, 0) AS minutes,
           CASE WHEN c.started_at IS NOT NULL THEN coalesce(c.duration_seconds, 0) ELSE 0 END AS seconds
    FROM calls c
    WHERE c.tenant_id = ${tenantId} AND c.status IN (${sql.raw(statuses)})
      AND c.created_at >= ${range.from} AND c.created_at < ${range.to}`;
  return sql`
    SELECT t.day, t.status, nullif(t.ended_reason, '') AS reason, nullif(t.agent_id, '') AS agent_id,
           t.calls, t.answered, t.calls AS ended, t.minutes, t.seconds
    FROM call_day_totals t
    WHERE t.tenant_id = ${tenantId} AND t.day >= ${utcDay(range.from)}::date AND t.day < ${utcDay(range.to)}::date
    UNION ALL ${live("'queued'")}
    UNION ALL ${live("'dialing', 'in_progress'")}`;
}

/** The statement, for EXPLAIN in the tests. */
export function callAggregatesQuery(tenantId: string, range: CallRange) {
  return sql<Row>`
    SELECT CASE WHEN GROUPING(c.status) = 0 THEN 'status'
                WHEN GROUPING(c.reason) = 0 THEN 'reason' ELSE 'agent' END AS set,
           to_char(c.day, 'YYYY-MM-DD') AS day,
           c.status, c.reason, c.agent_id,
           sum(c.calls) AS calls, sum(c.answered) AS answered, sum(c.ended) AS ended,
           sum(c.minutes) AS minutes, sum(c.seconds) AS seconds
    FROM (${countedCalls(tenantId, range)}) c
    GROUP BY GROUPING SETS ((c.day, c.status), (c.day, c.reason), (c.agent_id))`;
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
