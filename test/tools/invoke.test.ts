import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { postTool } from '../../src/tools/invoke.js';

/**
 * A tool endpoint that answers the first request of each connection and drops the connection on
 * the second, as a server does that closed an idle keep-alive connection while a request was on
 * its way.
 */
let server: http.Server;
let url: URL;
const connections = new Set<unknown>();
let requests = 0;

beforeAll(async () => {
  const served = new WeakMap<object, number>();
  server = http.createServer((req, res) => {
    requests += 1;
    connections.add(req.socket);
    const count = (served.get(req.socket) ?? 0) + 1;
    served.set(req.socket, count);
    if (count > 1) {
      req.socket.destroy();
      return;
    }
    req.resume();
    req.on('end', () => res.end(JSON.stringify({ ok: count })));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = new URL(`http://127.0.0.1:${(server.address() as AddressInfo).port}/tool`);
});

afterAll(async () => {
  server.closeAllConnections();
  await new Promise((resolve) => server.close(resolve));
});

const post = () =>
  postTool({
    url,
    addresses: [{ address: '127.0.0.1', family: 4 }],
    headers: { 'content-type': 'application/json' },
    body: '{}',
    timeoutMs: 2_000,
  });

describe('tool POSTs', () => {
  it('reuse a kept-alive connection, and send again on a new one when the reused one was dropped', async () => {
    expect(await post()).toEqual({ kind: 'answered', status: 200, body: '{"ok":1}' });
    // The second request goes out on the kept connection, which the endpoint drops: it is sent
    // once more on a new connection and answered there, not reported unreachable.
    expect(await post()).toEqual({ kind: 'answered', status: 200, body: '{"ok":1}' });
    expect(requests).toBe(3);
    expect(connections.size).toBe(2);
  });
});
