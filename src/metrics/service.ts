/**
 * One scrape of GET /metrics: this process's counters (or, under src/cluster.ts, every process's,
 * summed by the primary) followed by what the database holds now: each job queue's depth and
 * the age of its oldest due job, and the calls not yet final by status. When the database does
 * not answer, the scrape still answers with the process metrics and `voiceplane_database_up 0`.
 */
import client from 'prom-client';
import type { Clock } from '../core/clock.js';
import type { Executor } from '../core/db/database.js';
import { clusterProcessMetrics, inClusterWorker } from './cluster.js';
import type { Metrics } from './registry.js';
import { nodeRegistry } from './registry.js';
import { countLiveCalls, LIVE_CALL_STATUSES, type QueueState, readQueueStates } from './repository.js';

export interface MetricsScrape {
  contentType: string;
  body: string;
}

export interface MetricsService {
  scrape(): Promise<MetricsScrape>;
}

export interface MetricsServiceDeps {
  db: Executor;
  clock: Clock;
  metrics: Metrics;
  /** The queues this service runs: each is reported, at 0 when empty. */
  queues: readonly string[];
  /** How long a scrape waits for the database (default DATABASE_READ_DEADLINE_MS). */
  databaseDeadlineMs?: number;
}

/** This process's metrics; under src/cluster.ts every worker's, gathered by the primary (cluster.ts). */
function processMetricsOf(metrics: Metrics): () => Promise<string> {
  const registries = [nodeRegistry(), metrics.registry];
  const local = async () => (await Promise.all(registries.map((registry) => registry.metrics()))).join('\n');
  return inClusterWorker() ? clusterProcessMetrics(registries, local) : local;
}

interface DatabaseReading {
  now: Date;
  queues: Map<string, QueueState>;
  calls: Awaited<ReturnType<typeof countLiveCalls>>;
}

/** A registry of its own per scrape: two scrapes at once never see each other's values. */
function databaseRegistry(queues: Iterable<string>, reading: DatabaseReading | undefined): client.Registry {
  const registry = new client.Registry();
  const registers = [registry];
  new client.Gauge({
    name: 'voiceplane_database_up',
    help: '1 when the database answered this scrape, 0 when it did not (the job and call gauges are then absent).',
    registers,
  }).set(reading ? 1 : 0);
  if (!reading) return registry;
  const jobs = new client.Gauge({
    name: 'voiceplane_jobs',
    help: 'Background jobs by queue and state: due (waiting for a worker), scheduled (for later: retries, maintenance) and running.',
    labelNames: ['queue', 'state'] as const,
    registers,
  });
  const oldestDue = new client.Gauge({
    name: 'voiceplane_job_oldest_due_age_seconds',
    help: 'How long the oldest due job of each queue has been waiting for a worker (0 when none waits).',
    labelNames: ['queue'] as const,
    registers,
  });
  const liveCalls = new client.Gauge({
    name: 'voiceplane_calls',
    help: 'Calls not yet final, by status (final ones are counted by voiceplane_calls_ended_total).',
    labelNames: ['status'] as const,
    registers,
  });
  const { now } = reading;
  for (const queue of new Set([...queues, ...reading.queues.keys()])) {
    const state = reading.queues.get(queue);
    jobs.labels(queue, 'due').set(state?.due ?? 0);
    jobs.labels(queue, 'scheduled').set(state?.scheduled ?? 0);
    jobs.labels(queue, 'running').set(state?.running ?? 0);
    const waitingSince = state?.oldestDueAt?.getTime() ?? now.getTime();
    oldestDue.labels(queue).set(Math.max(0, now.getTime() - waitingSince) / 1000);
  }
  for (const status of LIVE_CALL_STATUSES) liveCalls.labels(status).set(reading.calls[status]);
  return registry;
}

/** A scrape answers within this even when the database stalls (Prometheus waits 10 s by default). */
export const DATABASE_READ_DEADLINE_MS = 2_000;
export function createMetricsService(deps: MetricsServiceDeps): MetricsService {
  const { db, clock } = deps;
  const processMetrics = processMetricsOf(deps.metrics);
  const deadlineMs = deps.databaseDeadlineMs ?? DATABASE_READ_DEADLINE_MS;
  /** The read under way: scrapes meanwhile wait for it, so a stalled database gets one read, not one per scrape. */
  let underWay: Promise<DatabaseReading | undefined> | undefined;

  function read(): Promise<DatabaseReading | undefined> {
    const now = clock.now();
    const reading = Promise.all([readQueueStates(db, now), countLiveCalls(db)]).then(
      ([states, calls]) => ({ now, queues: new Map(states.map((state) => [state.queue, state])), calls }),
      () => undefined,
    );
    underWay = reading;
    reading.finally(() => {
      if (underWay === reading) underWay = undefined;
    });
    return reading;
  }

  function readDatabase(): Promise<DatabaseReading | undefined> {
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<undefined>((resolve) => {
      timer = setTimeout(resolve, deadlineMs, undefined);
    });
    return Promise.race([underWay ?? read(), deadline]).finally(() => clearTimeout(timer));
  }

  return {
    async scrape() {
      const [processText, reading] = await Promise.all([processMetrics(), readDatabase()]);
      const registry = databaseRegistry(deps.queues, reading);
      return {
        contentType: registry.contentType,
        body: `${processText.trimEnd()}\n${await registry.metrics()}`,
      };
    },
  };
}
