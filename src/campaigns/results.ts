/**
 * A campaign's results as CSV (GET /api/v1/campaigns/{id}/results.csv): one line per recipient in
 * upload order, with its status, its latest call and how that call ended. Read a page at a time
 * (by position), so a campaign of any size is exported without one large query result.
 */
import { sql } from 'kysely';
import { type CsvCell, toCsv } from '../core/csv.js';
import type { Executor } from '../core/db/database.js';
import { SHOWN_OUTCOME, SHOWN_STATUS } from './repository.js';

const PAGE = 1_000;

export const RESULT_COLUMNS = [
  'line',
  'phone',
  'name',
  'email',
  'status',
  'skip_reason',
  'attempts',
  'call_id',
  'outcome',
  'ended_reason',
  'duration_seconds',
  'billed_minutes',
  'started_at',
  'ended_at',
  'context',
] as const;

interface ResultRow {
  position: number;
  line: number;
  phone_number: string;
  name: string | null;
  email: string | null;
  status: string;
  skip_reason: string | null;
  attempts: number;
  call_id: string | null;
  outcome: string | null;
  ended_reason: string | null;
  duration_seconds: number | null;
  billed_minutes: number | null;
  started_at: Date | null;
  ended_at: Date | null;
  context: Record<string, unknown> | null;
}

async function resultPage(db: Executor, tenantId: string, campaignId: string, after: number) {
  const result = await sql<ResultRow>`
    SELECT r.position, r.line, r.phone_number, r.name, r.email, ${SHOWN_STATUS} AS status, r.skip_reason,
           r.attempts, r.call_id, ${SHOWN_OUTCOME} AS outcome, c.ended_reason, c.duration_seconds,
           c.billed_minutes, c.started_at, c.ended_at, r.context
    FROM campaign_recipients r
    LEFT JOIN calls c ON c.id = r.call_id AND c.tenant_id = r.tenant_id
    WHERE r.tenant_id = ${tenantId} AND r.campaign_id = ${campaignId} AND r.position > ${after}
    ORDER BY r.position
    LIMIT ${PAGE}`.execute(db);
  return result.rows;
}

const iso = (date: Date | null) => (date ? new Date(date).toISOString() : null);

function resultLine(row: ResultRow): CsvCell[] {
  const context = row.context && Object.keys(row.context).length > 0 ? JSON.stringify(row.context) : null;
  return [
    row.line,
    row.phone_number,
    row.name,
    row.email,
    row.status,
    row.skip_reason,
    row.attempts,
    row.call_id,
    row.outcome,
    row.ended_reason,
    row.duration_seconds,
    row.billed_minutes,
    iso(row.started_at),
    iso(row.ended_at),
    context,
  ];
}

/** The CSV text of every recipient of the campaign (the caller checked that it exists). */
export async function campaignResultsCsv(
  db: Executor,
  tenantId: string,
  campaignId: string,
): Promise<string> {
  const lines: CsvCell[][] = [[...RESULT_COLUMNS]];
  let after = -1;
  for (;;) {
    const rows = await resultPage(db, tenantId, campaignId, after);
    for (const row of rows) lines.push(resultLine(row));
    if (rows.length < PAGE) return toCsv(lines);
    after = rows[rows.length - 1].position;
  }
}
