/**
 * Exactly one engine call per call attempt through crashes, against local servers speaking Vapi's
 * and Retell's published APIs (test/support/fake-vapi.ts, fake-retell.ts): the real server as a
 * child process with TELEPHONY=vapi or retell, 150 webhook triggers, three SIGKILLs while calls
 * are being dispatched, each followed by a restart on the same port (the engines' callbacks go
 * there). The engine answers each create after a moment, so kills find requests on the way; it
 * plays each call it created to its end, delivering every callback until the service takes it.
 *
 * Afterwards every call the service stored reached the engine exactly once (one create request,
 * one engine call, with our call id and attempt in its metadata) and ended: 0 asked twice, 0 never
 * dialled, 0 left dialing. A claim whose request never left (killed in between) was sent once the
 * request had settled, by the run that found the engine holding nothing; one whose answer was lost
 * was adopted from the engine's list.
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
import { type FakeRetell, startFakeRetell } from '../support/fake-retell.js';
import { type FakeVapi, startFakeVapi } from '../support/fake-vapi.js';
import { freePort, type ServerProcess, startServerProcess } from '../support/server-process.js';
import { allCalls, ok as okAs, publishedAgents } from './crash-fixture.js';

const ADMIN = 'engine-crash-admin-token-0123456789';
const VAPI_SECRET = 'vapi-server-secret-0123456789';
const AGENT_NUMBER = '+14155550199';
// Each webhook id allows bursts of 20: 15 agents take all the requests at once.
const AGENTS = 15;
const TRIGGERS = 150;
const KILL_AT = [35, 75, 115];
const FINAL = new Set(['completed', 'no_answer', 'failed']);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const servers: ServerProcess[] = [];
const cleanups: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const server of servers) await server.kill('SIGKILL');
  for (const cleanup of cleanups) await cleanup();
});

/** A fresh database for one engine's run, on the suite's engine. */
async function databaseEnv(): Promise<{ env: Record<string, string>; open(): Promise<Database> }> {
  if (ENGINE === 'postgres') {
    const url = await createPostgresDatabase();
    cleanups.push(() => dropPostgresDatabase(url));
    return { env: { DATABASE_URL: url }, open: () => openDatabase({ databaseUrl: url, dataDir: '' }) };
  }
  const dataDir = await migratedDataDir('engine-crash-');
  cleanups.push(async () => fs.rmSync(dataDir, { recursive: true, force: true }));
  return {
    env: { DATA_DIR: dataDir },
    open: () => openDatabase({ databaseUrl: undefined, dataDir }),
  };
}

interface EngineUnderTest {
  env: Record<string, string>;
  /** Create requests the engine received, by our call id and attempt (any answer). */
  createRequests(): Map<string, number>;
  /** Calls the engine created, by our call id and attempt. */
  createdCalls(): Map<string, string[]>;
  /** Create requests whose answer never reached the service (it died first). */
  lostAnswers(): number;
  /** Times the service asked the engine what it holds (its list of calls). */
  finds(): number;
  playing(): number;
  close(): Promise<void>;
}

const keyOf = (metadata: Record<string, unknown> | undefined) =>
  `${String(metadata?.voiceplane_call_id)}/${String(metadata?.voiceplane_attempt)}`;

function countBy<T>(items: T[], key: (item: T) => string): Map<string, number> {
  const counts = new Map<string, number>();
  for (const item of items) counts.set(key(item), (counts.get(key(item)) ?? 0) + 1);
  return counts;
}

