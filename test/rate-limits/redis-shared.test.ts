/**
 * Rate limits shared through Redis, against real servers:
 * - the Lua script gives exactly the decisions of the in-process bucket (Redis on 127.0.0.1:6379);
 * - two server processes on one PostgreSQL database and the machine's Redis share one key's budget;
 * - two processes on a redis-server of this test's own: stopped mid-test → no 5xx, one warning per
 *   process, answers from each process's own buckets; started again → shared again.
 * Each part skips with a message when what it needs does not answer.
 */
import { type ChildProcess, spawn, spawnSync } from 'node:child_process';
import fc from 'fast-check';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRedisStore } from '../../src/rate-limits/redis-store.js';
import { createMemoryStore } from '../../src/rate-limits/token-bucket.js';
import { emptyPostgresDatabase, POSTGRES_URL, postgresAnswers } from '../support/databases.js';
import { redisAnswers, TEST_REDIS_URL, testRedisPrefix } from '../support/redis.js';
import { freePort, type ServerProcess, startServerProcess } from '../support/server-process.js';

const MACHINE_REDIS = TEST_REDIS_URL;
const ADMIN_TOKEN = 'rate-limit-admin-token-0123456789';

const redisUp = await redisAnswers(MACHINE_REDIS);
const postgresUp = await postgresAnswers();
const redisServerInstalled = spawnSync('redis-server', ['--version']).status === 0;
if (!redisUp)
  console.warn(
    `rate-limits/redis-shared: skipping the shared-Redis tests, no Redis answers at ${MACHINE_REDIS}`,
  );
if (!postgresUp)
  console.warn(
    `rate-limits/redis-shared: skipping the two-process tests, no PostgreSQL answers at ${POSTGRES_URL}`,
  );
if (!redisServerInstalled)
  console.warn('rate-limits/redis-shared: skipping the outage test, no redis-server binary on PATH');

const quietLogger = { warn() {}, info() {} };

describe.skipIf(!redisUp)('Redis store (Lua script) against the in-process bucket', () => {
  it('gives the same decision for every step of random request sequences', async () => {
    const prefix = testRedisPrefix();
    const redis = createRedisStore({
      url: MACHINE_REDIS,
      fallback: createMemoryStore(),
      logger: () => quietLogger,
      keyPrefix: prefix,
    });
    await redis.ready();
    try {
      let run = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.record({
            perSecond: fc.oneof(fc.integer({ min: 1, max: 500 }), fc.constant(10 / 900)),
            burst: fc.integer({ min: 1, max: 300 }),
          }),
          fc.array(
            fc.record({
              dt: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3000 })),
              cost: fc.constantFrom(1, 1, 1, -1),
            }),
            {
              maxLength: 40,
            },
          ),
          async (limits, steps) => {
            const memory = createMemoryStore();
            const key = `k${run++}`;
            let now = 1_700_000_000_000;
            for (const step of steps) {
              now += step.dt;
              const expected = await memory.consume(key, limits, now, step.cost);
              expect(redis.healthy()).toBe(true);
              expect(await redis.consume(key, limits, now, step.cost)).toEqual(expected);
            }
          },
        ),
        { numRuns: 60 },
      );
    } finally {
      await redis.close();
    }
  });
});

describe.skipIf(!redisUp)('Redis store start-up', () => {
  function capture() {
    const lines: string[] = [];
    let onWarn = () => {};
    const warned = new Promise<void>((resolve) => {
      onWarn = resolve;
    });
    const logger = {
      warn(_obj: object, msg: string) {
        lines.push(msg);
        onWarn();
      },
      info(_obj: object, msg: string) {
        lines.push(msg);
      },
    };
    return { lines, logger, warned };
  }

  it('logs nothing when Redis is up, even if start-up keeps the event loop busy past the connect timeout', async () => {
    const { lines, logger } = capture();
    const store = createRedisStore({
      url: MACHINE_REDIS,
      fallback: createMemoryStore(),
      logger: () => logger,
      connectTimeoutMs: 200,
    });
    // The connection attempt is under way; the process goes on building its app without yielding.
    await new Promise((resolve) => process.nextTick(resolve));
    const until = Date.now() + 1200;
    while (Date.now() < until) {}
    try {
      await store.ready(10_000);
      expect(store.healthy()).toBe(true);
      expect(lines).toEqual([]);
    } finally {
      await store.close();
    }
  });

  it('still reports a Redis that is not there at start, once', async () => {
    const { lines, logger, warned } = capture();
    const store = createRedisStore({
      url: `redis://127.0.0.1:${await freePort()}`,
      fallback: createMemoryStore(),
      logger: () => logger,
    });
    try {
      await warned;
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatch(/Redis unreachable/);
      expect(store.healthy()).toBe(false);
    } finally {
      await store.close();
    }
  });
});

