/**
 * The calls list as CSV (the console's export): the filters of GET /api/v1/calls, newest first,
 * read in batches by keyset — `(created_at, id)` below the last row sent — on the listing indexes
 * (calls_tenant_created and its agent and user siblings, migration 0014). Memory holds one batch
 * whatever the number of calls, and no batch re-reads rows an offset would skip.
 */
import { sql } from 'kysely';
import { type CsvCell, toCsv } from '../core/csv.js';
import type { Executor } from '../core/db/database.js';
import { type CallFilter, filteredCalls } from './list-repository.js';

const BATCH = 1000;

export const CALLS_CSV_HEADER = [
  'id',
  'created_at',
  'agent_id',
  'user_id',
  'to',
  'name',
  'status',
  'ended_reason',
  'answered_by',
  'duration_seconds',
  'billed_minutes',
  'started_at',
  'ended_at',
];

const iso = (date: Date | null) => date?.toISOString() ?? null;

/** The CSV text, a chunk per batch (the header first): hand it to a stream. */
export async function* callsCsv(db: Executor, filter: CallFilter): AsyncGenerator<string> {
  yield toCsv([CALLS_CSV_HEADER]);
  // The cursor keeps created_at as PostgreSQL's text: a JavaScript Date would drop the microseconds.
  let cursor: { createdAt: string; id: string } | undefined;
  for (;;) {
    let query = filteredCalls(db, filter).select([
      'id',
      'created_at',
      sql<string>`created_at::text`.as('created_text'),
      'agent_id',
      'user_id',
      'to_number',
      'name',
      'status',
      'ended_reason',
      'answered_by',
      'duration_seconds',
      'billed_minutes',
      'started_at',
      'ended_at',
    ]);
    if (cursor) {
      const { createdAt, id } = cursor;
      query = query.where(sql<boolean>`(created_at, id) < (${createdAt}::timestamptz, ${id})`);
    }
    const rows = await query.orderBy('created_at', 'desc').orderBy('id', 'desc').limit(BATCH).execute();
    if (rows.length === 0) return;
    yield toCsv(
      rows.map((row): CsvCell[] => [
        row.id,
        iso(row.created_at),
        row.agent_id,
        row.user_id,
        row.to_number,
        row.name,
        row.status,
        row.ended_reason,
        row.answered_by ?? 'unknown',
        row.duration_seconds,
        row.billed_minutes,
        iso(row.started_at),
        iso(row.ended_at),
      ]),
    );
    if (rows.length < BATCH) return;
    const last = rows[rows.length - 1];
    cursor = { createdAt: last.created_text, id: last.id };
  }
}
