import { type ColumnType, type Selectable, sql, type Updateable } from 'kysely';
import { type Executor, runPrepared } from '../core/db/database.js';
import { INSERT_NEW_JOBS } from '../core/jobs/runner.js';

export interface WebhookEndpointsTable {
  id: string;
  tenant_id: string;
  url: string;
  /** Written as JSON text (jsonb), read back as the array. */
  events: ColumnType<string[], string, string>;
  description: string | null;
  enabled: boolean;
  failing_since: Date | null;
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_expires_at: Date | null;
  created_at: Date;
  updated_at: Date;
  deleted_at: Date | null;
}

export interface EventsTable {
  id: string;
  tenant_id: string;
  type: string;
  created_at: Date;
  data: { object: Record<string, unknown> };
}

export type DeliveryStatus = 'pending' | 'succeeded' | 'failed';

export interface EventDeliveriesTable {
  id: string;
  tenant_id: string;
  endpoint_id: string;
  event_id: string;
  status: DeliveryStatus;
  attempts: number;
  last_attempt_at: Date | null;
  last_response_code: number | null;
  next_attempt_at: Date | null;
  created_at: Date;
  /** What the last attempt sent and got back (migration 0048); null before any attempt. */
  last_request_headers: ColumnType<Record<string, string> | null, string | null, string | null>;
  last_response_headers: ColumnType<Record<string, string> | null, string | null, string | null>;
  /** The answer's first 4 KiB. */
  last_response_body: string | null;
  /** Why the last attempt got no answer (a timeout, a refused address); null when it got one. */
  last_error: string | null;
  /** The delivery this one resends (the same event to the same endpoint). */
  resent_from: string | null;
}

declare module '../core/db/database.js' {
  interface Tables {
    webhook_endpoints: WebhookEndpointsTable;
    events: EventsTable;
    event_deliveries: EventDeliveriesTable;
  }
}

export type EndpointRow = Selectable<WebhookEndpointsTable>;
export type EventRow = Selectable<EventsTable>;
export type DeliveryRow = Selectable<EventDeliveriesTable>;
/** What an attempt records of its exchange, kept out of the rows the delivery job loads. */
export type ExchangeColumns =
  | 'last_request_headers'
  | 'last_response_headers'
  | 'last_response_body'
  | 'last_error'
  | 'resent_from';
/** A delivery as the job and the lists use it: without what its last exchange recorded. */
export type DeliveryCore = Omit<DeliveryRow, ExchangeColumns>;

export const DELIVERY_QUEUE = 'events.deliver';
/** The delivery row counts attempts and decides when to stop; the job only carries it. */
const DELIVERY_JOB_MAX_ATTEMPTS = 50;

export const deliveryJobKey = (deliveryId: string) => `event-delivery:${deliveryId}`;

export interface NewEvent {
  tenantId: string;
  type: string;
  object: Record<string, unknown>;
  at: Date;
}

/**
 * Writes the event, one pending delivery per enabled endpoint of the tenant subscribed to its
 * type (or to "*"), and one job per delivery, in the caller's transaction: one statement, a
 * single round trip whatever the endpoints. Returns the event id.
 */
export async function insertEvent(tx: Executor, event: NewEvent): Promise<string> {
  const [recorded] = await runPrepared<{ id: string }>(tx, {
    name: 'events_insert_one',
    text: `
      WITH source AS (
        SELECT $1::text AS tenant_id, $2::text AS type, $3::timestamptz AS created_at, $4::jsonb AS data
      ), ${recordEventsFrom('source')}
      SELECT id FROM recorded_event`,
    values: [event.tenantId, event.type, event.at, JSON.stringify({ object: event.object })],
  });
  return recorded.id;
}

/**
 * A fresh `<prefix>_…` id made inside SQL, for rows a single statement creates (24 letters and
 * digits from 256 bits of gen_random_uuid(), evaluated per row).
 */
const sqlNewId = (prefix: string) =>
  `'${prefix}_' || substr(translate(encode(uuid_send(gen_random_uuid()) || uuid_send(gen_random_uuid()), 'base64'), '+/=', ''), 1, 24)`;

