/**
 * Event webhooks (platform contract §3): a tenant's endpoints with their sealed signing secrets,
 * the delivery log with manual retry, and the list of recent events. Recording events is
 * ./record.ts; sending them is ./delivery.ts.
 */

import crypto from 'node:crypto';
import { type AuditChange, recordAudit, writeAudited } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import type { Db, Executor } from '../core/db/database.js';
import { listPage, listPageCountedApart } from '../core/db/pagination.js';
import { ApiError, type FieldIssue, notFound, validationFailed } from '../core/errors.js';
import { type AnswerRecorder, recordAnswer } from '../core/idempotency/answer.js';
import type { IdempotencyStore } from '../core/idempotency/store.js';
import { newId } from '../core/ids.js';
import type { HostResolver } from '../core/security/outbound-addresses.js';
import type { SecretBox } from '../core/security/secrets.js';
import { eventBody, secretContext } from './delivery.js';
import { insertDelivery, insertTestDelivery, latestEvents } from './manual-repository.js';
import {
  countDeliveries,
  countEndpoints,
  countEvents,
  type DeliveryListRow,
  type EndpointRow,
  findDelivery,
  findEndpoint,
  insertEndpoint,
  listDeliveries,
  listEndpoints,
  listEvents,
  scheduleDelivery,
  updateDelivery,
  updateEndpoint,
} from './repository.js';
import type {
  CreateEndpointBody,
  Delivery,
  DeliveryDetail,
  Event,
  ListDeliveriesQuery,
  ListEndpointsQuery,
  ListEventsQuery,
  UpdateEndpointBody,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from './schemas.js';
import { firstBytes, type ManualDelivery, toDelivery, toEndpoint, toEvent } from './serializers.js';
import { checkWebhookUrl } from './ssrf.js';

/** How long the old secret keeps signing beside the new one after a rotation. */
export const ROTATION_OVERLAP_MS = 24 * 3_600_000;
/** GET /events reaches this far back. */
export const EVENT_RETENTION_MS = 30 * 24 * 3_600_000;

/** `whsec_` + base64 of 32 random bytes: the form Standard Webhooks libraries accept as is. */
export function newSigningSecret(): string {
  return `whsec_${crypto.randomBytes(32).toString('base64')}`;
}

export {
  DETAIL_BODY_BYTES,
  deliveryAnswer,
  type ManualDelivery,
  toEndpoint,
  toEvent,
} from './serializers.js';

const missing = () => notFound('Webhook endpoint');

export function createEventService(deps: {
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  allowPrivate: boolean;
  resolve: HostResolver;
  /** Stores a test event's or a resend's answer with it, for an Idempotency-Key or a form key. */
  idempotency?: IdempotencyStore;
  /** Wakes this process's worker after a manual retry. */
  onQueued?: () => void;
}) {
  const { db, clock, secrets } = deps;

  /**
   * What the schema cannot check, the URL's host (resolved: never a private address unless
   * allowed), reported with the schema's own issues (`schemaIssues`, from a route that took them)
   * so that every offending field is named at once. A URL the schema already refused is not asked.
   */
  async function checkEndpoint(input: { url?: unknown }, schemaIssues: FieldIssue[]): Promise<void> {
    const issues = [...schemaIssues];
    const urlRefused = issues.some((issue) => issue.field === 'url');
    if (!urlRefused && typeof input.url === 'string') {
      const options = { allowPrivate: deps.allowPrivate, resolve: deps.resolve };
      const checked = await checkWebhookUrl(input.url, options);
      if (!checked.ok) issues.push({ field: 'url', issue: checked.issue });
    }
    if (issues.length > 0) throw validationFailed(issues);
  }

  async function endpointOf(tenantId: string, id: string): Promise<EndpointRow> {
    const row = await findEndpoint(db, tenantId, id);
    if (!row) throw missing();
    return row;
  }

  /** A delivery made by hand goes only to an endpoint that is on: a disabled one sends nothing. */
  function refuseDisabled(endpoint: EndpointRow): void {
    if (!endpoint.enabled) {
      throw new ApiError('conflict', 'This endpoint is disabled: enable it first, then send to it.');
    }
  }

  async function manualDelivery(
    tenantId: string,
    endpointId: string,
    recorder: AnswerRecorder<ManualDelivery> | undefined,
    action: 'webhook_endpoint.test_sent' | 'webhook_delivery.resent',
    write: (tx: Executor, endpoint: EndpointRow, at: Date) => Promise<DeliveryListRow>,
  ): Promise<ManualDelivery> {
    const made = await db.transaction().execute(async (tx) => {
      const endpoint = await findEndpoint(tx, tenantId, endpointId, { forUpdate: true });
      if (!endpoint) throw missing();
      refuseDisabled(endpoint);
      const at = clock.now();
      const row = await write(tx, endpoint, at);
      const objectType = 'webhook_delivery';
      await recordAudit(tx, { action, tenantId, objectType, objectId: row.id, fields: [], at });
      const delivery = { ...toDelivery(row), endpoint_id: endpoint.id };
      if (recorder && deps.idempotency) await recordAnswer(deps.idempotency, tx, recorder, delivery);
      return delivery;
    });
    deps.onQueued?.();
    return made;
  }

  return {
    /** `schemaIssues`: what the route's schema found wrong, reported with this check's (422). */
    async create(
      tenantId: string,
      input: CreateEndpointBody,
      schemaIssues: FieldIssue[] = [],
    ): Promise<WebhookEndpointWithSecret> {
      await checkEndpoint(input, schemaIssues);
      const id = newId('we');
      const secret = newSigningSecret();
      const now = clock.now();
      const row = await writeAudited(
        db,
        (executor) =>
          insertEndpoint(executor, {
            id,
            tenant_id: tenantId,
            url: input.url,
            events: input.events,
            description: input.description ?? null,
            enabled: input.enabled ?? true,
            failing_since: null,
            secret_sealed: secrets.seal(secret, secretContext(id, 'current')),
            previous_secret_sealed: null,
            previous_secret_expires_at: null,
            created_at: now,
            updated_at: now,
            deleted_at: null,
          }),
        () => endpointChange('webhook_endpoint.created', tenantId, id, Object.keys(input), now),
      );
      return { ...toEndpoint(row), secret };
    },

    async list(tenantId: string, query: ListEndpointsQuery) {
      return listPage(
        query,
        (limit, offset) => listEndpoints(db, tenantId, limit, offset),
        () => countEndpoints(db, tenantId),
        toEndpoint,
      );
    },

    async get(tenantId: string, id: string): Promise<WebhookEndpoint> {
      return toEndpoint(await endpointOf(tenantId, id));
    },

    async update(
      tenantId: string,
      id: string,
      input: UpdateEndpointBody,
      schemaIssues: FieldIssue[] = [],
    ): Promise<WebhookEndpoint> {
      await checkEndpoint(input, schemaIssues);
      const now = clock.now();
      const row = await writeAudited(
        db,
        (executor) =>
          updateEndpoint(executor, tenantId, id, {
            ...(input.url !== undefined ? { url: input.url } : {}),
            ...(input.events !== undefined ? { events: input.events } : {}),
            ...(input.description !== undefined ? { description: input.description } : {}),
            // Turning an endpoint back on starts its failure count afresh.
            ...(input.enabled !== undefined ? { enabled: input.enabled } : {}),
            ...(input.enabled === true ? { failing_since: null } : {}),
            updated_at: now,
          }),
        (updated) =>
          updated && endpointChange('webhook_endpoint.updated', tenantId, id, Object.keys(input), now),
      );
      if (!row) throw missing();
      return toEndpoint(row);
    },

    async remove(tenantId: string, id: string): Promise<WebhookEndpoint> {
      const now = clock.now();
      const row = await writeAudited(
        db,
        (executor) =>
          updateEndpoint(executor, tenantId, id, { deleted_at: now, enabled: false, updated_at: now }),
        (removed) => removed && endpointChange('webhook_endpoint.deleted', tenantId, id, [], now),
      );
      if (!row) throw missing();
      return toEndpoint(row);
    },

    /** A new secret; the old one keeps signing beside it for ROTATION_OVERLAP_MS. */
    async rotateSecret(tenantId: string, id: string): Promise<WebhookEndpointWithSecret> {
      const secret = newSigningSecret();
      const row = await db.transaction().execute(async (tx) => {
        const current = await findEndpoint(tx, tenantId, id, { forUpdate: true });
        if (!current) throw missing();
        const now = clock.now();
        const old = secrets.open(current.secret_sealed, secretContext(id, 'current'));
        await recordAudit(
          tx,
          endpointChange('webhook_endpoint.secret_rotated', tenantId, id, ['secret'], now),
        );
        return updateEndpoint(tx, tenantId, id, {
          secret_sealed: secrets.seal(secret, secretContext(id, 'current')),
          previous_secret_sealed: secrets.seal(old, secretContext(id, 'previous')),
          previous_secret_expires_at: new Date(now.getTime() + ROTATION_OVERLAP_MS),
          updated_at: now,
        });
      });
      if (!row) throw missing();
      return { ...toEndpoint(row), secret };
    },

    async listDeliveries(tenantId: string, endpointId: string, query: ListDeliveriesQuery) {
      await endpointOf(tenantId, endpointId);
      return listPageCountedApart(
        query,
        (limit, offset) => listDeliveries(db, tenantId, endpointId, limit, offset),
        () => countDeliveries(db, tenantId, endpointId),
        toDelivery,
      );
    },

    /** Sends the delivery again now (same event, same webhook-id), whatever its status. */
    async retryDelivery(tenantId: string, endpointId: string, deliveryId: string): Promise<Delivery> {
      await endpointOf(tenantId, endpointId);
      const now = clock.now();
      const row = await db.transaction().execute(async (tx) => {
        const found = await findDelivery(tx, tenantId, endpointId, deliveryId);
        if (!found) throw notFound('Delivery');
        await updateDelivery(tx, tenantId, deliveryId, { status: 'pending', next_attempt_at: now });
        await scheduleDelivery(tx, tenantId, { id: deliveryId, endpointId }, now);
        await recordAudit(tx, {
          action: 'webhook_delivery.retried',
          tenantId,
          objectType: 'webhook_delivery',
          objectId: deliveryId,
          fields: ['status'],
          at: now,
        });
        return findDelivery(tx, tenantId, endpointId, deliveryId);
      });
      if (!row) throw notFound('Delivery');
      deps.onQueued?.();
      return toDelivery(row);
    },

    /** One delivery with what its last attempt sent and got back (bodies cut to 4 KiB). */
    async getDelivery(tenantId: string, endpointId: string, deliveryId: string): Promise<DeliveryDetail> {
      await endpointOf(tenantId, endpointId);
      const row = await findDelivery(db, tenantId, endpointId, deliveryId);
      if (!row) throw notFound('Delivery');
      const event = await db
        .selectFrom('events')
        .selectAll()
        .where('tenant_id', '=', tenantId)
        .where('id', '=', row.event_id)
        .executeTakeFirstOrThrow();
      return {
        ...toDelivery(row),
        request: row.last_request_headers
          ? { headers: row.last_request_headers, body: firstBytes(eventBody(event)) }
          : null,
        response:
          row.last_response_code !== null && row.last_response_headers
            ? {
                status: row.last_response_code,
                headers: row.last_response_headers,
                body: row.last_response_body ?? '',
              }
            : null,
        error: row.last_error,
      };
    },

    /**
     * Sends the endpoint a `webhook.test` event (the endpoint as `data.object`) through the delivery
     * queue: signed and retried like any event. A disabled endpoint is 409.
     */
    async sendTest(
      tenantId: string,
      endpointId: string,
      recorder?: AnswerRecorder<ManualDelivery>,
    ): Promise<ManualDelivery> {
      return manualDelivery(
        tenantId,
        endpointId,
        recorder,
        'webhook_endpoint.test_sent',
        (tx, endpoint, at) => insertTestDelivery(tx, tenantId, endpoint.id, toEndpoint(endpoint), at),
      );
    },

    /**
     * A new delivery of the delivery's event to the same endpoint (the same `webhook-id`), with its
     * own attempts and log; the first stays as it was. A disabled endpoint is 409.
     */
    async resendDelivery(
      tenantId: string,
      endpointId: string,
      deliveryId: string,
      recorder?: AnswerRecorder<ManualDelivery>,
    ): Promise<ManualDelivery> {
      return manualDelivery(
        tenantId,
        endpointId,
        recorder,
        'webhook_delivery.resent',
        async (tx, endpoint, at) => {
          const original = await findDelivery(tx, tenantId, endpoint.id, deliveryId);
          if (!original) throw notFound('Delivery');
          return insertDelivery(
            tx,
            tenantId,
            {
              endpointId: endpoint.id,
              eventId: original.event_id,
              eventType: original.event_type,
              resentFrom: original.id,
            },
            at,
          );
        },
      );
    },

    /** The tenant's latest events, newest first (the overview's recent activity). */
    async recent(tenantId: string, limit = 10): Promise<Event[]> {
      return (await latestEvents(db, tenantId, limit)).map((row) => toEvent({ ...row, tenant_id: tenantId }));
    },

    async listEvents(tenantId: string, query: ListEventsQuery) {
      const filter = { since: new Date(clock.now().getTime() - EVENT_RETENTION_MS), type: query.type };
      return listPageCountedApart(
        query,
        (limit, offset) => listEvents(db, tenantId, filter, limit, offset),
        () => countEvents(db, tenantId, filter),
        toEvent,
      );
    },
  };
}

export type EventService = ReturnType<typeof createEventService>;

function endpointChange(
  action: string,
  tenantId: string,
  endpointId: string,
  fields: string[],
  at: Date,
): AuditChange {
  return { action, tenantId, objectType: 'webhook_endpoint', objectId: endpointId, fields, at };
}
