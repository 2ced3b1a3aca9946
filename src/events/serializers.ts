/** The API's shapes of endpoints, deliveries and events, from their rows. */
import type { StoredResponse } from '../core/idempotency/store.js';
import type { DeliveryListRow, EndpointRow, EventRow } from './repository.js';
import type { Delivery, Event, EventType, WebhookEndpoint } from './schemas.js';

export const toEndpoint = (row: EndpointRow): WebhookEndpoint => ({
  id: row.id,
  url: row.url,
  events: row.events as WebhookEndpoint['events'],
  description: row.description,
  enabled: row.enabled,
  failing_since: row.failing_since ? row.failing_since.toISOString() : null,
  created_at: row.created_at.toISOString(),
});

export const toDelivery = (row: DeliveryListRow): Delivery => ({
  id: row.id,
  event_id: row.event_id,
  event_type: row.event_type as EventType,
  status: row.status,
  attempts: row.attempts,
  last_attempt_at: row.last_attempt_at ? row.last_attempt_at.toISOString() : null,
  last_response_code: row.last_response_code,
  next_attempt_at: row.next_attempt_at ? row.next_attempt_at.toISOString() : null,
  resent_from: row.resent_from,
  created_at: row.created_at.toISOString(),
});

/** The most of a body a delivery's detail shows, as the receiver's answer is read. */
export const DETAIL_BODY_BYTES = 4096;
export const firstBytes = (text: string) =>
  Buffer.from(text, 'utf8').subarray(0, DETAIL_BODY_BYTES).toString('utf8');

/**
 * The answer of a delivery made by hand (a test event, a resend): 201 with the delivery and its
 * Location. The partner route sends it and stores it for the Idempotency-Key; the console's form
 * key stores the same.
 */
export const deliveryAnswer =
  (publicBaseUrl: string) =>
  (delivery: Delivery & { endpoint_id: string }): StoredResponse => ({
    status: 201,
    body: { data: withoutEndpoint(delivery) },
    headers: {
      location: `${publicBaseUrl}/api/v1/webhook-endpoints/${delivery.endpoint_id}/deliveries/${delivery.id}`,
    },
  });
const withoutEndpoint = ({ endpoint_id: _, ...delivery }: Delivery & { endpoint_id: string }): Delivery =>
  delivery;

export type ManualDelivery = Delivery & { endpoint_id: string };

export const toEvent = (row: EventRow): Event => ({
  id: row.id,
  type: row.type as EventType,
  created_at: row.created_at.toISOString(),
  data: row.data,
});