async function vapiUnderTest(): Promise<EngineUnderTest> {
  const vapi: FakeVapi = await startFakeVapi({
    phoneNumbers: [AGENT_NUMBER],
    serverSecret: VAPI_SECRET,
    answerDelayMs: 250,
    autoPlay: { afterMs: 500 },
  });
  const creates = () => vapi.requests.filter((r) => r.method === 'POST' && r.path === '/call');
  return {
    env: {
      TELEPHONY: 'vapi',
      VAPI_API_KEY: vapi.apiKey,
      VAPI_API_BASE: vapi.url,
      VAPI_SERVER_SECRET: VAPI_SECRET,
      VAPI_SERVER_CREDENTIAL_ID: 'cred_engine_crash',
    },
    createRequests: () => countBy(creates(), (r) => keyOf((r.body as any)?.assistant?.metadata)),
    createdCalls() {
      const created = new Map<string, string[]>();
      for (const { call } of vapi.calls.values()) {
        const key = keyOf(call.assistant?.metadata);
        created.set(key, [...(created.get(key) ?? []), call.id]);
      }
      return created;
    },
    lostAnswers: () => vapi.lostAnswers,
    finds: () => vapi.requests.filter((r) => r.method === 'GET' && r.path === '/call').length,
    playing: () => vapi.playing,
    close: () => vapi.close(),
  };
}

async function retellUnderTest(): Promise<EngineUnderTest> {
  const retell: FakeRetell = await startFakeRetell({ answerDelayMs: 250, autoPlay: { afterMs: 500 } });
  const creates = () => retell.requestsTo('POST', '/v2/create-phone-call');
  return {
    env: { TELEPHONY: 'retell', RETELL_API_KEY: retell.apiKey, RETELL_API_BASE: retell.url },
    createRequests: () => countBy(creates(), (r) => keyOf((r.body as any)?.metadata)),
    createdCalls() {
      const created = new Map<string, string[]>();
      for (const call of retell.calls) {
        const key = keyOf(call.metadata as Record<string, unknown>);
        created.set(key, [...(created.get(key) ?? []), call.call_id as string]);
      }
      return created;
    },
    lostAnswers: () => retell.lostAnswers,
    finds: () => retell.requestsTo('POST', '/v2/list-calls').length,
    playing: () => retell.playing,
    close: () => retell.close(),
  };
}

