/**
 * Database faults under load, against the real server process on PostgreSQL, through a TCP proxy
 * this test controls (test/support/tcp-proxy.ts):
 * - the database's backends terminated (pg_terminate_backend) mid-traffic;
 * - every connection reset, new ones refused for a while, then accepted again (a restart);
 * - the database stalled: connections open, no byte answered.
 * Each time the process stays up, the requests in flight answer 2xx or 503 service_unavailable in
 * the envelope with Retry-After (never a 500, never a hang), requests made from 1 s after the
 * database answers again all succeed, and the job worker dispatches calls again.
 */
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { POSTGRES_URL } from '../support/databases.js';
import { type HttpAnswer, type ServerProcess, startServerProcess } from '../support/server-process.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { emptyPostgresDatabase, postgresAvailable, warnWithoutPostgres } from './postgres.js';

warnWithoutPostgres('test/operations/database-faults.test.ts');

const ADMIN = 'db-faults-admin-token-0123456789';
// Small limits so a stall shows within seconds; the statement limit still leaves the loaded
// machine's ordinary queries far below it.
const STATEMENT_TIMEOUT_MS = 2_000;
const QUERY_TIMEOUT_MS = 3_000;
const CONNECT_TIMEOUT_MS = 2_000;
const CONCURRENCY = 8;
/** The requirement: service resumes by itself within 1 s of the database answering again. */
const RESUME_MS = 1_000;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
/** Request counter of the whole file: each created user's email is new. */
let n = 0;

interface Outcome {
  startedAt: number;
  /** How long the answer took. */
  ms: number;
  what: string;
  answer?: HttpAnswer;
  error?: string;
}

/** Mixed reads and writes from CONCURRENCY clients until `stop()`; every outcome is recorded. */
function startLoad(server: ServerProcess, key: string) {
  const outcomes: Outcome[] = [];
  let running = true;
  const listeners = new Set<() => void>();
  const loops = Array.from({ length: CONCURRENCY }, async () => {
    while (running) {
      const i = n++;
      const write = i % 3 === 0;
      const what = write ? 'POST /api/v1/users' : 'GET /api/v1/users';
      const startedAt = Date.now();
      try {
        const answer = write
          ? await server.request('POST', '/api/v1/users', {
              token: key,
              body: { email: `load-${i}@example.com`, name: `Load ${i}`, password: 'correct horse' },
              timeoutMs: 20_000,
            })
          : await server.request('GET', '/api/v1/users?limit=5&search=load', {
              token: key,
              timeoutMs: 20_000,
            });
        outcomes.push({ startedAt, ms: Date.now() - startedAt, what, answer });
      } catch (error) {
        outcomes.push({
          startedAt,
          ms: Date.now() - startedAt,
          what,
          error: String((error as Error).cause ?? error),
        });
      }
      for (const listener of listeners) listener();
    }
  });
  return {
    outcomes,
    /** Resolves once `count` more requests have answered with `status`. */
    waitFor(status: number, count: number): Promise<void> {
      const seen = () => outcomes.filter((o) => o.answer?.status === status).length;
      const target = seen() + count;
      return new Promise((resolve, reject) => {
        const check = () => {
          if (seen() >= target) {
            listeners.delete(check);
            resolve();
          }
        };
        listeners.add(check);
        check();
        // A crashed server answers nothing again: say so instead of waiting for the test's timeout.
        server.exited.then((status) => {
          listeners.delete(check);
          reject(new Error(`the server exited (${status}):\n${server.stderr.slice(-2_000)}`));
        });
      });
    },
    async stop(): Promise<Outcome[]> {
      running = false;
      await Promise.all(loops);
      return outcomes;
    },
  };
}

