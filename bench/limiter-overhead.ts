/**
 * What the rate limiter costs per request (a benchmark, not a test):
 *   npx tsx bench/limiter-overhead.ts            (REDIS_URL, default redis://127.0.0.1:6379; BENCH_SECONDS, default 5)
 *
 * 1. The bucket step alone: sequential latency and concurrent throughput of the in-process store
 *    and of the Redis store (one EVALSHA round trip); the partner hook as auth calls it.
 * 2. Over HTTP: the same trivial Fastify route without a limiter, with the partner limiter on the
 *    in-process store, and on Redis, driven by autocannon in a separate process (32 connections,
 *    1000 API keys in rotation, limits set high enough that nothing is refused). The overhead per
 *    request is the difference in the server process's CPU time per request and in mean latency.
 */
import { spawn } from 'node:child_process';
import path from 'node:path';
import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from 'fastify';
import { openDatabase } from '../src/core/db/database.js';
import { migrate } from '../src/core/db/migrate.js';
import { partnerRateLimiter } from '../src/rate-limits/hooks.js';
import { createRedisStore } from '../src/rate-limits/redis-store.js';
import { createRateLimits } from '../src/rate-limits/service.js';
import { type BucketStore, createMemoryStore } from '../src/rate-limits/token-bucket.js';
import { redisAnswers } from '../test/support/redis.js';

const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
const SECONDS = Number(process.env.BENCH_SECONDS ?? 5);
const KEYS = 1000;
const HIGH = { perSecond: 1e9, burst: 1e9 };
const quiet = { warn() {}, info() {} };

async function storeBench(name: string, store: BucketStore, sequential: number, concurrent: number) {
  let now = Date.now();
  for (let i = 0; i < 1000; i++) await store.consume(`warm:${i % KEYS}`, HIGH, now++);
  let start = process.hrtime.bigint();
  for (let i = 0; i < sequential; i++) await store.consume(`seq:${i % KEYS}`, HIGH, now++);
  const seqNs = Number(process.hrtime.bigint() - start) / sequential;

  start = process.hrtime.bigint();
  let next = 0;
  const worker = async () => {
    while (next < concurrent) {
      const i = next++;
      await store.consume(`par:${i % KEYS}`, HIGH, now++);
    }
  };
  await Promise.all(Array.from({ length: 32 }, worker));
  const parSeconds = Number(process.hrtime.bigint() - start) / 1e9;
  console.log(
    `  ${name.padEnd(22)} sequential ${(seqNs / 1000).toFixed(2).padStart(7)} µs/step   32 in flight ${Math.round(
      concurrent / parSeconds,
    )
      .toLocaleString('en')
      .padStart(9)} steps/s`,
  );
}

/** The partner hook as auth calls it (tenant numbers cached, headers set), without HTTP. */
async function hookBench(limiter: ReturnType<typeof partnerRateLimiter>) {
  const reply = { header: () => reply } as unknown as FastifyReply;
  const request = {} as FastifyRequest;
  const principals = Array.from({ length: KEYS }, (_, n) => ({
    keyId: `key_${n}`,
    tenantId: `ten_${n % 10}`,
    scopes: new Set<string>(),
  }));
  const count = 300_000;
  for (let i = 0; i < 10_000; i++) await limiter.authenticated(request, reply, principals[i % KEYS]);
  const start = process.hrtime.bigint();
  for (let i = 0; i < count; i++) await limiter.authenticated(request, reply, principals[i % KEYS]);
  const us = Number(process.hrtime.bigint() - start) / count / 1000;
  console.log(
    `  ${'partner hook, in-proc'.padEnd(22)} sequential ${us.toFixed(2).padStart(7)} µs/request (bucket step + headers)`,
  );
}

interface Load {
  rps: number;
  total: number;
  mean: number;
  p50: number;
  p99: number;
  non2xx: number;
}

