/**
 * event_latency (PostgreSQL only): what a partner's endpoint sees on a steady stream. Events are
 * recorded at EVENT_RATE per second (a batch every 100 ms, through the service's own outbox SQL,
 * src/events/repository.ts recordEventsFrom) for --duration seconds, and the latency of each is
 * its created_at to its first arrival at an endpoint answering 200 at once. Twice: with that
 * endpoint alone, then beside a second endpoint of the same tenant that answers only after
 * HANG_MS, subscribed to the same events. The row: the second run's p50/p99; details: both.
 */
import pg from 'pg';
import {
  createEndpoint,
  deleteEndpoint,
  percentile,
  type Receiver,
  recordUserEvents,
  startReceiver,
} from './event-delivery.js';
import type { LoadResult } from './load.js';
import type { CompoundResult, ScenarioRun } from './scenario-types.js';

export const EVENT_RATE = 500;
export const EVENT_P99_MS = 1000;
/** How long the hanging endpoint takes to answer. */
export const HANG_MS = 10_000;
const BATCH_EVERY_MS = 100;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

interface Stream {
  p50_ms: number;
  p99_ms: number;
  events: number;
  delivered: number;
  cpu_ms_per_event: number | null;
}

/** Records EVENT_RATE events a second for `seconds`; the fast receiver's latencies. */
async function stream(run: ScenarioRun, client: pg.Client, fast: Receiver, seconds: number): Promise<Stream> {
  const perBatch = Math.round((EVENT_RATE * BATCH_EVERY_MS) / 1000);
  const recorded: { id: string; created_at: Date }[] = [];
  const cpuBefore = run.cpuSeconds();
  const start = performance.now();
  const batches = Math.round((seconds * 1000) / BATCH_EVERY_MS);
  for (let n = 0; n < batches; n++) {
    const due = start + n * BATCH_EVERY_MS;
    const wait = due - performance.now();
    if (wait > 0) await sleep(wait);
    const result = await recordUserEvents(
      client,
      run.context.fixture.tenantId,
      'user.updated',
      'stream',
      perBatch,
    );
    recorded.push(...result.rows);
  }
  const all = await waitForAll(fast, recorded, Math.max(30, seconds * 3) * 1000);
  const cpuMs = (run.cpuSeconds() - cpuBefore) * 1000;
  const lags = recorded
    .map((row) => (fast.arrivals.get(row.id) ?? Number.NaN) - row.created_at.getTime())
    .filter((lag) => Number.isFinite(lag))
    .sort((a, b) => a - b);
  return {
    p50_ms: Math.round(percentile(lags, 0.5)),
    p99_ms: Math.round(percentile(lags, 0.99)),
    events: recorded.length,
    delivered: all,
    cpu_ms_per_event: lags.length ? Math.round((cpuMs / lags.length) * 1000) / 1000 : null,
  };
}

async function waitForAll(
  receiver: Receiver,
  recorded: { id: string }[],
  timeoutMs: number,
): Promise<number> {
  const deadline = Date.now() + timeoutMs;
  const arrived = () => recorded.filter((row) => receiver.arrivals.has(row.id)).length;
  while (arrived() < recorded.length && Date.now() < deadline) await sleep(100);
  return arrived();
}

export async function runEventLatency(run: ScenarioRun): Promise<CompoundResult> {
  const fast = await startReceiver();
  const hanging = await startReceiver(HANG_MS);
  const client = new pg.Client({ connectionString: run.context.databaseUrl });
  await client.connect();
  const endpoints: string[] = [];
  try {
    endpoints.push(await createEndpoint(run, fast.url));
    run.log('');
    const alone = await stream(run, client, fast, run.options.duration);
    run.log(
      `    ${EVENT_RATE} events/s, one endpoint: ${alone.delivered}/${alone.events} delivered, p50 ${alone.p50_ms} ms, p99 ${alone.p99_ms} ms`,
    );
    endpoints.push(await createEndpoint(run, hanging.url));
    const beside = await stream(run, client, fast, run.options.duration);
    run.log(
      `    beside an endpoint answering after ${HANG_MS / 1000} s: ${beside.delivered}/${beside.events} delivered, p50 ${beside.p50_ms} ms, p99 ${beside.p99_ms} ms (the hanging one got ${hanging.arrivals.size})`,
    );
    const load: LoadResult = {
      rps: Math.round(beside.delivered / run.options.duration),
      p50_ms: beside.p50_ms,
      p99_ms: beside.p99_ms,
      non2xx: beside.events - beside.delivered + (alone.events - alone.delivered),
      statuses: { '200': fast.requests },
      errors: 0,
      cpu_ms_per_request: beside.cpu_ms_per_event,
    };
    return {
      load,
      ratio: null,
      details: { rate: EVENT_RATE, hang_ms: HANG_MS, alone, beside, hanging_received: hanging.arrivals.size },
    };
  } finally {
    // Deleting the endpoints drops the deliveries still owed to them.
    for (const id of endpoints) await deleteEndpoint(run, id).catch(() => {});
    await client.end().catch(() => {});
    await fast.close();
    await hanging.close();
  }
}
