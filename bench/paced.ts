/**
 * An open-loop load generator that offers a fixed rate evenly over time: request n is due at
 * start + n / rate, and sent then whatever the answers before it are doing (at most `connections`
 * keep-alive sockets; a request finding them all busy waits for one, and that wait counts in its
 * latency). Latency is measured from the moment the request was due, so a stalled server is not
 * hidden by the generator waiting for it (coordinated omission).
 *
 * Why not autocannon's `overallRate`: autocannon gives each connection a quota per second and
 * resets it on a one-second timer, so each connection sends its whole quota back to back at the
 * start of every second and then waits. 300 req/s offered is in fact a burst of 300 requests as
 * fast as the service answers them, then silence; the latency of a fixed rate includes up to a
 * second of self-made queueing (bench/README.md, "Open loop").
 */
import http from 'node:http';
import type { LoadResult, RequestShape } from './load.js';

export interface PacedSpec {
  baseUrl: string;
  connections: number;
  /** Requests offered per second. */
  rate: number;
  seconds: number;
  request: RequestShape | (() => RequestShape);
  /** Per-request timeout (ms). */
  timeoutMs?: number;
}

export interface PacedResult extends LoadResult {
  /** Requests sent (all of them due within the window). */
  sent: number;
  /** Seconds from the first request due to the last answer. */
  elapsed_s: number;
}

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export async function runPaced(spec: PacedSpec): Promise<PacedResult> {
  const url = new URL(spec.baseUrl);
  const agent = new http.Agent({ keepAlive: true, maxSockets: spec.connections });
  const timeoutMs = spec.timeoutMs ?? 10_000;
  const total = Math.round(spec.rate * spec.seconds);
  const latencies: number[] = [];
  const statuses: Record<string, number> = {};
  let errors = 0;
  let sent = 0;
  let settled = 0;
  const start = performance.now();

  const build = () => (typeof spec.request === 'function' ? spec.request() : spec.request);

  function fire(dueAt: number, shape: RequestShape): Promise<void> {
    return new Promise((resolve) => {
      const done = (status: string | null) => {
        if (status === null) errors++;
        else {
          statuses[status] = (statuses[status] ?? 0) + 1;
          latencies.push(performance.now() - dueAt);
        }
        settled++;
        resolve();
      };
      const headers: Record<string, string | number> = { ...shape.headers };
      if (shape.body !== undefined) headers['content-length'] = Buffer.byteLength(shape.body);
      const req = http.request(
        {
          agent,
          host: url.hostname,
          port: url.port,
          method: shape.method,
          path: shape.path,
          headers,
          timeout: timeoutMs,
        },
        (res) => {
          res.resume();
          res.on('end', () => done(String(res.statusCode)));
          res.on('error', () => done(null));
        },
      );
      req.on('timeout', () => req.destroy(new Error('timeout')));
      req.on('error', () => done(null));
      req.end(shape.body);
    });
  }

  const inFlight: Promise<void>[] = [];
  await new Promise<void>((resolve) => {
    const tick = () => {
      const elapsed = performance.now() - start;
      const due = Math.min(total, Math.floor((elapsed / 1000) * spec.rate) + 1);
      while (sent < due) {
        const dueAt = start + (sent / spec.rate) * 1000;
        sent++;
        inFlight.push(fire(dueAt, build()));
      }
      if (sent >= total) resolve();
      else setTimeout(tick, Math.max(0, Math.min(5, start + (sent / spec.rate) * 1000 - performance.now())));
    };
    tick();
  });
  await Promise.all(inFlight);
  const elapsedSeconds = (performance.now() - start) / 1000;
  agent.destroy();
  latencies.sort((a, b) => a - b);
  const ok = Object.entries(statuses)
    .filter(([code]) => code.startsWith('2'))
    .reduce((sum, [, n]) => sum + n, 0);
  return {
    rps: Math.round(ok / spec.seconds),
    p50_ms: Math.round(percentile(latencies, 50)),
    p99_ms: Math.round(percentile(latencies, 99)),
    non2xx: settled - ok,
    statuses,
    errors,
    cpu_ms_per_request: null,
    sent,
    elapsed_s: Math.round(elapsedSeconds * 10) / 10,
  };
}