/** A server process; the processes of one test share `keyPrefix`, so they share buckets. */
const startServer = (databaseUrl: string, redisUrl: string, keyPrefix: string) =>
  startServerProcess({
    env: {
      DATABASE_URL: databaseUrl,
      REDIS_URL: redisUrl,
      REDIS_KEY_PREFIX: keyPrefix,
      ADMIN_TOKEN,
      WORKERS: '0',
    },
  });

/** A tenant whose keys allow bursts of 30 and 1 request/s, so refill is negligible in a test. */
async function tenantWithKey(server: ServerProcess): Promise<string> {
  const tenant = await server.request('POST', '/admin/v1/tenants', {
    token: ADMIN_TOKEN,
    body: { name: 'Shared budget' },
  });
  expect(tenant.status).toBe(201);
  const patched = await server.request('PATCH', `/admin/v1/tenants/${tenant.body.data.id}`, {
    token: ADMIN_TOKEN,
    body: { rate_limit: { requests_per_second: 1, burst: 30 } },
  });
  expect(patched.status).toBe(200);
  const key = await server.request('POST', `/admin/v1/tenants/${tenant.body.data.id}/api-keys`, {
    token: ADMIN_TOKEN,
    body: { scopes: ['plans:read'] },
  });
  expect(key.status).toBe(201);
  return key.body.data.key;
}

const statuses: number[] = [];
async function plans(server: ServerProcess, key: string) {
  const r = await server.request('GET', '/api/v1/plans', { token: key });
  statuses.push(r.status);
  return {
    status: r.status,
    remaining: Number(r.headers.get('ratelimit-remaining')),
    limit: Number(r.headers.get('ratelimit-limit')),
  };
}

/** `count` requests to `server`; returns the last answer. */
async function spend(server: ServerProcess, key: string, count: number) {
  let last: Awaited<ReturnType<typeof plans>> | undefined;
  for (let i = 0; i < count; i++) {
    last = await plans(server, key);
    expect(last.status).toBe(200);
  }
  return last!;
}

const secondsSince = (start: number) => Math.ceil((Date.now() - start) / 1000);

describe.skipIf(!redisUp || !postgresUp)('two server processes on the machine’s Redis', () => {
  let database: Awaited<ReturnType<typeof emptyPostgresDatabase>>;
  let a: ServerProcess;
  let b: ServerProcess;
  const keyPrefix = testRedisPrefix();
  beforeAll(async () => {
    database = await emptyPostgresDatabase();
    [a, b] = await Promise.all([
      startServer(database.url, MACHINE_REDIS, keyPrefix),
      startServer(database.url, MACHINE_REDIS, keyPrefix),
    ]);
  });
  afterAll(async () => {
    await Promise.all([a?.stop(), b?.stop()]);
    await database?.drop();
  });

  it('share one API key’s budget', async () => {
    const key = await tenantWithKey(a);
    const start = Date.now();
    const afterA = await spend(a, key, 15);
    expect(afterA).toMatchObject({ limit: 30, remaining: 15 });
    // A process-local bucket would answer 29 here.
    const first = await plans(b, key);
    expect(first.status).toBe(200);
    expect(first.remaining).toBeLessThanOrEqual(14 + secondsSince(start));

    // Spend the rest alternately: both processes refuse once the one budget is gone.
    const refusedBy = new Set<string>();
    let passed = 16;
    for (let i = 0; i < 80 && refusedBy.size < 2; i++) {
      const [name, server] = i % 2 === 0 ? ['a', a] : ['b', b];
      const r = await plans(server as ServerProcess, key);
      if (r.status === 429) refusedBy.add(name as string);
      else passed++;
    }
    expect([...refusedBy].sort()).toEqual(['a', 'b']);
    expect(passed).toBeLessThanOrEqual(30 + secondsSince(start));
    expect(statuses.every((s) => s === 200 || s === 429)).toBe(true);

    // The buckets are under this test's REDIS_KEY_PREFIX, in TEST_REDIS_URL's database.
    const redis = new Redis(MACHINE_REDIS, { lazyConnect: true });
    await redis.connect();
    try {
      const [, keys] = await redis.scan('0', 'MATCH', `${keyPrefix}*`, 'COUNT', 10_000);
      expect(keys.length).toBeGreaterThan(0);
    } finally {
      redis.disconnect();
    }
  });
});

