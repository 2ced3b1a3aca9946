/** Drives one scenario with autocannon (closed loop) or paced.ts (open loop): a warm-up, then the measured run. */
import { createRequire } from 'node:module';
import { runPaced } from './paced.js';

const require = createRequire(import.meta.url);
// autocannon ships no types; the slice used here is typed below.
const autocannon = require('autocannon') as (options: AutocannonOptions) => AutocannonRun;

/** autocannon's answer: a promise of the result that is also the run's event emitter. */
type AutocannonRun = Promise<AutocannonResult> & {
  on(
    event: 'response',
    listener: (client: unknown, statusCode: number, bytes: number, responseTime: number) => void,
  ): void;
};

export interface RequestShape {
  method: 'GET' | 'POST';
  path: string;
  headers?: Record<string, string>;
  body?: string;
}

interface AutocannonOptions {
  url: string;
  connections: number;
  duration: number;
  overallRate?: number;
  timeout?: number;
  method?: string;
  headers?: Record<string, string>;
  body?: string;
  requests?: (Partial<RequestShape> & { setupRequest?: (request: RequestShape) => RequestShape })[];
}

interface Histogram {
  average: number;
  p50: number;
  p99: number;
  total: number;
}

interface AutocannonResult {
  requests: Histogram;
  latency: Histogram;
  duration: number;
  errors: number;
  timeouts: number;
  non2xx: number;
  '2xx': number;
  statusCodeStats?: Record<string, { count: number }>;
}

export interface LoadResult {
  rps: number;
  p50_ms: number;
  p99_ms: number;
  /** Requests that did not get a 2xx answer: non-2xx statuses plus connection errors and timeouts. */
  non2xx: number;
  /** Answers by status code, e.g. { "200": 123456 }. */
  statuses: Record<string, number>;
  errors: number;
  /** CPU milliseconds the answering process(es) spent per answered request (when measured). */
  cpu_ms_per_request: number | null;
  /** CPU milliseconds the local PostgreSQL server's processes spent per answered request. */
  db_cpu_ms_per_request?: number | null;
}

export interface LoadSpec {
  baseUrl: string;
  connections: number;
  duration: number;
  warmup: number;
  /**
   * Offered requests per second over all connections, evenly spaced (open loop, paced.ts); unset:
   * autocannon, each connection sending its next request as soon as the answer comes (closed loop).
   */
  overallRate?: number;
  /** `burst`: the open loop through autocannon's overallRate instead (the earlier measurement). */
  openLoop?: 'paced' | 'burst';
  /** A fixed request, or a function building each request (fresh ids, keys, bodies). */
  request: RequestShape | (() => RequestShape);
  /** CPU seconds used so far by the process under test (to report CPU per request). */
  cpuSeconds?: () => number;
  /** CPU seconds used so far by the local database server, null when it is not local. */
  dbCpuSeconds?: () => number | null;
}

/** CPU ms per answered request between two readings (either meter may be absent). */
function perRequest(before: number | null | undefined, after: number | null | undefined, answered: number) {
  return before != null && after != null && answered > 0
    ? Math.round(((after - before) * 1000 * 1000) / answered) / 1000
    : null;
}

/**
 * One autocannon run, with every 2xx answer's response time as measured (autocannon's own
 * histogram keeps whole milliseconds: at a p99 of 2 ms one millisecond is half of it).
 */
