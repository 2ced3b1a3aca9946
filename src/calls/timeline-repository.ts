/**
 * Timeline entries that are not status changes: things that happened during a call (a tool call),
 * written beside the status rows of call_events and read with them (`listCallEvents`). Their
 * `status` is a kind that is never a call status, so nothing reading the call's state mistakes
 * them for one.
 */
import { sql } from 'kysely';
import type { Executor } from '../core/db/database.js';

/** The timeline kind of a tool call: detail `{ name, duration_ms, outcome }`, never the arguments. */
export const TOOL_CALL_ENTRY = 'tool_call';

export interface TimelineEntry {
  kind: typeof TOOL_CALL_ENTRY;
  at: Date;
  detail: Record<string, unknown>;
}

export async function insertTimelineEntry(
  db: Executor,
  tenantId: string,
  callId: string,
  entry: TimelineEntry,
): Promise<void> {
  await sql`
    INSERT INTO call_events (tenant_id, call_id, status, at, detail)
    VALUES (${tenantId}, ${callId}, ${entry.kind}, ${entry.at}, ${JSON.stringify(entry.detail)}::jsonb)
  `.execute(db);
}