describe.skipIf(!postgresUp || !redisServerInstalled)(
  'Redis outage (a redis-server of this test’s own)',
  () => {
    let database: Awaited<ReturnType<typeof emptyPostgresDatabase>>;
    let redisPort: number;
    let redisProcess: ChildProcess | undefined;
    let a: ServerProcess;
    let b: ServerProcess;

    async function startRedis() {
      const child = spawn(
        'redis-server',
        ['--port', String(redisPort), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'],
        {
          stdio: 'ignore',
        },
      );
      redisProcess = child;
      const deadline = Date.now() + 10_000;
      while (!(await redisAnswers(`redis://127.0.0.1:${redisPort}`))) {
        if (Date.now() > deadline) throw new Error(`redis-server on port ${redisPort} did not start`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    }
    async function stopRedis() {
      const child = redisProcess;
      if (!child || child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGKILL');
      await exited;
    }

    beforeAll(async () => {
      redisPort = await freePort();
      await startRedis();
      database = await emptyPostgresDatabase();
      const url = `redis://127.0.0.1:${redisPort}`;
      const keyPrefix = testRedisPrefix();
      [a, b] = await Promise.all([
        startServer(database.url, url, keyPrefix),
        startServer(database.url, url, keyPrefix),
      ]);
    });
    afterAll(async () => {
      await Promise.all([a?.stop(), b?.stop()]);
      await stopRedis();
      await database?.drop();
    });

    const outageWarnings = (server: ServerProcess) =>
      server.logLines().filter((line) => line.level === 40 && /Redis unreachable/.test(line.msg ?? ''))
        .length;

    it('keeps answering without 5xx while Redis is down, and shares the budget again once it is back', async () => {
      const key = await tenantWithKey(a);
      let start = Date.now();
      await spend(a, key, 5);
      expect((await plans(b, key)).remaining).toBeLessThanOrEqual(24 + secondsSince(start));

      await stopRedis();
      // Each process now answers from its own buckets (full: 30 each), never with a 5xx.
      const during: Awaited<ReturnType<typeof plans>>[] = [];
      for (let i = 0; i < 20; i++) during.push(await plans(i % 2 === 0 ? a : b, key));
      expect(during.map((r) => r.status)).toEqual(Array(20).fill(200));
      expect(during.every((r) => r.limit === 30 && r.remaining >= 19)).toBe(true);
      expect(outageWarnings(a)).toBe(1);
      expect(outageWarnings(b)).toBe(1);

      await startRedis();
      await Promise.all([
        a.waitForOutput('Redis reachable again', 20_000),
        b.waitForOutput('Redis reachable again', 20_000),
      ]);
      // Redis came back empty: a full shared bucket. 25 through a, then b sees what a spent
      // (its own in-process bucket still holds about 20).
      start = Date.now();
      await spend(a, key, 25);
      const shared = await plans(b, key);
      expect(shared.status).toBe(200);
      expect(shared.remaining).toBeLessThanOrEqual(4 + secondsSince(start));
      expect(outageWarnings(a)).toBe(1);
      expect(outageWarnings(b)).toBe(1);
      expect(statuses.every((s) => s < 500)).toBe(true);
    });

    it('keeps answering while Redis stalls (connection open, no replies), then shares again', async () => {
      const key = await tenantWithKey(a);
      const before = [outageWarnings(a), outageWarnings(b)];
      const recoveries = (server: ServerProcess) =>
        server.logLines().filter((l) => /Redis reachable again/.test(l.msg ?? '')).length;
      const recovered = [recoveries(a), recoveries(b)];
      redisProcess!.kill('SIGSTOP');
      try {
        const during: number[] = [];
        for (let i = 0; i < 10; i++) during.push((await plans(i % 2 === 0 ? a : b, key)).status);
        expect(during).toEqual(Array(10).fill(200));
        expect([outageWarnings(a), outageWarnings(b)]).toEqual([before[0] + 1, before[1] + 1]);
      } finally {
        redisProcess!.kill('SIGCONT');
      }
      // The next request after the pause finds Redis answering again.
      const deadline = Date.now() + 20_000;
      while (recoveries(a) === recovered[0] || recoveries(b) === recovered[1]) {
        if (Date.now() > deadline) throw new Error('the processes did not go back to Redis');
        await plans(a, key);
        await plans(b, key);
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      const start = Date.now();
      const other = await tenantWithKey(a);
      await spend(a, other, 20);
      expect((await plans(b, other)).remaining).toBeLessThanOrEqual(9 + secondsSince(start));
      expect(statuses.every((s) => s < 500)).toBe(true);
    });
  },
);