async function fire(
  spec: LoadSpec,
  duration: number,
): Promise<{ result: AutocannonResult; latencies: number[] }> {
  const base = typeof spec.request === 'function' ? spec.request() : spec.request;
  const build = spec.request;
  const latencies: number[] = [];
  const run = autocannon({
    url: spec.baseUrl,
    connections: spec.connections,
    duration,
    ...(spec.overallRate ? { overallRate: spec.overallRate } : {}),
    timeout: 10,
    method: base.method,
    headers: { ...base.headers },
    body: base.body,
    // autocannon writes Content-Length into the headers object it is given: always hand it a copy.
    requests: [
      typeof build === 'function'
        ? {
            setupRequest: (request) => {
              const next = build();
              return { ...request, ...next, headers: { ...next.headers } };
            },
          }
        : { method: base.method, path: base.path, headers: { ...base.headers }, body: base.body },
    ],
  });
  run.on('response', (_client, statusCode, _bytes, responseTime) => {
    if (statusCode >= 200 && statusCode < 300) latencies.push(responseTime);
  });
  return { result: await run, latencies };
}

/** The nearest-rank percentile of `values` (ms, two decimals); null when there are none. */
function percentile(values: number[], fraction: number): number | null {
  if (values.length === 0) return null;
  const sorted = Float64Array.from(values).sort();
  const rank = Math.max(0, Math.ceil(fraction * sorted.length) - 1);
  return Math.round(sorted[rank] * 100) / 100;
}

/**
 * Waits (at most 5 s) until the process is nearly idle: requests the warm-up left in flight
 * (slow ones, such as password hashing) must not be answered inside the measured window.
 */
async function settle(cpuSeconds: () => number): Promise<void> {
  const deadline = Date.now() + 5_000;
  let before = cpuSeconds();
  while (Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 250));
    const now = cpuSeconds();
    if (now - before < 0.25 * 0.15) return;
    before = now;
  }
}

/** Open loop: the rate offered evenly over time (paced.ts), not autocannon's burst per second. */
async function runOpenLoop(spec: LoadSpec & { overallRate: number }): Promise<LoadResult> {
  const paced = (seconds: number) =>
    runPaced({
      baseUrl: spec.baseUrl,
      connections: spec.connections,
      rate: spec.overallRate,
      seconds,
      request: spec.request,
    });
  if (spec.warmup > 0) {
    await paced(spec.warmup);
    if (spec.cpuSeconds) await settle(spec.cpuSeconds);
  }
  const cpuBefore = spec.cpuSeconds?.();
  const dbCpuBefore = spec.dbCpuSeconds?.();
  const result = await paced(spec.duration);
  const cpuAfter = spec.cpuSeconds?.();
  const dbCpuAfter = spec.dbCpuSeconds?.();
  const answered = Object.values(result.statuses).reduce((sum, n) => sum + n, 0);
  return {
    ...result,
    cpu_ms_per_request: perRequest(cpuBefore, cpuAfter, answered),
    db_cpu_ms_per_request: perRequest(dbCpuBefore, dbCpuAfter, answered),
  };
}

export async function runLoad(spec: LoadSpec): Promise<LoadResult> {
  if (spec.overallRate && spec.openLoop !== 'burst')
    return runOpenLoop({ ...spec, overallRate: spec.overallRate });
  if (spec.warmup > 0) {
    await fire(spec, spec.warmup);
    if (spec.cpuSeconds) await settle(spec.cpuSeconds);
  }
  const cpuBefore = spec.cpuSeconds?.();
  const dbCpuBefore = spec.dbCpuSeconds?.();
  const { result, latencies } = await fire(spec, spec.duration);
  const cpuAfter = spec.cpuSeconds?.();
  const dbCpuAfter = spec.dbCpuSeconds?.();
  const answered = result['2xx'] + result.non2xx;
  const statuses: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {}))
    statuses[code] = Number(stat.count);
  const ok = result['2xx'];
  return {
    rps: Math.round(ok / result.duration),
    p50_ms: percentile(latencies, 0.5) ?? result.latency.p50,
    p99_ms: percentile(latencies, 0.99) ?? result.latency.p99,
    non2xx: result.non2xx + result.errors,
    statuses,
    errors: result.errors,
    cpu_ms_per_request: perRequest(cpuBefore, cpuAfter, answered),
    db_cpu_ms_per_request: perRequest(dbCpuBefore, dbCpuAfter, answered),
  };
}
