/**
 * At-least-once delivery through a crash (platform contract §3): the real server as a child
 * process on PostgreSQL, 200 calls completing, SIGKILL part-way through their `call.completed`
 * deliveries, restart on the same database. Every completed call's event reaches the receiver
 * (a real HTTP server verifying each delivery with `standardwebhooks`) at least once: the
 * distinct webhook-ids received are exactly the completed calls' events, none lost.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { allCalls, ok as okAs, publishedAgents } from '../calls/crash-fixture.js';
import { emptyPostgresDatabase, postgresAvailable, warnWithoutPostgres } from '../operations/postgres.js';
import { type ServerProcess, startServerProcess } from '../support/server-process.js';
import { type Receiver, startReceiver } from './helpers.js';

warnWithoutPostgres('test/events/crash.test.ts');

const ADMIN = 'event-crash-admin-token-0123456789';
const AGENTS = 10;
// Each webhook id allows bursts of 20 (docs/design-choices.md): 10 agents take 200 requests at once.
const PER_AGENT = 20;
const CALLS = AGENTS * PER_AGENT;
/** SIGKILL once this many call.completed events have arrived. */
const KILL_AFTER = 30;
const FINAL = new Set(['completed', 'no_answer', 'failed']);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

const servers: ServerProcess[] = [];
let drop: (() => Promise<void>) | undefined;
let receiver: Receiver | undefined;

afterAll(async () => {
  for (const server of servers) await server.kill('SIGKILL');
  await receiver?.close();
  await drop?.();
});

const ok = (server: ServerProcess, method: string, url: string, body?: unknown, token = ADMIN) =>
  okAs(server, method, url, body, token);

/** Distinct call.completed events received: webhook-id → the call id in its body. */
function completedEvents(from: Receiver): Map<string, string> {
  const events = new Map<string, string>();
  for (const received of from.received) {
    const body = JSON.parse(received.body);
    if (body.type === 'call.completed')
      events.set(String(received.headers['webhook-id']), body.data.object.id);
  }
  return events;
}

describe.skipIf(!postgresAvailable)('event delivery through a SIGKILL (PostgreSQL)', () => {
  it('delivers every call.completed event at least once after a restart', { timeout: 300_000 }, async () => {
    const fresh = await emptyPostgresDatabase();
    drop = fresh.drop;
    const env = {
      DATABASE_URL: fresh.url,
      ADMIN_TOKEN: ADMIN,
      LOG_LEVEL: 'warn',
      // The killed process's jobs are taken over once their lease lapses: 5 s instead of 15.
      JOB_LEASE_SECONDS: '5',
      // Calls that really last a second, so the kill finds calls completing and events in flight.
      SIMULATED_REALTIME: 'true',
      SIMULATED_CALL_SECONDS: '1',
      // The receiver is this test, on 127.0.0.1.
      WEBHOOK_ALLOW_PRIVATE: 'true',
    };
    const start = async () => {
      const server = await startServerProcess({ env });
      servers.push(server);
      return server;
    };
    let server = await start();
    receiver = await startReceiver('/events');

    const tenant = await ok(server, 'POST', '/admin/v1/tenants', { name: 'Event Crash' });
    const key = await ok(server, 'POST', `/admin/v1/tenants/${tenant.id}/api-keys`, {
      scopes: ['users:write', 'webhooks:read', 'webhooks:write'],
    });
    const endpoint = await ok(
      server,
      'POST',
      '/api/v1/webhook-endpoints',
      { url: receiver.url, events: ['call.completed'] },
      key.key,
    );
    receiver.secret = endpoint.secret;
    const webhooks = await publishedAgents(server, {
      adminToken: ADMIN,
      tenantId: tenant.id,
      apiKey: key.key,
      agents: AGENTS,
    });

    // 200 calls to numbers that answer, 8 requests at a time.
    let next = 0;
    const accepted: string[] = [];
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        while (next < CALLS) {
          const i = next++;
          const response = await server.request('POST', `/webhooks/agents/${webhooks[i % AGENTS]}/trigger`, {
            body: { phone: `+1415555${String(1000 + i).padStart(4, '0')}`, name: 'Ada' },
          });
          expect(response.status, response.raw).toBe(202);
          accepted.push(response.body.data.id);
        }
      }),
    );

    // SIGKILL while the calls complete and their events go out.
    for (let waited = 0; completedEvents(receiver).size < KILL_AFTER; waited += 50) {
      if (waited > 120_000) throw new Error(`only ${completedEvents(receiver).size} events before the kill`);
      await sleep(50);
    }
    expect(await server.kill('SIGKILL')).toBe('SIGKILL');
    const atKill = completedEvents(receiver).size;
    expect(atKill).toBeLessThan(CALLS);

    // Restarted on the same database: every call ends, and every completed one's event arrives.
    server = await start();
    let calls = new Map<string, any>();
    let completed: string[] = [];
    const deadline = Date.now() + 180_000;
    for (;;) {
      calls = await allCalls(server, ADMIN);
      completed = [...calls.values()].filter((call) => call.status === 'completed').map((call) => call.id);
      const settled = [...calls.values()].every((call) => FINAL.has(call.status));
      const delivered = new Set(completedEvents(receiver).values());
      if (settled && completed.every((id) => delivered.has(id))) break;
      if (Date.now() > deadline) {
        const missing = completed.filter((id) => !delivered.has(id));
        throw new Error(`after the restart: ${missing.length} completed calls without an event`);
      }
      await sleep(500);
    }
    expect(calls.size).toBe(CALLS);
    expect([...calls.keys()].sort()).toEqual([...accepted].sort());

    const events = completedEvents(receiver);
    // One event per completed call: as many distinct webhook-ids as completed calls, each call once.
    expect(events.size).toBe(completed.length);
    expect(new Set(events.values()).size).toBe(completed.length);
    expect(receiver.received.every((r) => r.error === undefined)).toBe(true);
    // The events list agrees: one call.completed per completed call.
    const listed = new Set<string>();
    for (let page = 1; ; page++) {
      const response = await server.request(
        'GET',
        `/api/v1/events?type=call.completed&limit=100&page=${page}`,
        {
          token: key.key,
        },
      );
      for (const event of response.body.data) listed.add(event.id);
      if (!response.body.pagination.has_more) break;
    }
    expect(listed).toEqual(new Set(events.keys()));
    console.info(
      `[event crash] calls ${calls.size}, completed ${completed.length}, events at the kill ${atKill}, ` +
        `distinct after restart ${events.size}, deliveries received ${receiver.received.length} ` +
        `(${receiver.received.length - events.size} repeated)`,
    );
    expect(await server.stop()).toBe(0);
  });
});
