/**
 * What the HTTP server answers before any route runs, over real sockets: headers over 16 KiB
 * (431), malformed HTTP (400) and a request that does not arrive in time (408) get the envelope
 * with a request id, like every other answer; the server's timeouts and connection cap are the
 * configured ones, so a slow client is disconnected and connections beyond the cap are closed.
 */
import net from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config/config.js';
import { httpServerFactory } from '../../src/core/http/server.js';
import { startTestApp, type TestApp } from '../support/app.js';

interface RawAnswer {
  status: number;
  headers: Record<string, string>;
  body: any;
}

/** Everything the server writes on one connection until it closes it. */
function exchange(port: number, write: (socket: net.Socket) => void): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(port, '127.0.0.1');
    const chunks: Buffer[] = [];
    socket.on('data', (chunk) => chunks.push(chunk));
    socket.on('error', (error) =>
      chunks.length > 0 ? resolve(Buffer.concat(chunks).toString()) : reject(error),
    );
    socket.on('close', () => resolve(Buffer.concat(chunks).toString()));
    socket.on('connect', () => write(socket));
  });
}

function parse(raw: string): RawAnswer {
  const [head, ...rest] = raw.split('\r\n\r\n');
  const [statusLine, ...lines] = head.split('\r\n');
  const headers: Record<string, string> = {};
  for (const line of lines) {
    const colon = line.indexOf(':');
    headers[line.slice(0, colon).toLowerCase()] = line.slice(colon + 1).trim();
  }
  return { status: Number(statusLine.split(' ')[1]), headers, body: JSON.parse(rest.join('\r\n\r\n')) };
}

function expectEnvelope(answer: RawAnswer, status: number) {
  expect(answer.status).toBe(status);
  expect(answer.headers['content-type']).toMatch(/^application\/json/);
  expect(answer.body.error.code).toBe('invalid_request');
  expect(answer.body.error.message).toBeTypeOf('string');
  expect(answer.body.request_id).toMatch(/^req_[0-9A-Za-z]{20}$/);
  expect(answer.headers['x-request-id']).toBe(answer.body.request_id);
}

describe('answers before routing, and slow clients', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await startTestApp({
      env: {
        HTTP_HEADERS_TIMEOUT_MS: '400',
        HTTP_REQUEST_TIMEOUT_MS: '800',
        HTTP_KEEP_ALIVE_TIMEOUT_MS: '1500',
      },
    });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  afterAll(() => t?.close());

  it('answers headers over 16 KiB with 431 in the envelope, with a request id', async () => {
    const raw = await exchange(port, (socket) =>
      socket.write(`GET /api/v1/plans HTTP/1.1\r\nHost: x\r\nX-Padding: ${'a'.repeat(20 * 1024)}\r\n\r\n`),
    );
    const answer = parse(raw);
    expectEnvelope(answer, 431);
    expect(answer.body.error.message).toMatch(/headers are too large/);
  });

  it('answers malformed HTTP with 400 in the envelope', async () => {
    const raw = await exchange(port, (socket) => socket.write('NOT HTTP AT ALL\r\n\r\n'));
    expectEnvelope(parse(raw), 400);
  });

  it('closes a connection whose headers trickle in beyond the headers timeout, with 408 in the envelope', async () => {
    let ticker: NodeJS.Timeout | undefined;
    const raw = await exchange(port, (socket) => {
      socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n');
      // A slowloris: one header line every 100 ms, never the blank line that ends them.
      let n = 0;
      ticker = setInterval(() => socket.writable && socket.write(`X-Slow-${n++}: y\r\n`), 100);
    });
    clearInterval(ticker);
    expectEnvelope(parse(raw), 408);
  });

  it('runs the Node server with the configured timeouts', () => {
    const server = t.app.server;
    expect(server.headersTimeout).toBe(400);
    expect(server.requestTimeout).toBe(800);
    expect(server.keepAliveTimeout).toBe(1500);
  });

  it('has deliberate defaults', () => {
    const server = httpServerFactory(loadConfig({}).http)(() => {}, {});
    expect(server.headersTimeout).toBe(10_000);
    expect(server.requestTimeout).toBe(30_000);
    expect(server.keepAliveTimeout).toBe(72_000);
    expect(server.maxConnections).toBe(4096);
    server.close();
  });
});

describe('the connection cap', () => {
  let t: TestApp;
  let port: number;
  beforeAll(async () => {
    t = await startTestApp({ env: { HTTP_MAX_CONNECTIONS: '2' } });
    await t.app.listen({ port: 0, host: '127.0.0.1' });
    port = (t.app.server.address() as net.AddressInfo).port;
  });
  afterAll(() => t?.close());

  it('closes connections beyond HTTP_MAX_CONNECTIONS on arrival and serves the ones it holds', async () => {
    expect(t.app.server.maxConnections).toBe(2);
    const accepted: net.Socket[] = [];
    t.app.server.on('connection', (socket) => accepted.push(socket));
    const open = () =>
      new Promise<net.Socket>((resolve, reject) => {
        const socket = net.connect(port, '127.0.0.1', () => resolve(socket));
        socket.on('error', reject);
      });
    const held = [await open(), await open()];
    while (accepted.length < 2) await new Promise((resolve) => setImmediate(resolve));

    const dropped = new Promise<void>((resolve) => t.app.server.once('drop', () => resolve()));
    const third = await exchange(port, (socket) => socket.write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n'));
    await dropped;
    expect(third).toBe('');

    const served = await new Promise<string>((resolve) => {
      const chunks: Buffer[] = [];
      held[0].on('data', (chunk) => {
        chunks.push(chunk);
        if (Buffer.concat(chunks).toString().includes('"status":"ok"'))
          resolve(Buffer.concat(chunks).toString());
      });
      held[0].write('GET /healthz HTTP/1.1\r\nHost: x\r\n\r\n');
    });
    expect(served).toMatch(/^HTTP\/1.1 200/);
    for (const socket of held) socket.destroy();
  });
});
