/**
 * The statements of delivery attempts (./delivery.ts), each for every attempt of a batch at once:
 * loading what they need, and recording their successes.
 */
import { type Executor, runPrepared } from '../core/db/database.js';
import type { DeliveryCore, EndpointRow, EventRow } from './repository.js';

export interface DeliveryAttempt {
  delivery: DeliveryCore;
  endpoint: EndpointRow;
  event: EventRow;
}

/** What each attempt needs: the delivery, its endpoint (live or not) and its event; by delivery id. */
export async function loadDeliveryAttempts(
  db: Executor,
  deliveryIds: string[],
): Promise<Map<string, DeliveryAttempt>> {
  const rows = await runPrepared<AttemptRow>(db, {
    name: 'events_load_delivery_attempts',
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
      WHERE d.id = ANY($1::text[])`,
    values: [deliveryIds],
  });
  return new Map(rows.map((row) => [row.id, attemptOf(row)]));
}

/** What one attempt sent and got back, kept on the delivery for its detail page. */
export interface Exchange {
  requestHeaders: Record<string, string>;
  responseHeaders: Record<string, string> | null;
  /** At most the first 4 KiB of the answer. */
  responseBody: string | null;
  /** Why there was no answer. */
  error: string | null;
}

export interface DeliverySuccess {
  tenantId: string;
  deliveryId: string;
  attempts: number;
  at: Date;
  responseCode: number;
  exchange: Exchange;
}

/**
 * Marks the deliveries succeeded, in one statement whose commit does not wait for its WAL flush
 * (synchronous_commit off for its transaction): only the delivery job's handler calls it, and the
 * job's acknowledgement, a synchronous commit written after it, flushes the WAL up to and past it.
 * A database crash before that acknowledgement loses both, and the job sends the event again
 * (at-least-once, the same webhook-id).
 */
export async function markDeliveriesSucceeded(db: Executor, successes: DeliverySuccess[]): Promise<void> {
  await runPrepared(db, {
    name: 'events_mark_deliveries_succeeded',
    text: `
      WITH commit_without_flush AS (SELECT set_config('synchronous_commit', 'off', true))
      UPDATE event_deliveries d
      SET status = 'succeeded', attempts = s.attempts, last_attempt_at = s.at,
          last_response_code = s.response_code, next_attempt_at = NULL,
          last_request_headers = s.request_headers, last_response_headers = s.response_headers,
          last_response_body = s.response_body, last_error = NULL
      FROM unnest($1::text[], $2::text[], $3::integer[], $4::timestamptz[], $5::integer[],
                  $6::jsonb[], $7::jsonb[], $8::text[])
        AS s(tenant_id, id, attempts, at, response_code, request_headers, response_headers, response_body),
        commit_without_flush
      WHERE d.tenant_id = s.tenant_id AND d.id = s.id`,
    values: [
      successes.map((s) => s.tenantId),
      successes.map((s) => s.deliveryId),
      successes.map((s) => s.attempts),
      successes.map((s) => s.at),
      successes.map((s) => s.responseCode),
      successes.map((s) => JSON.stringify(s.exchange.requestHeaders)),
      successes.map((s) => JSON.stringify(s.exchange.responseHeaders)),
      successes.map((s) => s.exchange.responseBody),
    ],
  });
}

function attemptOf(row: AttemptRow): DeliveryAttempt {
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

type AttemptRow = DeliveryCore &
  Omit<EndpointRow, 'id' | 'tenant_id' | 'created_at' | 'updated_at'> & {
    endpoint_created_at: Date;
    endpoint_updated_at: Date;
    type: string;
    event_created_at: Date;
    data: EventRow['data'];
  };
