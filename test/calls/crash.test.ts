/**
 * Crash safety of the call pipeline: the real server as a child process (file-backed PGlite, or
 * PostgreSQL with TEST_DATABASE=postgres), 200 webhook requests, SIGKILL part-way, restart.
 * Every call answered 202 exists afterwards and reaches a final state, and the simulated carrier
 * holds exactly one dial per call, asked for once (the pipeline's claim-and-resolve path).
 */
import fs from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { type Database, openDatabase } from '../../src/core/db/database.js';
import {
  createPostgresDatabase,
  dropPostgresDatabase,
  ENGINE,
  migratedDataDir,
} from '../support/databases.js';
import { type ServerProcess, startServerProcess } from '../support/server-process.js';
import { allCalls, ok as okAs, publishedAgents } from './crash-fixture.js';

const ADMIN = 'crash-test-admin-token-0123456789';
const AGENTS = 10;
// Each webhook id allows bursts of 20 (docs/design-choices.md): 10 agents take 200 requests at once.
const PER_AGENT = 20;
const KILL_AFTER = 80;
const FINAL = new Set(['completed', 'no_answer', 'failed']);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

let dataDir: string | undefined;
let databaseUrl: string | undefined;
const servers: ServerProcess[] = [];

afterAll(async () => {
  for (const server of servers) await server.kill('SIGKILL');
  if (databaseUrl) await dropPostgresDatabase(databaseUrl);
  if (dataDir) fs.rmSync(dataDir, { recursive: true, force: true });
});

async function start(env: Record<string, string | null>): Promise<ServerProcess> {
  const server = await startServerProcess({
    env: { ...env, ADMIN_TOKEN: ADMIN, LOG_LEVEL: 'warn', JOB_LEASE_SECONDS: '5' },
  });
  servers.push(server);
  return server;
}

const ok = (server: ServerProcess, method: string, url: string, body?: unknown, token = ADMIN) =>
  okAs(server, method, url, body, token);

