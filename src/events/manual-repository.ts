/**
 * Deliveries a member asks for by hand: a test event to one endpoint, and a resend (a new delivery
 * of an event already sent). Each is written with its job in the caller's transaction, and the
 * job sends it exactly as any delivery (./delivery.ts): the same signing, retries and log.
 */
import { sql } from 'kysely';
import type { Executor } from '../core/db/database.js';
import { newId } from '../core/ids.js';
import { type DeliveryListRow, scheduleDelivery } from './repository.js';
import { TEST_EVENT_TYPE } from './schemas.js';

/** Writes a `webhook.test` event, its one delivery to `endpointId` and the job; returns the delivery. */
export async function insertTestDelivery(
  tx: Executor,
  tenantId: string,
  endpointId: string,
  object: Record<string, unknown>,
  at: Date,
): Promise<DeliveryListRow> {
  const eventId = newId('evt');
  await sql`
    INSERT INTO events (id, tenant_id, type, created_at, data)
    VALUES (${eventId}, ${tenantId}, ${TEST_EVENT_TYPE}, ${at}, ${JSON.stringify({ object })}::jsonb)`.execute(
    tx,
  );
  return insertDelivery(
    tx,
    tenantId,
    { endpointId, eventId, eventType: TEST_EVENT_TYPE, resentFrom: null },
    at,
  );
}

/** A new pending delivery of an event to an endpoint, and its job. */
export async function insertDelivery(
  tx: Executor,
  tenantId: string,
  delivery: { endpointId: string; eventId: string; eventType: string; resentFrom: string | null },
  at: Date,
): Promise<DeliveryListRow> {
  const row = await tx
    .insertInto('event_deliveries')
    .values({
      id: newId('del'),
      tenant_id: tenantId,
      endpoint_id: delivery.endpointId,
      event_id: delivery.eventId,
      status: 'pending',
      attempts: 0,
      last_attempt_at: null,
      last_response_code: null,
      next_attempt_at: at,
      created_at: at,
      last_request_headers: null,
      last_response_headers: null,
      last_response_body: null,
      last_error: null,
      resent_from: delivery.resentFrom,
    })
    .returningAll()
    .executeTakeFirstOrThrow();
  await scheduleDelivery(tx, tenantId, { id: row.id, endpointId: delivery.endpointId }, at);
  return { ...row, event_type: delivery.eventType };
}

/**
 * The tenant's latest events, newest first: the head of events_tenant_created, whatever the
 * tenant's history (the overview's recent activity).
 */
export async function latestEvents(db: Executor, tenantId: string, limit: number) {
  const { rows } = await sql<{
    id: string;
    type: string;
    created_at: Date;
    data: { object: Record<string, unknown> };
  }>`
    SELECT id, type, created_at, data FROM events
    WHERE tenant_id = ${tenantId}
    ORDER BY created_at DESC, id DESC
    LIMIT ${limit}`.execute(db);
  return rows;
}
