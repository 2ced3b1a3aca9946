/**
 * Sending one event delivery: the `events.deliver` job. Each delivery is its own job, so the
 * worker sends a batch concurrently and a slow endpoint holds only its own request (at most the
 * 10 s timeout). The delivery row, not the job, is the truth: it counts attempts, holds the next
 * attempt's time (the job's run_at follows it) and stops at `failed` after the last retry.
 *
 * Signing follows Standard Webhooks with the `standardwebhooks` package itself, so partners
 * verify with it (or svix) unchanged. `webhook-id` is the event id on every attempt.
 *
 * The job runner starts a claim's jobs in the same turn, so their loads are one query and their
 * successes one UPDATE (`coalesce`); the POSTs go over kept-alive connections (./connections.ts).
 */
import { Webhook } from 'standardwebhooks';
import { BoundedMap } from '../core/bounded-map.js';
import { type Clock, systemClock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import { coalesce } from '../core/jobs/batching.js';
import { type Job, type JobKeyLimit, RetryJobError } from '../core/jobs/runner.js';
import type { HostResolver } from '../core/security/outbound-addresses.js';
import type { SecretBox } from '../core/security/secrets.js';
import {
  type DeliveryAttempt,
  type DeliverySuccess,
  type Exchange,
  loadDeliveryAttempts,
  markDeliveriesSucceeded,
} from './attempt-repository.js';
import { createEndpointConnections, type PostOutcome } from './connections.js';
import { type EndpointRow, type EventRow, updateDelivery, updateEndpoint } from './repository.js';
import type { DeliveryJobPayload } from './schemas.js';
import { checkWebhookUrl } from './ssrf.js';

/** Delays before retries 1 … 7 (platform contract §3); after the 8th attempt the delivery fails. */
export const RETRY_SCHEDULE_MS = [
  5_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  10 * 3_600_000,
];
/** An endpoint failing for this long is disabled. */
export const DISABLE_AFTER_MS = 3 * 24 * 3_600_000;
export const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * Deliveries to one endpoint in flight at once in one process. More of them wait in line while
 * the endpoint answers, and go back to the queue for a little later when it does not (a dead or
 * hanging endpoint): it holds this many of the job runner's slots, never all of them. 32 of the
 * default 100: one endpoint's rate is this over a delivery's round trip (load, POST, success
 * write), and 16 gave two thirds of 32's rate on the bench; two hung endpoints still leave 36
 * slots to the rest (docs/events.md).
 */
export const ENDPOINT_CONCURRENCY = 32;

/** The job runner's limit for the delivery queue: by endpoint (src/core/jobs/key-gate.ts). */
export const deliveryLimit: JobKeyLimit = {
  key: (job: Job<DeliveryJobPayload>) => job.payload?.endpoint_id,
  max: ENDPOINT_CONCURRENCY,
};

export const secretContext = (endpointId: string, which: 'current' | 'previous') =>
  `webhook_endpoints.${which}:${endpointId}`;

/** The body partners receive: `{ id, type, created_at, data: { object } }`. */
export function eventBody(event: EventRow): string {
  return JSON.stringify({
    id: event.id,
    type: event.type,
    created_at: event.created_at.toISOString(),
    data: event.data,
  });
}

/** PostgreSQL text holds no NUL character: an answer's are shown as U+FFFD. */
const storable = (text: string) => text.replaceAll('\u0000', '\uFFFD');

/** What the delivery log keeps of an attempt: the request's headers, the answer's (or why none came). */
function exchangeOf(requestHeaders: Record<string, string>, outcome: PostOutcome): Exchange {
  if ('error' in outcome) {
    return { requestHeaders, responseHeaders: null, responseBody: null, error: storable(outcome.error) };
  }
  return {
    requestHeaders,
    responseHeaders: outcome.headers,
    responseBody: storable(outcome.body),
    error: null,
  };
}

export interface EventDeliveryDeps {
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  allowPrivate: boolean;
  resolve: HostResolver;
  timeoutMs?: number;
  /** Told the outcome of each attempt made (the metrics' counter). */
  onAttempt?: (outcome: 'succeeded' | 'retrying' | 'failed') => void;
}

export interface EventDelivery {
  /** The `events.deliver` job handler. */
  deliver(job: Job<DeliveryJobPayload>): Promise<void>;
  /** Closes the kept-alive connections (idle ones now, busy ones when their request ends). */
  close(): void;
  /** Connection agents held (one per endpoint and checked address set): for tests. */
  readonly connectionAgents: number;
}

/** Opened secrets kept as signers, by place and sealed value: a rotation's new value is a new key. */
const MAX_SIGNERS = 1000;

export function createEventDelivery(deps: EventDeliveryDeps): EventDelivery {
  const { db, clock, secrets } = deps;
  const timeoutMs = deps.timeoutMs ?? DELIVERY_TIMEOUT_MS;
  const connections = createEndpointConnections({ maxSockets: ENDPOINT_CONCURRENCY });
  const signers = new BoundedMap<string, Webhook>({ maxEntries: MAX_SIGNERS, order: 'use' });

  const loadAttempt = coalesce(async (deliveryIds: string[]) => {
    const loaded = await loadDeliveryAttempts(db, deliveryIds);
    return deliveryIds.map((id): DeliveryAttempt | undefined => loaded.get(id));
  });
  const markSucceeded = coalesce(async (successes: DeliverySuccess[]) => {
    await markDeliveriesSucceeded(db, successes);
    return successes.map(() => undefined);
  });

  function signer(sealed: string, context: string): Webhook {
    const key = `${context}\n${sealed}`;
    let found = signers.get(key);
    if (!found) {
      found = new Webhook(secrets.open(sealed, context));
      signers.set(key, found);
    }
    return found;
  }

  /** The signers in force: the current secret's, and the previous one's until it expires. */
  function signersOf(endpoint: EndpointRow, now: Date): Webhook[] {
    const current = [signer(endpoint.secret_sealed, secretContext(endpoint.id, 'current'))];
    if (
      endpoint.previous_secret_sealed &&
      endpoint.previous_secret_expires_at &&
      endpoint.previous_secret_expires_at > now
    ) {
      current.push(signer(endpoint.previous_secret_sealed, secretContext(endpoint.id, 'previous')));
    }
    return current;
  }

  async function attempt(
    endpoint: EndpointRow,
    event: EventRow,
  ): Promise<{ outcome: PostOutcome; requestHeaders: Record<string, string> }> {
    const body = eventBody(event);
    // Checked again at each attempt: the name may resolve elsewhere since the endpoint was saved.
    const checked = await checkWebhookUrl(endpoint.url, {
      allowPrivate: deps.allowPrivate,
      resolve: deps.resolve,
    });
    if (!checked.ok) return { outcome: { error: `refused: url ${checked.issue}` }, requestHeaders: {} };
    // The signature's timestamp is the wall clock: receivers compare it with theirs.
    const sentAt = systemClock.now();
    const signature = signersOf(endpoint, clock.now())
      .map((webhook) => webhook.sign(event.id, sentAt, body))
      .join(' ');
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'voiceplane-webhooks/1',
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': signature,
    };
    const outcome = await connections.post({
      endpointId: endpoint.id,
      url: checked.url,
      addresses: checked.addresses,
      headers,
      body,
      timeoutMs,
    });
    return { outcome, requestHeaders: headers };
  }

  async function deliver(job: Job<DeliveryJobPayload>): Promise<void> {
    const loaded = await loadAttempt(job.payload.delivery_id);
    if (loaded?.delivery.status !== 'pending') return;
    const { delivery, endpoint, event } = loaded;
    const tenantId = delivery.tenant_id;
    if (endpoint.deleted_at || !endpoint.enabled) {
      await updateDelivery(db, tenantId, delivery.id, { status: 'failed', next_attempt_at: null });
      return;
    }
    const { outcome, requestHeaders } = await attempt(endpoint, event);
    const at = clock.now();
    const attempts = delivery.attempts + 1;
    const code = 'status' in outcome ? outcome.status : null;
    const exchange = exchangeOf(requestHeaders, outcome);
    if (code !== null && code >= 200 && code < 300) {
      deps.onAttempt?.('succeeded');
      // The usual case is one statement for the batch; an endpoint answering again also clears
      // its failing_since.
      if (!endpoint.failing_since) {
        await markSucceeded({
          tenantId,
          deliveryId: delivery.id,
          attempts,
          at,
          responseCode: code,
          exchange,
        });
        return;
      }
      await db.transaction().execute(async (tx) => {
        await markDeliveriesSucceeded(tx, [
          { tenantId, deliveryId: delivery.id, attempts, at, responseCode: code, exchange },
        ]);
        await updateEndpoint(tx, tenantId, endpoint.id, { failing_since: null });
      });
      return;
    }
    const delay = RETRY_SCHEDULE_MS[attempts - 1];
    const failingSince = endpoint.failing_since ?? at;
    const disable = at.getTime() - failingSince.getTime() >= DISABLE_AFTER_MS;
    deps.onAttempt?.(delay === undefined || disable ? 'failed' : 'retrying');
    await db.transaction().execute(async (tx) => {
      await updateDelivery(tx, tenantId, delivery.id, {
        status: delay === undefined || disable ? 'failed' : 'pending',
        attempts,
        last_attempt_at: at,
        last_response_code: code,
        next_attempt_at: delay === undefined || disable ? null : new Date(at.getTime() + delay),
        last_request_headers: JSON.stringify(exchange.requestHeaders),
        last_response_headers: exchange.responseHeaders && JSON.stringify(exchange.responseHeaders),
        last_response_body: exchange.responseBody,
        last_error: exchange.error,
      });
      if (!endpoint.failing_since || disable) {
        await updateEndpoint(tx, tenantId, endpoint.id, {
          failing_since: failingSince,
          ...(disable ? { enabled: false, updated_at: at } : {}),
        });
      }
    });
    if (delay !== undefined && !disable) {
      const reason = 'status' in outcome ? `HTTP ${outcome.status}` : outcome.error;
      throw new RetryJobError(`event delivery ${delivery.id} attempt ${attempts}: ${reason}`, delay);
    }
  }

  return {
    deliver,
    close: () => connections.close(),
    get connectionAgents() {
      return connections.agents;
    },
  };
}
