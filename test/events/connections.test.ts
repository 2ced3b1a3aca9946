/**
 * Kept-alive connections to webhook endpoints (src/events/connections.ts): deliveries to one
 * endpoint share a few connections; a connection is used only for the addresses the SSRF guard
 * checked at that attempt; an answer longer than 4 KiB closes its connection; closing the service
 * closes them all, without cutting a request in flight.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import type { ResolvedAddress } from '../../src/core/security/outbound-addresses.js';
import { createEndpointConnections, type PostRequest } from '../../src/events/connections.js';
import { ENDPOINT_CONCURRENCY } from '../../src/events/delivery.js';
import { createTenant, createUser, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { type Receiver, startReceiver } from './helpers.js';

const names: Record<string, ResolvedAddress[]> = {};
const resolveHost = async (host: string) => {
  const found = names[host];
  if (!found) throw new Error(`ENOTFOUND ${host}`);
  return found;
};

const clock = new ManualClock(new Date());
let t: TestApp;
let a: TestTenant;
let closed = false;
const receivers: Receiver[] = [];

beforeAll(async () => {
  t = await startTestApp({
    clock,
    env: { WEBHOOK_ALLOW_PRIVATE: 'true' },
    adapters: () => ({ resolveHost }),
  });
  a = await createTenant(t, { name: 'Connections' });
});
afterAll(async () => {
  if (!closed) await t.close();
  await Promise.all(receivers.map((r) => r.close()));
});

async function receiverAt(url: (receiver: Receiver) => string, answerBody = 'ok') {
  const receiver = await startReceiver();
  receivers.push(receiver);
  receiver.answerBody = answerBody;
  const created = await a.request('POST', '/api/v1/webhook-endpoints', {
    url: url(receiver),
    events: ['user.created'],
  });
  expect(created.status, created.raw).toBe(201);
  receiver.secret = created.body.data.secret;
  return { receiver, endpointId: created.body.data.id as string };
}

async function deliveries(endpointId: string) {
  const log = await a.request('GET', `/api/v1/webhook-endpoints/${endpointId}/deliveries?limit=100`);
  return log.body.data as { status: string; attempts: number; last_response_code: number | null }[];
}

async function removeEndpoint(id: string) {
  expect((await a.request('DELETE', `/api/v1/webhook-endpoints/${id}`)).status).toBe(200);
}

describe('kept-alive connections', () => {
  it('deliveries to one endpoint share a few connections', async () => {
    const { receiver, endpointId } = await receiverAt((r) => r.url);
    // More deliveries than the cap, sent by the running job runner (a drain's batch is smaller).
    const count = ENDPOINT_CONCURRENCY + 10;
    for (let i = 0; i < count; i++) await createUser(a);
    t.services.jobRunner.start();
    await expect.poll(() => receiver.received.length, { timeout: 20_000 }).toBe(count);
    await t.services.jobRunner.stop();
    expect(receiver.received).toHaveLength(count);
    expect(receiver.received.every((r) => r.error === undefined)).toBe(true);
    expect(receiver.connections).toBeGreaterThan(0);
    expect(receiver.connections).toBeLessThanOrEqual(ENDPOINT_CONCURRENCY);
    expect((await deliveries(endpointId)).every((d) => d.status === 'succeeded')).toBe(true);

    // One after the other, they go over one connection.
    const before = receiver.connections;
    for (let i = 0; i < 3; i++) {
      await createUser(a);
      await t.services.jobRunner.drain();
    }
    expect(receiver.received).toHaveLength(count + 3);
    expect(receiver.connections - before).toBeLessThanOrEqual(1);
    await removeEndpoint(endpointId);
  });

  it('an answer longer than 4 KiB is not read to its end: its connection is closed', async () => {
    const { receiver, endpointId } = await receiverAt((r) => r.url, 'x'.repeat(10_000));
    for (let i = 0; i < 3; i++) {
      await createUser(a);
      await t.services.jobRunner.drain();
    }
    expect(receiver.received).toHaveLength(3);
    expect(receiver.connections).toBe(3);
    await expect.poll(() => receiver.openConnections).toBe(0);
    expect((await deliveries(endpointId)).map((d) => d.status)).toEqual(Array(3).fill('succeeded'));
    await removeEndpoint(endpointId);
  });

  it('a kept connection serves only the addresses the guard checked at this attempt', async () => {
    names['hooks.test'] = [{ address: '127.0.0.1', family: 4 }];
    const port = (r: Receiver) => new URL(r.url).port;
    const { receiver, endpointId } = await receiverAt((r) => `http://hooks.test:${port(r)}/hook`);
    await createUser(a);
    await t.services.jobRunner.drain();
    expect(receiver.received).toHaveLength(1);
    expect(receiver.openConnections).toBe(1);

    // The name no longer resolves: the attempt fails before any request, the kept one included.
    delete names['hooks.test'];
    clock.advance(1_000);
    await createUser(a);
    await t.services.jobRunner.drain();
    expect(receiver.received).toHaveLength(1);
    expect((await deliveries(endpointId))[0]).toMatchObject({
      status: 'pending',
      attempts: 1,
      last_response_code: null,
    });

    // It resolves elsewhere (nothing listens there): the retry goes there, not over the kept connection.
    names['hooks.test'] = [{ address: '127.0.0.2', family: 4 }];
    clock.advance(5_000);
    await t.services.jobRunner.drain();
    expect((await deliveries(endpointId))[0]).toMatchObject({ status: 'pending', attempts: 2 });
    expect(receiver.received).toHaveLength(1);
    expect(receiver.connections).toBe(1);

    // Back at the receiver's address: delivered.
    names['hooks.test'] = [{ address: '127.0.0.1', family: 4 }];
    clock.advance(5 * 60_000);
    await t.services.jobRunner.drain();
    expect(receiver.received).toHaveLength(2);
    expect((await deliveries(endpointId))[0]).toMatchObject({ status: 'succeeded', attempts: 3 });
    await removeEndpoint(endpointId);
  });

  it('closing the service closes the kept connections', async () => {
    const { receiver } = await receiverAt((r) => r.url);
    await createUser(a);
    await t.services.jobRunner.drain();
    expect(receiver.received).toHaveLength(1);
    expect(receiver.openConnections).toBe(1);
    closed = true;
    await t.close();
    await expect.poll(() => receiver.openConnections).toBe(0);
  });
});

/** A server answering 200 "ok" after `delayMs`, counting connections and requests. */
async function startServer(options: { delayMs?: number; resetSecondRequest?: boolean } = {}) {
  const state = { connections: 0, open: 0, requests: 0, url: '' };
  const server = http.createServer((request, response) => {
    state.requests += 1;
    const socket = request.socket as typeof request.socket & { served?: number };
    socket.served = (socket.served ?? 0) + 1;
    if (options.resetSecondRequest && socket.served === 2) {
      socket.destroy();
      return;
    }
    request.resume();
    setTimeout(() => response.end('ok'), options.delayMs ?? 0);
  });
  server.on('connection', (socket) => {
    state.connections += 1;
    state.open += 1;
    socket.on('close', () => {
      state.open -= 1;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  state.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hook`;
  const close = () =>
    new Promise<void>((resolve) => {
      server.closeAllConnections();
      server.close(() => resolve());
    });
  return { state, close };
}

function postTo(url: string, endpointId = 'we_test'): PostRequest {
  return {
    endpointId,
    url: new URL(url),
    addresses: [{ address: '127.0.0.1', family: 4 }],
    headers: { 'content-type': 'application/json' },
    body: '{}',
    timeoutMs: 5_000,
  };
}

describe('createEndpointConnections', () => {
  it('close() lets a request in flight end, then closes its connection', async () => {
    const { state, close } = await startServer({ delayMs: 200 });
    try {
      const connections = createEndpointConnections({ maxSockets: 2 });
      const outcome = connections.post(postTo(state.url));
      await expect.poll(() => state.requests).toBe(1);
      connections.close();
      expect(await outcome).toMatchObject({ status: 200 });
      await expect.poll(() => state.open).toBe(0);
      // Afterwards each request has its own connection.
      expect(await connections.post(postTo(state.url))).toMatchObject({ status: 200 });
      expect(state.connections).toBe(2);
      expect(connections.agents).toBe(0);
    } finally {
      await close();
    }
  });

  it('drops an agent unused for idleMs, and closes its connections', async () => {
    const { state, close } = await startServer();
    let now = 0;
    try {
      const connections = createEndpointConnections({ maxSockets: 2, idleMs: 1_000, now: () => now });
      expect(await connections.post(postTo(state.url, 'we_a'))).toMatchObject({ status: 200 });
      expect(connections.agents).toBe(1);
      expect(state.open).toBe(1);
      now += 2_000;
      expect(await connections.post(postTo(state.url, 'we_b'))).toMatchObject({ status: 200 });
      expect(connections.agents).toBe(1);
      await expect.poll(() => state.open).toBe(1);
      expect(state.connections).toBe(2);
      connections.close();
    } finally {
      await close();
    }
  });

  it('a kept connection the receiver dropped is replaced by a new one, within the same attempt', async () => {
    const { state, close } = await startServer({ resetSecondRequest: true });
    try {
      const connections = createEndpointConnections({ maxSockets: 2 });
      expect(await connections.post(postTo(state.url))).toMatchObject({ status: 200 });
      expect(await connections.post(postTo(state.url))).toMatchObject({ status: 200 });
      expect(state.connections).toBe(2);
      expect(state.requests).toBe(3);
      connections.close();
    } finally {
      await close();
    }
  });
});
