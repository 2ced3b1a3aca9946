/**
 * Timeline entries that are not status changes: things that happened during a call (a tool call),
 * written beside the status rows of call_events and read with them (`listCallEvents`). Their
 * `status` is a kind that is never a call status, so nothing reading the call's state mistakes
 * them for one.
 */
import { type Executor, runPrepared } from '../core/db/database.js';

/** The timeline kind of a tool call: detail `{ name, duration_ms, outcome }`, never the arguments. */
export const TOOL_CALL_ENTRY = 'tool_call';

export interface TimelineEntry {
  kind: typeof TOOL_CALL_ENTRY;
  at: Date;
  detail: Record<string, unknown>;
}

/** Fast path: a turn's entries in one prepared INSERT (the tools service coalesces them). */
export async function insertTimelineEntries(
  db: Executor,
  entries: (TimelineEntry & { tenantId: string; callId: string })[],
): Promise<void> {
  if (entries.length === 0) return;
  await runPrepared(db, {
    name: 'call_timeline_insert_many',
    text: `INSERT INTO call_events (tenant_id, call_id, status, at, detail)
      SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::timestamptz[], $5::jsonb[])`,
    values: [
      entries.map((entry) => entry.tenantId),
      entries.map((entry) => entry.callId),
      entries.map((entry) => entry.kind),
      entries.map((entry) => entry.at),
      entries.map((entry) => JSON.stringify(entry.detail)),
    ],
  });
}