function autocannon(url: string, seconds: number): Promise<Load> {
  const bin = path.resolve(import.meta.dirname, '../node_modules/autocannon/autocannon.js');
  return new Promise((resolve, reject) => {
    const child = spawn(
      process.execPath,
      [bin, '-c', '32', '-d', String(seconds), '-j', '-H', 'x-bench-key=rotate', url],
      {
        stdio: ['ignore', 'pipe', 'ignore'],
      },
    );
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
    });
    child.on('exit', () => {
      try {
        const result = JSON.parse(out);
        resolve({
          rps: result.requests.average,
          total: result.requests.total,
          mean: result.latency.mean,
          p50: result.latency.p50,
          p99: result.latency.p99,
          non2xx: result.non2xx,
        });
      } catch (error) {
        reject(error);
      }
    });
  });
}

async function httpApp(limiter?: ReturnType<typeof partnerRateLimiter>): Promise<FastifyInstance> {
  const app = Fastify({ logger: false });
  let counter = 0;
  if (limiter) {
    app.addHook('onRequest', async (request, reply) => {
      // Stands in for a verified key: 1000 keys of 10 tenants in rotation.
      const n = counter++ % KEYS;
      await limiter.authenticated(request, reply, {
        keyId: `key_${n}`,
        tenantId: `ten_${n % 10}`,
        scopes: new Set(),
      });
    });
  }
  app.get('/probe', async () => ({ ok: true }));
  await app.listen({ port: 0, host: '127.0.0.1' });
  return app;
}

async function main() {
  const redisUp = await redisAnswers(REDIS_URL);
  const database = await openDatabase({ databaseUrl: 'memory://', dataDir: '' });
  await migrate(database);
  const db = database.db;

  console.log('1. Bucket step alone');
  await storeBench('in-process', createMemoryStore(), 200_000, 200_000);
  await hookBench(partnerRateLimiter(createRateLimits({ db, policies: { partner: HIGH } })));
  const redisStore = redisUp
    ? createRedisStore({
        url: REDIS_URL,
        fallback: createMemoryStore(),
        logger: () => quiet,
        keyPrefix: 'vp:rl:bench:',
      })
    : undefined;
  if (redisStore) {
    await redisStore.ready();
    await storeBench('Redis (Lua, 1 trip)', redisStore, 10_000, 50_000);
  } else {
    console.log(`  Redis: skipped, nothing answers at ${REDIS_URL}`);
  }

  console.log(
    `\n2. HTTP, trivial route, 32 connections, ${SECONDS} s each (server and load generator share the machine)`,
  );
  const variants: [string, ReturnType<typeof partnerRateLimiter> | undefined][] = [
    ['no limiter', undefined],
    ['in-process limiter', partnerRateLimiter(createRateLimits({ db, policies: { partner: HIGH } }))],
  ];
  if (redisStore)
    variants.push([
      'Redis limiter',
      partnerRateLimiter(createRateLimits({ db, store: redisStore, policies: { partner: HIGH } })),
    ]);
  const results: { name: string; load: Load; cpuUs: number }[] = [];
  for (const [name, limiter] of variants) {
    const app = await httpApp(limiter);
    const address = app.server.address() as { port: number };
    const url = `http://127.0.0.1:${address.port}/probe`;
    await autocannon(url, 1); // warm-up
    // CPU of this (server) process per request: robust to other load on a shared machine.
    const cpuBefore = process.cpuUsage();
    const load = await autocannon(url, SECONDS);
    const cpu = process.cpuUsage(cpuBefore);
    await app.close();
    results.push({ name, load, cpuUs: (cpu.user + cpu.system) / load.total });
  }
  const base = results[0];
  for (const { name, load, cpuUs } of results) {
    const delta = (value: number, unit: string, digits: number) =>
      `${value >= 0 ? '+' : ''}${value.toFixed(digits)} ${unit}`;
    console.log(
      `  ${name.padEnd(20)} ${Math.round(load.rps).toLocaleString('en').padStart(7)} req/s   mean ${load.mean.toFixed(2)} ms   p99 ${String(load.p99).padStart(3)} ms   ` +
        `server CPU ${cpuUs.toFixed(1).padStart(5)} µs/request   non-2xx ${load.non2xx}` +
        (name === base.name
          ? ''
          : `   (${delta(cpuUs - base.cpuUs, 'µs CPU', 1)}, ${delta(load.mean - base.load.mean, 'ms mean latency', 2)})`),
    );
  }
  await redisStore?.close();
  await database.close();
}

main().catch((error) => {
  console.error(error);
  process.exit(1);
});