/**
 * CTEs that record one event per row of the CTE `source` (columns tenant_id, type, created_at,
 * data jsonb `{ object }`), with its deliveries and their jobs, as `insertEvent` does: for a
 * statement that decides in SQL which events happen (a balance crossing a threshold, a call's
 * status change). Defines `<prefix>recorded_event`, `<prefix>event_delivery` and
 * `<prefix>event_delivery_job`: a statement recording events from two sources gives each its prefix.
 */
export function recordEventsFrom(source: string, prefix = ''): string {
  return `
  ${prefix}recorded_event AS (
    INSERT INTO events (id, tenant_id, type, created_at, data)
    SELECT ${sqlNewId('evt')}, tenant_id, type, created_at, data FROM ${source}
    RETURNING id, tenant_id, type, created_at
  ), ${prefix}event_delivery AS (
    INSERT INTO event_deliveries (id, tenant_id, endpoint_id, event_id, status, attempts, next_attempt_at, created_at)
    SELECT ${sqlNewId('del')}, e.tenant_id, w.id, e.id, 'pending', 0, e.created_at, e.created_at
    FROM ${prefix}recorded_event e
    JOIN webhook_endpoints w ON w.tenant_id = e.tenant_id AND w.deleted_at IS NULL AND w.enabled
      AND (w.events @> jsonb_build_array(e.type) OR w.events @> '["*"]'::jsonb)
    RETURNING id, tenant_id, endpoint_id, created_at
  ), ${prefix}event_delivery_job AS (
    INSERT INTO jobs (tenant_id, queue, payload, status, run_at, max_attempts, singleton_key, created_at)
    SELECT tenant_id, '${DELIVERY_QUEUE}', jsonb_build_object('delivery_id', id, 'endpoint_id', endpoint_id),
           'queued', created_at,
           ${DELIVERY_JOB_MAX_ATTEMPTS}, 'event-delivery:' || id, created_at
    FROM ${prefix}event_delivery
    RETURNING id
  )`;
}

/** Queues the delivery's job to run at `at`, or moves its queued job there. */
export async function scheduleDelivery(
  db: Executor,
  tenantId: string,
  delivery: { id: string; endpointId: string },
  at: Date,
) {
  const deliveryId = delivery.id;
  const moved = await db
    .updateTable('jobs')
    .set({ run_at: at })
    .where('singleton_key', '=', deliveryJobKey(deliveryId))
    .where('status', '=', 'queued')
    .executeTakeFirst();
  if (Number(moved.numUpdatedRows) > 0) return;
  await runPrepared(db, {
    name: 'events_schedule_delivery',
    text: `
      WITH new_job AS (
        SELECT $1::text AS tenant_id, $2::text AS queue,
               jsonb_build_object('delivery_id', $3::text, 'endpoint_id', $7::text) AS payload,
               $4::timestamptz AS run_at, $5::integer AS max_attempts, $6::text AS singleton_key
      )
      ${INSERT_NEW_JOBS}
      ON CONFLICT (singleton_key) WHERE singleton_key IS NOT NULL AND status IN ('queued', 'running') DO NOTHING`,
    values: [
      tenantId,
      DELIVERY_QUEUE,
      deliveryId,
      at,
      DELIVERY_JOB_MAX_ATTEMPTS,
      deliveryJobKey(deliveryId),
      delivery.endpointId,
    ],
  });
}

export async function insertEndpoint(db: Executor, row: EndpointRow): Promise<EndpointRow> {
  return db
    .insertInto('webhook_endpoints')
    .values({ ...row, events: JSON.stringify(row.events) })
    .returningAll()
    .executeTakeFirstOrThrow();
}

