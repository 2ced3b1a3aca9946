/**
 * event_delivery: how many events per second the service delivers to a receiver that answers 200
 * at once (a node:http server in this process; the service runs with WEBHOOK_ALLOW_PRIVATE=true
 * so it may post to 127.0.0.1). The bench tenant gets one endpoint subscribed to everything; a
 * backlog of events (as many as baseline_db_write writes in --duration seconds) is recorded in one
 * statement through the service's own outbox SQL (src/events/repository.ts recordEventsFrom),
 * then the service's job runner delivers them. The row: events delivered per second, from the
 * commit of the backlog to the last distinct webhook-id received; p50/p99: from the event's
 * created_at to its first arrival; CPU ms/req: the service's CPU time meanwhile per event delivered.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import pg from 'pg';
import { recordEventsFrom } from '../src/events/repository.js';
import type { LoadResult } from './load.js';
import { ratioBetween } from './report.js';
import type { CompoundResult, ScenarioRun } from './scenario-types.js';

/** Events recorded when baseline_db_write was not measured in this run (per measured second). */
const FALLBACK_BASE_RPS = 2000;
/** The backlog must be delivered within this many times --duration, or the run reports what arrived. */
const DELIVERY_TIMEOUT_FACTOR = 20;

export interface Receiver {
  url: string;
  /** First arrival (ms since the epoch) by webhook-id. */
  arrivals: Map<string, number>;
  requests: number;
  waitFor(count: number, timeoutMs: number): Promise<boolean>;
  close(): Promise<void>;
}