/** Every outcome is a success or a 503 service_unavailable in the envelope with Retry-After. */
function expectOnlySuccessOr503(outcomes: Outcome[]): void {
  const wrong = outcomes.filter((o) => {
    if (!o.answer) return true;
    const { status, body, headers } = o.answer;
    if (status >= 200 && status < 300) return false;
    return !(
      status === 503 &&
      body?.error?.code === 'service_unavailable' &&
      typeof body.request_id === 'string' &&
      Number(headers.get('retry-after')) >= 1
    );
  });
  expect(
    wrong.map((o) => `${o.what}: ${o.error ?? `${o.answer?.status} ${o.answer?.raw.slice(0, 200)}`}`),
  ).toEqual([]);
}

/** Every request started from `since` on succeeded. */
function expectAllSucceededSince(outcomes: Outcome[], since: number): void {
  const later = outcomes.filter((o) => o.startedAt >= since);
  expect(later.length).toBeGreaterThan(0);
  expect(
    later
      .filter((o) => !(o.answer && o.answer.status < 300))
      .map((o) => `${o.what}: ${o.error ?? `${o.answer?.status} ${o.answer?.raw.slice(0, 200)}`}`),
  ).toEqual([]);
}

describe.skipIf(!postgresAvailable)('database faults under load (PostgreSQL)', { timeout: 120_000 }, () => {
  let proxy: TcpProxy;
  let server: ServerProcess;
  let drop: () => Promise<void>;
  let databaseName: string;
  let key: string;
  let webhookId: string;

  /** A call triggered now is dispatched by the worker: it leaves `queued` and ends. */
  async function expectCallsDispatched(): Promise<void> {
    const trigger = await server.request('POST', `/webhooks/agents/${webhookId}/trigger`, {
      body: { phone: '+14155551234', name: 'Ada' },
    });
    expect(trigger.status).toBe(202);
    for (;;) {
      const call = await server.request('GET', `/admin/v1/calls/${trigger.body.data.id}`, { token: ADMIN });
      expect(call.status).toBe(200);
      if (call.body.data.status === 'completed') return;
      await sleep(50);
    }
  }

  async function terminateBackends(): Promise<number> {
    const admin = new pg.Client({ connectionString: POSTGRES_URL });
    await admin.connect();
    try {
      const result = await admin.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
        [databaseName],
      );
      return result.rowCount ?? 0;
    } finally {
      await admin.end();
    }
  }

  beforeAll(async () => {
    const database = await emptyPostgresDatabase();
    drop = database.drop;
    const url = new URL(database.url);
    databaseName = url.pathname.slice(1);
    proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
    url.host = `127.0.0.1:${proxy.port}`;
    server = await startServerProcess({
      env: {
        DATABASE_URL: url.toString(),
        ADMIN_TOKEN: ADMIN,
        LOG_LEVEL: 'fatal',
        WORKERS: '1',
        SIMULATED_CALL_SECONDS: '0',
        RATE_LIMIT_PARTNER_PER_SECOND: '1000000',
        RATE_LIMIT_PARTNER_BURST: '1000000',
        RATE_LIMIT_WEBHOOK_PER_SECOND: '1000000',
        RATE_LIMIT_WEBHOOK_BURST: '1000000',
        DB_STATEMENT_TIMEOUT_MS: String(STATEMENT_TIMEOUT_MS),
        DB_QUERY_TIMEOUT_MS: String(QUERY_TIMEOUT_MS),
        DB_CONNECT_TIMEOUT_MS: String(CONNECT_TIMEOUT_MS),
      },
    });
    const ok = async (method: string, path: string, body?: unknown, token = ADMIN) => {
      const answer = await server.request(method, path, { token, body });
      if (answer.status >= 300) throw new Error(`${method} ${path}: ${answer.status} ${answer.raw}`);
      return answer.body.data;
    };
    const tenant = await ok('POST', '/admin/v1/tenants', { name: 'Faults Agency' });
    key = (
      await ok('POST', `/admin/v1/tenants/${tenant.id}/api-keys`, { scopes: ['users:read', 'users:write'] })
    ).key;
    const user = await ok(
      'POST',
      '/api/v1/users',
      { email: 'owner@example.com', name: 'Owner', password: 'correct horse' },
      key,
    );
    await ok('POST', `/admin/v1/users/${user.id}/credits`, { minutes: 10_000 });
    const agent = await ok('POST', `/admin/v1/tenants/${tenant.id}/agents`, {
      user_id: user.id,
      name: 'Agent',
      phone_number: '+14155550199',
      prompt: 'Call {name}.',
      welcome_message: 'Hi {name}.',
    });
    await ok('POST', `/admin/v1/agents/${agent.id}/publish`);
    webhookId = agent.webhook_id;
  });

  afterAll(async () => {
    await server?.kill('SIGKILL');
    await proxy?.close();
    await drop?.();
  });

  it('backends terminated mid-traffic: the process stays up and serves again by itself', async () => {
    const load = startLoad(server, key);
    await load.waitFor(201, 20);
    expect(await terminateBackends()).toBeGreaterThan(0);
    await load.waitFor(201, 20);
    expect(await terminateBackends()).toBeGreaterThan(0);
    const lastFault = Date.now();
    await sleep(RESUME_MS);
    await load.waitFor(201, 20);
    const outcomes = await load.stop();

    expect(server.exitStatus).toBeUndefined();
    expectOnlySuccessOr503(outcomes);
    expectAllSucceededSince(outcomes, lastFault + RESUME_MS);
    expect((await server.request('GET', '/readyz')).status).toBe(200);
    await expectCallsDispatched();
  });

  it('a restart (connections reset, refused, then accepted): 503 while down, then serves again', async () => {
    const load = startLoad(server, key);
    await load.waitFor(201, 20);
    proxy.cut();
    await proxy.down();
    await load.waitFor(503, 2 * CONCURRENCY);
    const ready = await server.request('GET', '/readyz');
    expect(ready.status).toBe(503);
    await proxy.up();
    const back = Date.now();
    await sleep(RESUME_MS);
    await load.waitFor(201, 20);
    const outcomes = await load.stop();

    expect(server.exitStatus).toBeUndefined();
    expectOnlySuccessOr503(outcomes);
    expectAllSucceededSince(outcomes, back + RESUME_MS);
    expect((await server.request('GET', '/readyz')).status).toBe(200);
    await expectCallsDispatched();
  });

  it('a stalled database: requests answer 503 within the time limits, /readyz 503 within 2 s', async () => {
    const load = startLoad(server, key);
    await load.waitFor(201, 20);
    proxy.pause();
    // The requests in flight when the stall began, and those after, answer 503 (not hang).
    await load.waitFor(503, 2 * CONCURRENCY);

    const readyStarted = Date.now();
    const ready = await server.request('GET', '/readyz', { timeoutMs: 10_000 });
    expect(ready.status).toBe(503);
    expect(Date.now() - readyStarted).toBeLessThan(2_000);

    const api = await server.request('GET', '/api/v1/users', { token: key, timeoutMs: 20_000 });
    expect(api.status).toBe(503);
    expect(api.body.error.code).toBe('service_unavailable');

    proxy.resume();
    const back = Date.now();
    await sleep(RESUME_MS);
    await load.waitFor(201, 20);
    const outcomes = await load.stop();

    expect(server.exitStatus).toBeUndefined();
    expectOnlySuccessOr503(outcomes);
    // A request waits at most for a free connection, then one query's limit; the rest is slack
    // for a loaded machine (before the limits, they waited for as long as the stall lasted).
    const stalled = outcomes.filter((o) => o.answer?.status === 503);
    expect(stalled.length).toBeGreaterThan(0);
    expect(Math.max(...stalled.map((o) => o.ms))).toBeLessThan(CONNECT_TIMEOUT_MS + QUERY_TIMEOUT_MS + 5_000);
    expectAllSucceededSince(outcomes, back + RESUME_MS);
    expect((await server.request('GET', '/readyz')).status).toBe(200);
    await expectCallsDispatched();
  });
});
