/** Loading what one delivery attempt needs (./delivery.ts), in one query. */
import { type Executor, runPrepared } from '../core/db.js';
import type { DeliveryRow, EndpointRow, EventRow } from './repository.js';

/** What one attempt needs: the delivery, its endpoint (live or not) and its event, in one query. */
export async function loadDeliveryAttempt(
  db: Executor,
  deliveryId: string,
): Promise<{ delivery: DeliveryRow; endpoint: EndpointRow; event: EventRow } | undefined> {
  const [row] = await runPrepared<AttemptRow>(db, {
    name: 'events_load_delivery_attempt',
    text: `
      SELECT d.id, d.tenant_id, d.endpoint_id, d.event_id, d.status, d.attempts, d.last_attempt_at,
             d.last_response_code, d.next_attempt_at, d.created_at,
             w.url, w.events, w.description, w.enabled, w.failing_since, w.secret_sealed,
             w.previous_secret_sealed, w.previous_secret_expires_at, w.created_at AS endpoint_created_at,
             w.updated_at AS endpoint_updated_at, w.deleted_at,
             e.type, e.created_at AS event_created_at, e.data
      FROM event_deliveries d
      JOIN webhook_endpoints w ON w.tenant_id = d.tenant_id AND w.id = d.endpoint_id
      JOIN events e ON e.tenant_id = d.tenant_id AND e.id = d.event_id
      WHERE d.id = $1`,
    values: [deliveryId],
  });
  if (!row) return undefined;
  return {
    delivery: {
      id: row.id,
      tenant_id: row.tenant_id,
      endpoint_id: row.endpoint_id,
      event_id: row.event_id,
      status: row.status,
      attempts: row.attempts,
      last_attempt_at: row.last_attempt_at,
      last_response_code: row.last_response_code,
      next_attempt_at: row.next_attempt_at,
      created_at: row.created_at,
    },
    endpoint: {
      id: row.endpoint_id,
      tenant_id: row.tenant_id,
      url: row.url,
      events: row.events,
      description: row.description,
      enabled: row.enabled,
      failing_since: row.failing_since,
      secret_sealed: row.secret_sealed,
      previous_secret_sealed: row.previous_secret_sealed,
      previous_secret_expires_at: row.previous_secret_expires_at,
      created_at: row.endpoint_created_at,
      updated_at: row.endpoint_updated_at,
      deleted_at: row.deleted_at,
    },
    event: {
      id: row.event_id,
      tenant_id: row.tenant_id,
      type: row.type,
      created_at: row.event_created_at,
      data: row.data,
    },
  };
}

type AttemptRow = DeliveryRow &
  Omit<EndpointRow, 'id' | 'tenant_id' | 'created_at' | 'updated_at'> & {
    endpoint_created_at: Date;
    endpoint_updated_at: Date;
    type: string;
    event_created_at: Date;
    data: EventRow['data'];
  };
