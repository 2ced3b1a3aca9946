/**
 * Sending one event delivery: the `events.deliver` job. Each delivery is its own job, so the
 * worker sends a batch concurrently and a slow endpoint holds only its own request (at most the
 * 10 s timeout). The delivery row, not the job, is the truth: it counts attempts, holds the next
 * attempt's time (the job's run_at follows it) and stops at `failed` after the last retry.
 *
 * Signing follows Standard Webhooks with the `standardwebhooks` package itself, so partners
 * verify with it (or svix) unchanged. `webhook-id` is the event id on every attempt.
 */
import http from 'node:http';
import https from 'node:https';
import { Webhook } from 'standardwebhooks';
import { type Clock, systemClock } from '../core/clock.js';
import type { Db } from '../core/db.js';
import { type Job, type JobKeyLimit, RetryJobError } from '../core/jobs.js';
import type { SecretBox } from '../core/secrets.js';
import { loadDeliveryAttempt } from './attempt-repository.js';
import { type EndpointRow, type EventRow, updateDelivery, updateEndpoint } from './repository.js';
import { checkWebhookUrl, type HostResolver, lookupFor, type ResolvedAddress } from './ssrf.js';

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
/** The most of an answer read: only its status matters. */
const MAX_ANSWER_BYTES = 4096;

export interface DeliveryJobPayload {
  delivery_id: string;
  /** The endpoint, so the job runner can cap its deliveries in flight (absent on older jobs). */
  endpoint_id?: string;
}

/**
 * Deliveries to one endpoint in flight at once in one process. More of them wait in line while
 * the endpoint answers, and go back to the queue for a little later when it does not (a dead or
 * hanging endpoint): it holds this many of the job runner's slots, never all of them.
 */
export const ENDPOINT_CONCURRENCY = 10;

/** The job runner's limit for the delivery queue: by endpoint (src/core/key-gate.ts). */
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

/** The signing secrets in force: the current one, and the previous one until it expires. */
export function signingSecrets(endpoint: EndpointRow, secrets: SecretBox, now: Date): string[] {
  const current = [secrets.open(endpoint.secret_sealed, secretContext(endpoint.id, 'current'))];
  if (
    endpoint.previous_secret_sealed &&
    endpoint.previous_secret_expires_at &&
    endpoint.previous_secret_expires_at > now
  ) {
    current.push(secrets.open(endpoint.previous_secret_sealed, secretContext(endpoint.id, 'previous')));
  }
  return current;
}

type Outcome = { status: number } | { error: string };

/** One POST to the checked addresses: no redirects, a deadline, at most 4 KiB of the answer read. */
function post(
  url: URL,
  addresses: ResolvedAddress[],
  headers: Record<string, string>,
  body: string,
  timeoutMs: number,
): Promise<Outcome> {
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve) => {
    let settled = false;
    const finish = (outcome: Outcome) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      request.destroy();
      resolve(outcome);
    };
    const request = client.request(
      url,
      { method: 'POST', headers, lookup: lookupFor(addresses), agent: false },
      (response) => {
        const status = response.statusCode ?? 0;
        let received = 0;
        response.on('data', (chunk: Buffer) => {
          received += chunk.length;
          if (received >= MAX_ANSWER_BYTES) finish({ status });
        });
        response.on('end', () => finish({ status }));
        response.on('error', () => finish({ status }));
      },
    );
    const timer = setTimeout(() => finish({ error: `no answer within ${timeoutMs} ms` }), timeoutMs);
    request.on('error', (error) => finish({ error: error.message }));
    request.end(body);
  });
}

export interface EventDeliveryDeps {
  db: Db;
  clock: Clock;
  secrets: SecretBox;
  allowPrivate: boolean;
  resolve: HostResolver;
  timeoutMs?: number;
}

export function createEventDelivery(deps: EventDeliveryDeps) {
  const { db, clock, secrets } = deps;
  const timeoutMs = deps.timeoutMs ?? DELIVERY_TIMEOUT_MS;

  async function attempt(endpoint: EndpointRow, event: EventRow): Promise<Outcome> {
    // Checked again at each attempt: the name may resolve elsewhere since the endpoint was saved.
    const checked = await checkWebhookUrl(endpoint.url, {
      allowPrivate: deps.allowPrivate,
      resolve: deps.resolve,
    });
    if (!checked.ok) return { error: `refused: url ${checked.issue}` };
    const body = eventBody(event);
    // The signature's timestamp is the wall clock: receivers compare it with theirs.
    const sentAt = systemClock.now();
    const signature = signingSecrets(endpoint, secrets, clock.now())
      .map((secret) => new Webhook(secret).sign(event.id, sentAt, body))
      .join(' ');
    const headers = {
      'content-type': 'application/json',
      'user-agent': 'voiceplane-webhooks/1',
      'webhook-id': event.id,
      'webhook-timestamp': String(Math.floor(sentAt.getTime() / 1000)),
      'webhook-signature': signature,
    };
    return post(checked.url, checked.addresses, headers, body, timeoutMs);
  }

  return async function deliver(job: Job<DeliveryJobPayload>): Promise<void> {
    const loaded = await loadDeliveryAttempt(db, job.payload.delivery_id);
    if (loaded?.delivery.status !== 'pending') return;
    const { delivery, endpoint, event } = loaded;
    const tenantId = delivery.tenant_id;
    if (endpoint.deleted_at || !endpoint.enabled) {
      await updateDelivery(db, tenantId, delivery.id, { status: 'failed', next_attempt_at: null });
      return;
    }
    const outcome = await attempt(endpoint, event);
    const at = clock.now();
    const attempts = delivery.attempts + 1;
    const code = 'status' in outcome ? outcome.status : null;
    if (code !== null && code >= 200 && code < 300) {
      const succeeded = {
        status: 'succeeded',
        attempts,
        last_attempt_at: at,
        last_response_code: code,
        next_attempt_at: null,
      } as const;
      // The usual case is one statement; an endpoint answering again also clears its failing_since.
      if (!endpoint.failing_since) {
        await updateDelivery(db, tenantId, delivery.id, succeeded);
        return;
      }
      await db.transaction().execute(async (tx) => {
        await updateDelivery(tx, tenantId, delivery.id, succeeded);
        await updateEndpoint(tx, tenantId, endpoint.id, { failing_since: null });
      });
      return;
    }
    const delay = RETRY_SCHEDULE_MS[attempts - 1];
    const failingSince = endpoint.failing_since ?? at;
    const disable = at.getTime() - failingSince.getTime() >= DISABLE_AFTER_MS;
    await db.transaction().execute(async (tx) => {
      await updateDelivery(tx, tenantId, delivery.id, {
        status: delay === undefined || disable ? 'failed' : 'pending',
        attempts,
        last_attempt_at: at,
        last_response_code: code,
        next_attempt_at: delay === undefined || disable ? null : new Date(at.getTime() + delay),
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
  };
}