export async function findEndpoint(
  db: Executor,
  tenantId: string,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<EndpointRow | undefined> {
  let query = db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

export async function updateEndpoint(
  db: Executor,
  tenantId: string,
  id: string,
  changes: Omit<Updateable<WebhookEndpointsTable>, 'events'> & { events?: string[] },
): Promise<EndpointRow | undefined> {
  const { events, ...rest } = changes;
  return db
    .updateTable('webhook_endpoints')
    .set(events ? { ...rest, events: JSON.stringify(events) } : rest)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', id)
    .where('deleted_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

export async function listEndpoints(db: Executor, tenantId: string, limit: number, offset: number) {
  return db
    .selectFrom('webhook_endpoints')
    .selectAll()
    .select(sql<number>`count(*) over ()`.as('total'))
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function countEndpoints(db: Executor, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('webhook_endpoints')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_id', '=', tenantId)
    .where('deleted_at', 'is', null)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export type DeliveryListRow = DeliveryRow & { event_type: string };

function deliveriesOf(db: Executor, tenantId: string, endpointId: string) {
  return db
    .selectFrom('event_deliveries as d')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .where('d.tenant_id', '=', tenantId)
    .where('d.endpoint_id', '=', endpointId);
}

/** An endpoint's deliveries alone: every one has its event (foreign key), so no join is needed. */
function endpointDeliveries(db: Executor, tenantId: string, endpointId: string) {
  return db
    .selectFrom('event_deliveries as d')
    .where('d.tenant_id', '=', tenantId)
    .where('d.endpoint_id', '=', endpointId);
}

/**
 * A page of the delivery log, newest first: the page's ids from event_deliveries_endpoint, then
 * those rows with their event's type. The total is counted apart (countDeliveries, index alone).
 */
export async function listDeliveries(
  db: Executor,
  tenantId: string,
  endpointId: string,
  limit: number,
  offset: number,
): Promise<DeliveryListRow[]> {
  const page = endpointDeliveries(db, tenantId, endpointId)
    .select(['d.id', 'd.created_at'])
    .orderBy('d.created_at', 'desc')
    .orderBy('d.id', 'desc')
    .limit(limit)
    .offset(offset);
  return db
    .selectFrom(page.as('page'))
    .innerJoin('event_deliveries as d', 'd.id', 'page.id')
    .innerJoin('events as e', 'e.id', 'd.event_id')
    .selectAll('d')
    .select('e.type as event_type')
    .orderBy('page.created_at', 'desc')
    .orderBy('page.id', 'desc')
    .execute();
}

export async function countDeliveries(db: Executor, tenantId: string, endpointId: string): Promise<number> {
  const row = await endpointDeliveries(db, tenantId, endpointId)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export async function findDelivery(
  db: Executor,
  tenantId: string,
  endpointId: string,
  deliveryId: string,
): Promise<DeliveryListRow | undefined> {
  return deliveriesOf(db, tenantId, endpointId)
    .selectAll('d')
    .select('e.type as event_type')
    .where('d.id', '=', deliveryId)
    .executeTakeFirst();
}

export async function updateDelivery(
  db: Executor,
  tenantId: string,
  deliveryId: string,
  changes: Updateable<EventDeliveriesTable>,
) {
  return db
    .updateTable('event_deliveries')
    .set(changes)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', deliveryId)
    .returningAll()
    .executeTakeFirst();
}

function eventsOf(db: Executor, tenantId: string, since: Date, type: string | undefined) {
  let query = db.selectFrom('events').where('tenant_id', '=', tenantId).where('created_at', '>=', since);
  if (type !== undefined) query = query.where('type', '=', type);
  return query;
}

export async function listEvents(
  db: Executor,
  tenantId: string,
  filter: { since: Date; type?: string },
  limit: number,
  offset: number,
) {
  // The page's ids first, from events_tenant_created, then only those rows: a deep page skips
  // index entries, not events. The total is counted apart (countEvents: from the index alone
  // unless filtered by type).
  const page = eventsOf(db, tenantId, filter.since, filter.type)
    .select(['id', 'created_at'])
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset);
  return db
    .selectFrom(page.as('page'))
    .innerJoin('events', 'events.id', 'page.id')
    .selectAll('events')
    .orderBy('page.created_at', 'desc')
    .orderBy('page.id', 'desc')
    .execute();
}

export async function countEvents(db: Executor, tenantId: string, filter: { since: Date; type?: string }) {
  const row = await eventsOf(db, tenantId, filter.since, filter.type)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
