/**
 * What this process counts, in Prometheus terms (served by GET /metrics, routes.ts): request
 * latency by route pattern and status, rate-limit refusals, event delivery attempts and call
 * endings by outcome. Counters live in the process; with several processes (src/cluster.ts) the
 * primary sums them (cluster.ts). Node's own metrics (CPU, memory, event-loop delay, GC) are
 * collected once per process, however many service instances it builds (tests build many).
 */
import client from 'prom-client';
import { RATE_LIMIT_NAMES, type RateLimitName } from '../rate-limits/hooks.js';

/** What one event delivery attempt came to: delivered, to be tried again, or given up. */
const DELIVERY_OUTCOMES = ['succeeded', 'retrying', 'failed'] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];
const CALL_ENDINGS = ['completed', 'no_answer', 'failed'] as const;
export type CallEnding = (typeof CALL_ENDINGS)[number];

export interface Metrics {
  /** This service's counters (Node's own metrics are in `nodeRegistry()`). */
  readonly registry: client.Registry;
  observeRequest(method: string, route: string, statusCode: number, seconds: number): void;
  rateLimitRefused(limit: RateLimitName): void;
  eventDeliveryAttempted(outcome: DeliveryOutcome): void;
  callEnded(status: CallEnding): void;
}

/** Seconds: from a cached read (~1 ms) to a request that waited on a slow database. */
const LATENCY_BUCKETS = [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10];

let nodeMetrics: client.Registry | undefined;

/** Node's process metrics (prom-client's defaults), one registry per process. */
export function nodeRegistry(): client.Registry {
  if (!nodeMetrics) {
    nodeMetrics = new client.Registry();
    client.collectDefaultMetrics({ register: nodeMetrics });
  }
  return nodeMetrics;
}

export function createMetrics(): Metrics {
  const registry = new client.Registry();
  const requestSeconds = new client.Histogram({
    name: 'voiceplane_http_request_duration_seconds',
    help: 'Time from a request arriving to its answer being sent, by route pattern and status.',
    labelNames: ['method', 'route', 'status_code'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [registry],
  });
  const refusals = new client.Counter({
    name: 'voiceplane_rate_limit_refusals_total',
    help: 'Requests answered 429 rate_limited, by the limit that refused them.',
    labelNames: ['limit'] as const,
    registers: [registry],
  });
  const deliveries = new client.Counter({
    name: 'voiceplane_event_delivery_attempts_total',
    help: 'Event delivery attempts to partner endpoints: succeeded, retrying (failed, will be tried again) or failed (given up).',
    labelNames: ['outcome'] as const,
    registers: [registry],
  });
  const callsEnded = new client.Counter({
    name: 'voiceplane_calls_ended_total',
    help: 'Calls that reached a final status, by that status.',
    labelNames: ['status'] as const,
    registers: [registry],
  });
  // Every series exists from the start at 0, so a rate over them is defined before the first event.
  for (const limit of RATE_LIMIT_NAMES) refusals.labels(limit).inc(0);
  for (const outcome of DELIVERY_OUTCOMES) deliveries.labels(outcome).inc(0);
  for (const status of CALL_ENDINGS) callsEnded.labels(status).inc(0);

  return {
    registry,
    observeRequest(method, route, statusCode, seconds) {
      requestSeconds.labels(method, route, String(statusCode)).observe(seconds);
    },
    rateLimitRefused: (limit) => refusals.labels(limit).inc(),
    eventDeliveryAttempted: (outcome) => deliveries.labels(outcome).inc(),
    callEnded: (status) => callsEnded.labels(status).inc(),
  };
}