describe(`crash safety (${ENGINE})`, () => {
  it('keeps every 202 call through a SIGKILL: each reaches a final state, dialled once', {
    timeout: 240_000,
  }, async () => {
    const env: Record<string, string | null> = {
      // Calls that really last 2 s, so the kill finds calls queued, dialing and in progress.
      SIMULATED_REALTIME: 'true',
      SIMULATED_CALL_SECONDS: '2',
    };
    if (ENGINE === 'postgres') {
      databaseUrl = await createPostgresDatabase();
      env.DATABASE_URL = databaseUrl;
    } else {
      dataDir = await migratedDataDir('crash-');
      env.DATA_DIR = dataDir;
    }

    let server = await start(env);
    const tenant = await ok(server, 'POST', '/admin/v1/tenants', { name: 'Crash Agency' });
    const key = await ok(server, 'POST', `/admin/v1/tenants/${tenant.id}/api-keys`, {
      scopes: ['users:write'],
    });
    const webhooks = await publishedAgents(server, {
      adminToken: ADMIN,
      tenantId: tenant.id,
      apiKey: key.key,
      agents: AGENTS,
    });

    // 200 requests, 8 at a time; SIGKILL once KILL_AFTER have been answered 202.
    const accepted = new Set<string>();
    let failedRequests = 0;
    let killed: Promise<unknown> | undefined;
    const victim = server;
    const requests = Array.from({ length: AGENTS * PER_AGENT }, (_, i) => ({
      webhook: webhooks[i % AGENTS],
      // A few numbers that do not answer or fail, so every final state occurs.
      phone:
        i % 10 === 3
          ? '+14155550000'
          : i % 10 === 7
            ? '+14155559999'
            : `+1415555${String(1000 + i).padStart(4, '0')}`,
    }));
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < requests.length) {
          const { webhook, phone } = requests[next++];
          try {
            const response = await victim.request('POST', `/webhooks/agents/${webhook}/trigger`, {
              body: { phone, name: 'Ada', index: next },
              timeoutMs: 10_000,
            });
            if (response.status === 202) accepted.add(response.body.data.id);
            else failedRequests++;
          } catch {
            failedRequests++;
          }
          if (accepted.size >= KILL_AFTER && !killed) killed = victim.kill('SIGKILL');
        }
      }),
    );
    expect(await killed).toBe('SIGKILL');
    expect(accepted.size).toBeGreaterThanOrEqual(KILL_AFTER);
    expect(accepted.size).toBeLessThan(requests.length);

    // Restart on the same database; the worker picks up queued calls at once and the killed
    // process's claimed ones when their lease (JOB_LEASE_SECONDS, 5 s here) runs out.
    const restartedAt = Date.now();
    server = await start(env);
    let calls = new Map<string, any>();
    const deadline = Date.now() + 120_000;
    for (;;) {
      calls = await allCalls(server, ADMIN);
      const pending = [...calls.values()].filter((call) => !FINAL.has(call.status));
      if (pending.length === 0 && [...accepted].every((id) => calls.has(id))) break;
      if (Date.now() > deadline)
        throw new Error(`calls still pending: ${JSON.stringify(pending.slice(0, 5))}`);
      await sleep(500);
    }
    const recoveredInMs = Date.now() - restartedAt;
    for (const id of accepted) expect(FINAL.has(calls.get(id)?.status)).toBe(true);
    const byStatus: Record<string, number> = {};
    for (const call of calls.values()) byStatus[call.status] = (byStatus[call.status] ?? 0) + 1;
    expect(byStatus.completed).toBeGreaterThan(0);
    expect(byStatus.no_answer).toBeGreaterThan(0);
    expect(byStatus.failed).toBeGreaterThan(0);
    expect(await server.stop()).toBe(0);

    // The carrier's own record, read once the server has let go of the database.
    let database: Database | undefined;
    try {
      database = await openDatabase({ databaseUrl, dataDir: dataDir ?? '' });
      const dials = await database.db.selectFrom('telephony_simulated_dials').selectAll().execute();
      const dialsByCall = new Map(dials.map((dial) => [dial.call_id, dial]));
      expect(dials).toHaveLength(dialsByCall.size);
      for (const call of calls.values()) {
        const dial = dialsByCall.get(call.id);
        expect(dial, `call ${call.id} was never dialled`).toBeDefined();
        expect(dial!.outcome).toBe(call.status === 'completed' ? 'answered' : call.status);
      }
      expect(dialsByCall.size).toBe(calls.size);
      const debits = await database.db
        .selectFrom('credit_ledger')
        .select(['reference', 'minutes'])
        .where('reference', 'like', 'call:%')
        .execute();
      expect(debits).toHaveLength(byStatus.completed);
      expect(debits.every((debit) => debit.minutes === -1)).toBe(true);
      // No job gave up. A job the killed process had claimed after its call was already final
      // may still be 'running' until its lease lapses; it then finds nothing to do.
      const jobs = await database.db
        .selectFrom('jobs')
        .select(['status'])
        .where('queue', 'like', 'calls.%')
        .where('status', '!=', 'done')
        .execute();
      expect(jobs.filter((job) => job.status !== 'running')).toEqual([]);
      // The carrier was asked once per call: a run that found the claim of an earlier one found
      // the carrier's record, or sent the claimed request once it had settled (engine-dials.ts).
      const asked = dials.map((dial) => dial.dial_requests);
      expect(asked.filter((n) => n > 1)).toEqual([]);
      console.info(
        `[crash ${ENGINE}] 202s ${accepted.size}, stored ${calls.size}, refused/cut ${failedRequests}, ` +
          `statuses ${JSON.stringify(byStatus)}, dials ${dials.length} (asked twice or more: ${asked.filter((n) => n > 1).length}), ` +
          `orphaned jobs left ${jobs.length}, recovered in ${recoveredInMs} ms`,
      );
    } finally {
      await database?.close();
    }
  });
});
