/**
 * Recording an event: the one call other features make (users, subscriptions, credits; calls
 * after the pipeline rewrite: `call.queued/started/completed/no_answer/failed` with the call as
 * `GET /api/v1/calls/{id}` shows it).
 */
import type { Executor } from '../core/db/database.js';
import { insertEvent } from './repository.js';
import type { EventType } from './schemas.js';

export interface RecordedEvent {
  tenantId: string;
  type: EventType;
  /** The resource as the partner API's GET of it shows it (a deleted user: its tombstone). */
  object: Record<string, unknown>;
  /** When it happened (the service clock's now). */
  at: Date;
}

/**
 * Records an event in `tx`, the transaction of the change that causes it (an outbox: the event
 * exists exactly when the change does), with one pending delivery per enabled endpoint of the
 * tenant subscribed to its type and one `events.deliver` job per delivery. A worker sends them
 * after the commit; nothing here talks to the network. Returns the event id (`evt_…`), which is
 * the `webhook-id` of every delivery of it.
 */
export async function recordEvent(tx: Executor, event: RecordedEvent): Promise<string> {
  return insertEvent(tx, event);
}
