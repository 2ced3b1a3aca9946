/**
 * A database outage costs seconds, never a 500 (PostgreSQL only; skipped with a message without it):
 * - a server that stops taking writes (what a demoted primary is for a moment in a failover):
 *   every request answers 503 with Retry-After, and writes succeed again once it takes them;
 * - a pooled connection that failed that way (or any connection failure) is destroyed, never
 *   handed to the next query; a new connection to a read-only server is closed and another tried;
 * - a database that does not answer: 503 within DB_CONNECT_TIMEOUT_MS (2 s by default), and an
 *   Idempotency-Key's reservation is freed after the answer, never before it;
 * - one log line when the database is lost and one when it is back, not one per request or poll.
 */
import Fastify from 'fastify';
import { sql } from 'kysely';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { systemClock } from '../../src/core/clock.js';
import { type Database, openDatabase, runPrepared } from '../../src/core/db/database.js';
import { migrate } from '../../src/core/db/migrate.js';
import { registerErrorHandling } from '../../src/core/http/error-handler.js';
import { createIdempotencyStore, registerIdempotency } from '../../src/core/idempotency/store.js';
import { POSTGRES_URL } from '../support/databases.js';
import { type HttpAnswer, type ServerProcess, startServerProcess } from '../support/server-process.js';
import { startTcpProxy, type TcpProxy } from '../support/tcp-proxy.js';
import { emptyPostgresDatabase, postgresAvailable, warnWithoutPostgres } from './postgres.js';

warnWithoutPostgres('test/operations/database-outages.test.ts');

const ADMIN = 'db-outages-admin-token-0123456789';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function admin(statement: string, values: unknown[] = []): Promise<number> {
  const client = new pg.Client({ connectionString: POSTGRES_URL });
  await client.connect();
  try {
    return (await client.query(statement, values)).rowCount ?? 0;
  } finally {
    await client.end();
  }
}

const terminateBackends = (database: string) =>
  admin(
    'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = $1 AND pid <> pg_backend_pid()',
    [database],
  );

const databaseName = (url: string) => new URL(url).pathname.slice(1);

/** A tenant and an API key that reads and writes users. */
async function provision(server: ServerProcess): Promise<string> {
  const ok = async (path: string, body: unknown) => {
    const answer = await server.request('POST', path, { token: ADMIN, body });
    if (answer.status >= 300) throw new Error(`POST ${path}: ${answer.status} ${answer.raw}`);
    return answer.body.data;
  };
  const tenant = await ok('/admin/v1/tenants', { name: 'Outages Agency' });
  return (await ok(`/admin/v1/tenants/${tenant.id}/api-keys`, { scopes: ['users:read', 'users:write'] })).key;
}

const serverEnv = (url: string, extra: Record<string, string> = {}) => ({
  DATABASE_URL: url,
  ADMIN_TOKEN: ADMIN,
  LOG_LEVEL: 'info',
  RATE_LIMIT_PARTNER_PER_SECOND: '1000000',
  RATE_LIMIT_PARTNER_BURST: '1000000',
  ...extra,
});

let n = 0;
function createUser(server: ServerProcess, key: string, idempotencyKey = `outage-${n}`): Promise<HttpAnswer> {
  const i = n++;
  return server.request('POST', '/api/v1/users', {
    token: key,
    headers: { 'idempotency-key': idempotencyKey },
    body: { email: `outage-${i}@example.com`, name: `Outage ${i}`, password: 'correct horse' },
    timeoutMs: 20_000,
  });
}