/** A receiver answering 200, at once or after `delayMs` (an endpoint that hangs). */
export async function startReceiver(delayMs = 0): Promise<Receiver> {
  let waiter: { count: number; resolve: (ok: boolean) => void } | undefined;
  const receiver: Receiver = {
    url: '',
    arrivals: new Map(),
    requests: 0,
    waitFor(count, timeoutMs) {
      if (receiver.arrivals.size >= count) return Promise.resolve(true);
      return new Promise((resolve) => {
        const timer = setTimeout(() => resolve(false), timeoutMs);
        waiter = {
          count,
          resolve: (ok) => {
            clearTimeout(timer);
            resolve(ok);
          },
        };
      });
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      receiver.requests += 1;
      const id = String(request.headers['webhook-id']);
      if (!receiver.arrivals.has(id)) receiver.arrivals.set(id, Date.now());
      if (delayMs > 0) setTimeout(() => response.writeHead(200).end(), delayMs);
      else response.writeHead(200).end();
      if (waiter && receiver.arrivals.size >= waiter.count) {
        const done = waiter;
        waiter = undefined;
        done.resolve(true);
      }
    });
  });
  server.keepAliveTimeout = 60_000;
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/events`;
  return receiver;
}

export async function createEndpoint(run: ScenarioRun, url: string): Promise<string> {
  const response = await fetch(`${run.baseUrl}/api/v1/webhook-endpoints`, {
    method: 'POST',
    headers: { authorization: `Bearer ${run.context.fixture.apiKey}`, 'content-type': 'application/json' },
    body: JSON.stringify({ url, events: ['*'], description: 'bench receiver' }),
  });
  const body = await response.text();
  if (response.status !== 201) throw new Error(`webhook endpoint: ${response.status} ${body.slice(0, 200)}`);
  return (JSON.parse(body) as { data: { id: string } }).data.id;
}

/**
 * Scenarios after this one (the multi-process run) must not record deliveries for the receiver,
 * which is gone by then: every call they queue would add three deliveries retried against a
 * closed port (the cluster run's webhook_trigger and calls_create measured ×0.32–0.35 of one
 * process with the endpoint left, ×0.73–0.77 without).
 */
export async function deleteEndpoint(run: ScenarioRun, id: string): Promise<void> {
  const response = await fetch(`${run.baseUrl}/api/v1/webhook-endpoints/${id}`, {
    method: 'DELETE',
    headers: { authorization: `Bearer ${run.context.fixture.apiKey}` },
  });
  if (!response.ok) run.log(`    (the bench endpoint ${id} was not deleted: ${response.status})`);
}

export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))];
}

/**
 * Records `count` user events (`<prefix>N` ids and emails) for the tenant in one statement, through
 * the service's own outbox SQL (`recordEventsFrom`), each stamped with the clock at its insert.
 */
export function recordUserEvents(
  client: pg.Client,
  tenantId: string,
  type: string,
  prefix: string,
  count: number,
) {
  return client.query<{ id: string; created_at: Date }>(
    `WITH new_event AS (
       SELECT $1::text AS tenant_id, $2::text AS type, clock_timestamp() AS created_at,
              jsonb_build_object('object', jsonb_build_object('id', 'usr_' || $3::text || g, 'email', $3::text || g || '@bench.example')) AS data
       FROM generate_series(1, $4::integer) g
     ), ${recordEventsFrom('new_event')}
     SELECT id, created_at FROM recorded_event`,
    [tenantId, type, prefix, count],
  );
}

export async function runEventDelivery(run: ScenarioRun): Promise<CompoundResult> {
  const baseRps = run.results.get('baseline_db_write')?.rps || FALLBACK_BASE_RPS;
  const count = Math.max(100, Math.round(baseRps * run.options.duration));
  const receiver = await startReceiver();
  const client = new pg.Client({ connectionString: run.context.databaseUrl });
  await client.connect();
  let endpointId: string | undefined;
  try {
    endpointId = await createEndpoint(run, receiver.url);
    const recorded = await recordUserEvents(
      client,
      run.context.fixture.tenantId,
      'user.created',
      'bench',
      count,
    );
    const committed = Date.now();
    const cpuBefore = run.cpuSeconds();
    run.log('');
    run.log(`    ${count} events recorded for endpoint ${endpointId}; delivering …`);
    const timeoutMs = Math.max(60, run.options.duration * DELIVERY_TIMEOUT_FACTOR) * 1000;
    const complete = await receiver.waitFor(count, timeoutMs);
    // The service's CPU (every thread) while it delivered: the job runner's claims and acknowledgements included.
    const cpuMs = (run.cpuSeconds() - cpuBefore) * 1000;
    const arrivals = [...receiver.arrivals.values()];
    const last = arrivals.length ? Math.max(...arrivals) : Date.now();
    const seconds = Math.max(0.001, (last - committed) / 1000);
    const rps = Math.round(receiver.arrivals.size / seconds);
    const lags = recorded.rows
      .map((row) => (receiver.arrivals.get(row.id) ?? Number.NaN) - row.created_at.getTime())
      .filter((lag) => Number.isFinite(lag))
      .sort((a, b) => a - b);
    run.log(
      `    ${receiver.arrivals.size}/${count} delivered in ${seconds.toFixed(1)} s (${rps}/s)` +
        `${complete ? '' : ' — NOT all delivered in time'}; ${receiver.requests - receiver.arrivals.size} repeats`,
    );
    const load: LoadResult = {
      rps,
      p50_ms: Math.round(percentile(lags, 0.5)),
      p99_ms: Math.round(percentile(lags, 0.99)),
      non2xx: count - receiver.arrivals.size,
      statuses: { '200': receiver.requests },
      errors: 0,
      cpu_ms_per_request: receiver.arrivals.size
        ? Math.round((cpuMs / receiver.arrivals.size) * 1000) / 1000
        : null,
    };
    return {
      load,
      ratio: ratioBetween(rps, baseRps),
      details: {
        events: count,
        delivered: receiver.arrivals.size,
        repeats: receiver.requests - receiver.arrivals.size,
        seconds: Math.round(seconds * 10) / 10,
        base_rps: baseRps,
        base: run.results.has('baseline_db_write') ? 'baseline_db_write' : `fixed ${FALLBACK_BASE_RPS} req/s`,
      },
    };
  } finally {
    if (endpointId) await deleteEndpoint(run, endpointId).catch(() => {});
    await client.end().catch(() => {});
    await receiver.close();
  }
}