describe(`exactly one engine call per attempt through SIGKILLs (${ENGINE})`, () => {
  it.concurrent.each([
    ['vapi', vapiUnderTest],
    ['retell', retellUnderTest],
  ])(
    '%s: 150 triggers, three SIGKILLs mid-dispatch: every call dialled once and ended',
    {
      timeout: 180_000,
    },
    async (name, makeEngine) => {
      const engine = await makeEngine();
      cleanups.push(() => engine.close());
      const database = await databaseEnv();
      const port = await freePort();
      const env: Record<string, string> = {
        ...database.env,
        ...engine.env,
        PORT: String(port),
        PUBLIC_BASE_URL: `http://127.0.0.1:${port}`,
        ADMIN_TOKEN: ADMIN,
        LOG_LEVEL: 'warn',
        // The killed process's jobs are taken over once their lease lapses: 5 s instead of 15.
        JOB_LEASE_SECONDS: '5',
      };
      const start = async () => {
        const server = await startServerProcess({ env });
        servers.push(server);
        return server;
      };
      const startedAt = Date.now();
      let server = await start();
      const ok = (method: string, url: string, body?: unknown, token = ADMIN) =>
        okAs(server, method, url, body, token);
      const tenant = await ok('POST', '/admin/v1/tenants', { name: `Crash ${name}` });
      const key = await ok('POST', `/admin/v1/tenants/${tenant.id}/api-keys`, { scopes: ['users:write'] });
      const webhooks = await publishedAgents(server, {
        adminToken: ADMIN,
        tenantId: tenant.id,
        apiKey: key.key,
        agents: AGENTS,
      });

      // The triggers, 8 at a time; at each of KILL_AT answered 202s the server is SIGKILLed with
      // calls on the way to the engine, and started again. Requests cut by a kill are not retried.
      const accepted = new Set<string>();
      let cut = 0;
      let next = 0;
      const kills = [...KILL_AT];
      let restarting: Promise<void> | undefined;
      const restart = async () => {
        expect(await server.kill('SIGKILL')).toBe('SIGKILL');
        server = await start();
      };
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < TRIGGERS) {
            await restarting;
            const i = next++;
            try {
              const response = await server.request(
                'POST',
                `/webhooks/agents/${webhooks[i % AGENTS]}/trigger`,
                {
                  body: { phone: `+1415555${String(1000 + i).padStart(4, '0')}`, name: 'Ada' },
                  timeoutMs: 10_000,
                },
              );
              if (response.status === 202) accepted.add(response.body.data.id);
              else cut++;
            } catch {
              cut++;
            }
            if (kills.length > 0 && accepted.size >= kills[0] && !restarting) {
              kills.shift();
              restarting = restart().finally(() => {
                restarting = undefined;
              });
            }
          }
        }),
      );
      await restarting;
      expect(kills).toEqual([]);
      const restartedAt = Date.now();

      // Every stored call ends: adopted or dialled once its claim has settled, then played.
      let calls = new Map<string, any>();
      const deadline = Date.now() + 120_000;
      for (;;) {
        calls = await allCalls(server, ADMIN);
        const pending = [...calls.values()].filter((call) => !FINAL.has(call.status));
        if (pending.length === 0 && engine.playing() === 0 && [...accepted].every((id) => calls.has(id)))
          break;
        if (Date.now() > deadline)
          throw new Error(`${pending.length} calls still pending: ${JSON.stringify(pending.slice(0, 3))}`);
        await sleep(500);
      }
      const settledInMs = Date.now() - restartedAt;
      expect(await server.stop()).toBe(0);

      const requests = engine.createRequests();
      const created = engine.createdCalls();
      const askedTwice = [...requests.values()].filter((n) => n > 1).length;
      const createdTwice = [...created.values()].filter((ids) => ids.length > 1).length;
      const neverDialled = [...calls.values()].filter((call) => !created.has(`${call.id}/1`)).length;
      const leftDialing = [...calls.values()].filter((call) => call.status === 'dialing').length;
      for (const id of accepted) expect(calls.get(id)?.status, `call ${id}`).toBe('completed');
      for (const call of calls.values()) {
        expect(call.status, `call ${call.id}`).toBe('completed');
        expect(created.get(`${call.id}/1`), `engine calls of ${call.id}`).toHaveLength(1);
        expect(requests.get(`${call.id}/1`), `create requests for ${call.id}`).toBe(1);
      }
      // Nothing at the engine that is not one of the stored calls' attempts.
      expect([...created.keys()].filter((key) => !calls.has(key.split('/')[0]))).toEqual([]);
      expect({ askedTwice, createdTwice, neverDialled, leftDialing }).toEqual({
        askedTwice: 0,
        createdTwice: 0,
        neverDialled: 0,
        leftDialing: 0,
      });

      const db = await database.open();
      try {
        const claims = await db.db
          .selectFrom('engine_dials')
          .select(['call_id', 'attempt', 'requests', 'engine_call_id'])
          .execute();
        expect(claims).toHaveLength(calls.size);
        // Each claim holds the id of the one engine call of its attempt, and so does its call.
        for (const claim of claims)
          expect([claim.engine_call_id]).toEqual(created.get(`${claim.call_id}/${claim.attempt}`));
        const stored = await db.db.selectFrom('calls').select(['id', 'engine_call_id']).execute();
        for (const call of stored) expect([call.engine_call_id]).toEqual(created.get(`${call.id}/1`));
        const resent = claims.filter((claim) => claim.requests > 1).length;
        console.info(
          `[engine crash ${name} ${ENGINE}] triggers ${TRIGGERS}, 202s ${accepted.size}, stored ${calls.size}, ` +
            `cut by kills ${cut}; claims sent after the engine was found holding nothing ${resent}, ` +
            `answers lost with the process ${engine.lostAnswers()}, engine asked what it holds ` +
            `${engine.finds()} times; asked twice ${askedTwice}, ` +
            `never dialled ${neverDialled}, left dialing ${leftDialing}; all ended ${settledInMs} ms after ` +
            `the last restart, ${Date.now() - startedAt} ms in all`,
        );
      } finally {
        await db.close();
      }
    },
  );
});