function expect503(answer: HttpAnswer, what: string): void {
  expect({ what, status: answer.status, code: answer.body?.error?.code }).toEqual({
    what,
    status: 503,
    code: 'service_unavailable',
  });
  expect(Number(answer.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
}

const outageLines = (server: ServerProcess) => {
  const lines = server.logLines();
  return {
    lost: lines.filter((l) => /^database unavailable/.test(l.msg)),
    back: lines.filter((l) => /^database available again/.test(l.msg)),
    perRequest: lines.filter((l) =>
      /request failed|job poll failed|job will retry|could not store/.test(l.msg),
    ),
  };
};

describe.skipIf(!postgresAvailable)('database outages (PostgreSQL)', { timeout: 120_000 }, () => {
  describe('a server that does not take writes (a demoted primary)', () => {
    let server: ServerProcess;
    let drop: () => Promise<void>;
    let name: string;
    let key: string;

    beforeAll(async () => {
      const database = await emptyPostgresDatabase();
      drop = database.drop;
      name = databaseName(database.url);
      server = await startServerProcess({ env: serverEnv(database.url, { DB_CONNECT_TIMEOUT_MS: '1000' }) });
      key = await provision(server);
    });
    afterAll(async () => {
      await server?.kill('SIGKILL');
      await admin(`ALTER DATABASE ${name} RESET default_transaction_read_only`).catch(() => {});
      await drop?.();
    });

    it('every request answers 503 with Retry-After (never 500), and writes succeed again once it takes them', async () => {
      expect((await createUser(server, key)).status).toBe(201);
      await admin(`ALTER DATABASE ${name} SET default_transaction_read_only = on`);
      // The pooled connections were opened read-write: the server's restart as a standby ends them.
      await terminateBackends(name);

      const answers = await Promise.all([
        createUser(server, key),
        createUser(server, key),
        createUser(server, key),
        server.request('GET', '/api/v1/users', { token: key }),
      ]);
      for (const [i, answer] of answers.entries()) expect503(answer, `request ${i}`);
      for (let i = 0; i < 3; i++) {
        const started = Date.now();
        expect503(await createUser(server, key), `write ${i}`);
        // A new connection is tried for at most DB_CONNECT_TIMEOUT_MS (1 s here), then refused.
        expect(Date.now() - started).toBeLessThan(3_000);
      }

      await admin(`ALTER DATABASE ${name} RESET default_transaction_read_only`);
      const back = Date.now();
      expect((await createUser(server, key)).status).toBe(201);
      expect(Date.now() - back).toBeLessThan(2_000);

      await sleep(1_500);
      expect((await createUser(server, key)).status).toBe(201);
      const { lost, back: again, perRequest } = outageLines(server);
      expect(lost.length).toBe(1);
      expect(again.length).toBe(1);
      expect(perRequest).toEqual([]);
    });
  });

  describe('the pool (in this process)', () => {
    let url: string;
    let drop: () => Promise<void>;
    const opened: Database[] = [];

    beforeAll(async () => {
      ({ url, drop } = await emptyPostgresDatabase());
      const database = await openDatabase({ databaseUrl: url, dataDir: '' });
      await sql`CREATE TABLE outage_probe (x int)`.execute(database.db);
      await database.close();
    });
    afterAll(async () => {
      for (const database of opened) await database.close().catch(() => {});
      await admin(`ALTER DATABASE ${databaseName(url)} RESET default_transaction_read_only`).catch(() => {});
      await drop?.();
    });

    const open = async (connectMs = 1_000) => {
      const database = await openDatabase({
        databaseUrl: url,
        dataDir: '',
        poolSize: 1,
        timeouts: { statementMs: 5_000, queryMs: 10_000, connectMs },
      });
      opened.push(database);
      return database;
    };
    const backendPid = async (database: Database) =>
      (await sql<{ pid: number }>`SELECT pg_backend_pid() AS pid`.execute(database.db)).rows[0].pid;

    it('a connection whose query found the server read-only is destroyed, not handed out again', async () => {
      const database = await open();
      const insert = {
        kysely: () => sql`INSERT INTO outage_probe VALUES (1)`.execute(database.db),
        prepared: () =>
          runPrepared(database.db, {
            name: 'outage_probe_insert',
            text: 'INSERT INTO outage_probe VALUES (2)',
            values: [],
          }),
      };
      for (const [path, run] of Object.entries(insert)) {
        // The pool's only connection turns read-only, as a primary being demoted does.
        await sql`SET SESSION CHARACTERISTICS AS TRANSACTION READ ONLY`.execute(database.db);
        const before = await backendPid(database);
        await expect(run(), path).rejects.toMatchObject({ code: '25006' });
        await run();
        expect(await backendPid(database), path).not.toBe(before);
      }
    });

    it('a new connection to a read-only server is closed and another tried, within the connect timeout', async () => {
      await admin(`ALTER DATABASE ${databaseName(url)} SET default_transaction_read_only = on`);
      try {
        const refused = await open(800);
        const started = Date.now();
        await expect(sql`INSERT INTO outage_probe VALUES (3)`.execute(refused.db)).rejects.toMatchObject({
          code: '25006',
        });
        // Tried again until (about) the connect timeout, not refused at the first read-only answer.
        expect(Date.now() - started).toBeGreaterThanOrEqual(400);
        expect(Date.now() - started).toBeLessThan(2_500);
        expect(refused.health.available).toBe(false);

        // The server takes writes again while a query waits for a connection: it gets one.
        const waiting = await open(3_000);
        const insert = sql`INSERT INTO outage_probe VALUES (4)`.execute(waiting.db);
        await sleep(300);
        await admin(`ALTER DATABASE ${databaseName(url)} RESET default_transaction_read_only`);
        await insert;
      } finally {
        await admin(`ALTER DATABASE ${databaseName(url)} RESET default_transaction_read_only`);
      }
    });

    it('an Idempotency-Key refused with a 503 is freed after the answer, never before it', async () => {
      const { database, proxy } = await (async () => {
        const migrated = await openDatabase({ databaseUrl: url, dataDir: '' });
        await migrate(migrated);
        await migrated.close();
        const target = new URL(url);
        const p = await startTcpProxy({ host: target.hostname, port: Number(target.port || 5432) });
        target.host = `127.0.0.1:${p.port}`;
        const d = await openDatabase({
          databaseUrl: target.toString(),
          dataDir: '',
          timeouts: { statementMs: 2_000, queryMs: 3_000, connectMs: 1_500 },
        });
        opened.push(d);
        return { database: d, proxy: p };
      })();
      try {
        await sql`INSERT INTO tenants (id, name, created_at, updated_at) VALUES ('ten_outage', 'Outage', now(), now())`.execute(
          database.db,
        );
        const app = Fastify();
        registerErrorHandling(app);
        registerIdempotency(
          app,
          createIdempotencyStore({ db: database.db, clock: systemClock }),
          () => 'ten_outage',
        );
        // The key is claimed, then the database goes away under the handler and stalls.
        app.post('/things', { config: { idempotent: true } }, async () => {
          proxy.cut();
          await sleep(100);
          proxy.pause();
          throw new Error('Connection terminated unexpectedly');
        });
        await app.ready();
        const started = Date.now();
        const answer = await app.inject({
          method: 'POST',
          url: '/things',
          headers: { 'idempotency-key': 'stalled-1' },
          payload: { a: 1 },
        });
        expect(answer.statusCode).toBe(503);
        expect(answer.headers['retry-after']).toBe('1');
        // Before: freeing the key waited for the stalled database (the connect timeout) first.
        expect(Date.now() - started).toBeLessThan(700);
        await app.close();

        proxy.resume();
        // Freed in the background once the database answers: a retry executes at once.
        const deadline = Date.now() + 5_000;
        for (;;) {
          const { rows } = await sql<{
            n: number;
          }>`SELECT count(*)::int AS n FROM idempotency_keys WHERE key = 'stalled-1'`.execute(database.db);
          if (rows[0].n === 0) break;
          expect(Date.now()).toBeLessThan(deadline);
          await sleep(100);
        }
      } finally {
        proxy.resume();
        await proxy.close();
      }
    });
  });

  describe('a database that does not answer, then comes back (through a TCP proxy)', () => {
    let server: ServerProcess;
    let proxy: TcpProxy;
    let drop: () => Promise<void>;
    let key: string;

    beforeAll(async () => {
      const database = await emptyPostgresDatabase();
      drop = database.drop;
      const url = new URL(database.url);
      proxy = await startTcpProxy({ host: url.hostname, port: Number(url.port || 5432) });
      url.host = `127.0.0.1:${proxy.port}`;
      // DB_CONNECT_TIMEOUT_MS is left to its default.
      server = await startServerProcess({ env: serverEnv(url.toString(), { WORKERS: '1' }) });
      key = await provision(server);
    });
    afterAll(async () => {
      await server?.kill('SIGKILL');
      await proxy?.close();
      await drop?.();
    });

    it('requests answer 503 within the connect timeout (2 s by default), then succeed again', async () => {
      expect((await createUser(server, key)).status).toBe(201);
      proxy.pause();
      proxy.cut();
      for (const request of [
        () => createUser(server, key),
        () => server.request('GET', '/api/v1/users', { token: key, timeoutMs: 20_000 }),
      ]) {
        const started = Date.now();
        expect503(await request(), 'while the database does not answer');
        expect(Date.now() - started).toBeLessThan(2_000 + 1_500);
      }
      proxy.resume();
      proxy.cut();
      const back = Date.now();
      for (;;) {
        const answer = await createUser(server, key);
        if (answer.status === 201) break;
        expect503(answer, 'while reconnecting');
        expect(Date.now() - back).toBeLessThan(5_000);
      }
    });

    it('one log line when the database is lost, one when it is back (with the outage), none per request or poll', async () => {
      // The previous outage has been closed (its "back" line written).
      for (let i = 0; i < 50; i++) {
        const { lost, back } = outageLines(server);
        if (lost.length === back.length) break;
        await sleep(100);
      }
      const before = outageLines(server);
      expect(before.lost.length).toBe(before.back.length);
      let running = true;
      const statuses: number[] = [];
      const load = Array.from({ length: 4 }, async () => {
        while (running) {
          statuses.push((await server.request('GET', '/api/v1/users?limit=5', { token: key })).status);
          await sleep(20);
        }
      });
      await sleep(300);
      proxy.cut();
      await proxy.down();
      // Longer than the connect timeout (2 s), within which a request waits for the database.
      await sleep(3_000);
      await proxy.up();
      const up = Date.now();
      while (statuses.at(-1) !== 200) {
        expect(Date.now() - up).toBeLessThan(10_000);
        await sleep(50);
      }
      await sleep(1_500);
      running = false;
      await Promise.all(load);

      expect(statuses.filter((s) => s !== 200 && s !== 503)).toEqual([]);
      expect(statuses.filter((s) => s === 503).length).toBeGreaterThanOrEqual(4);
      const after = outageLines(server);
      const lost = after.lost.slice(before.lost.length);
      const back = after.back.slice(before.back.length);
      expect(lost.length).toBe(1);
      expect(back.length).toBe(1);
      expect(back[0].outage_ms).toBeGreaterThanOrEqual(2_500);
      expect(back[0].outage_ms).toBeLessThan(Date.now() - up + 4_000);
      expect(after.perRequest).toEqual([]);
    });
  });
});
