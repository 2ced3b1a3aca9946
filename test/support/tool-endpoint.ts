/**
 * A partner's tool endpoint for the tests: it verifies each request with the `standardwebhooks`
 * package against the tenant's tools secret(s) and answers as the test says (a status, a body, a
 * delay), recording every request.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { Webhook } from 'standardwebhooks';

export interface Hit {
  /** The request's path: one endpoint serves several tools (`/ok`, `/fail`, …). */
  path: string;
  body: string;
  headers: http.IncomingHttpHeaders;
  /** The verified payload, undefined when verification failed (`error` says why). */
  verified: unknown;
  error?: string;
}

export type ToolEndpoint = Awaited<ReturnType<typeof startToolEndpoint>>;

/** The partner's tool endpoint: verifies each request with `standardwebhooks`, answers as told. */
export async function startToolEndpoint() {
  const endpoint = {
    url: '',
    secrets: [] as string[],
    hits: [] as Hit[],
    answer: async (_hit: Hit): Promise<{ status: number; body: string; delayMs?: number }> => ({
      status: 200,
      body: JSON.stringify({ order: 'shipped' }),
    }),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
  const server = http.createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk) => chunks.push(chunk));
    request.on('end', async () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const path = new URL(request.url ?? '/', 'http://endpoint').pathname;
      const hit: Hit = { path, body, headers: request.headers, verified: undefined };
      try {
        hit.verified = new Webhook(endpoint.secrets[0]).verify(
          body,
          request.headers as Record<string, string>,
        );
      } catch (error) {
        hit.error = (error as Error).message;
      }
      endpoint.hits.push(hit);
      const answer = await endpoint.answer(hit);
      if (answer.delayMs) await new Promise((resolve) => setTimeout(resolve, answer.delayMs));
      if (!response.destroyed)
        response.writeHead(answer.status, { 'content-type': 'application/json' }).end(answer.body);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  endpoint.url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/tools`;
  return endpoint;
}
