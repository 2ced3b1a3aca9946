/** A partner's webhook receiver: a real HTTP server that verifies each delivery with `standardwebhooks`. */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Received {
  headers: http.IncomingHttpHeaders;
  body: string;
  /** The verified payload, or the verification error's message. */
  verified: unknown;
  error?: string;
}

export type Answer = (request: Received) => number | Promise<number>;

export interface Receiver {
  url: string;
  received: Received[];
  /** The secret deliveries are verified with (set after the endpoint is created). */
  secret: string;
  answer: Answer;
  /** The answer's body (longer than the 4 KiB a delivery reads, unless a test shortens it). */
  answerBody: string;
  /** TCP connections accepted so far, and those still open. */
  connections: number;
  openConnections: number;
  /** Resolves when `count` deliveries have arrived. */
  waitFor(count: number): Promise<Received[]>;
  close(): Promise<void>;
}

export async function startReceiver(path = '/hook'): Promise<Receiver> {
  const waiters: { count: number; resolve: () => void }[] = [];
  const receiver: Receiver = {
    url: '',
    received: [],
    secret: '',
    answer: () => 200,
    answerBody: 'x'.repeat(10_000),
    connections: 0,
    openConnections: 0,
    waitFor(count) {
      if (receiver.received.length >= count) return Promise.resolve(receiver.received);
      return new Promise((resolve) => waiters.push({ count, resolve: () => resolve(receiver.received) }));
    },
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const entry: Received = { headers: request.headers, body, verified: undefined };
      try {
        entry.verified = new Webhook(receiver.secret).verify(body, request.headers as Record<string, string>);
      } catch (error) {
        entry.error = (error as Error).message;
      }
      receiver.received.push(entry);
      for (const waiter of waiters.filter((w) => receiver.received.length >= w.count)) {
        waiters.splice(waiters.indexOf(waiter), 1);
        waiter.resolve();
      }
      const status = await receiver.answer(entry);
      response.writeHead(status, { 'content-type': 'text/plain' }).end(receiver.answerBody);
    });
  });
  server.on('connection', (socket) => {
    receiver.connections += 1;
    receiver.openConnections += 1;
    socket.on('close', () => {
      receiver.openConnections -= 1;
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  receiver.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}${path}`;
  return receiver;
}
