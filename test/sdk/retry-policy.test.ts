/**
 * When the SDK repeats a request, against an HTTP server that answers as the service does in a
 * database outage (503 service_unavailable, Retry-After: 1) or while an Idempotency-Key is in
 * flight (409 conflict, Retry-After: 1): a read, and a write carrying an Idempotency-Key, are
 * repeated; a write without one is not (it may have happened).
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { Voiceplane, VoiceplaneError } from '../../packages/sdk/src/index.js';

interface Seen {
  method: string;
  url: string;
  idempotencyKey: string | undefined;
}

const seen: Seen[] = [];
/** Status of each answer in turn; 200 after the list runs out. */
let script: number[] = [];
/** A 409 without Retry-After: a key reused with another body (idempotency_key_reuse), final. */
let noRetryAfter = false;
let server: http.Server;
let baseUrl: string;

const ERRORS: Record<number, string> = { 503: 'service_unavailable', 409: 'conflict', 500: 'internal_error' };

beforeAll(async () => {
  server = http.createServer((request, response) => {
    request.resume();
    request.on('end', () => {
      seen.push({
        method: request.method ?? '',
        url: request.url ?? '',
        idempotencyKey: request.headers['idempotency-key'] as string | undefined,
      });
      const status = script.shift() ?? 200;
      const headers = { 'content-type': 'application/json', 'x-request-id': `req_${seen.length}` };
      if (status === 200) {
        response.writeHead(200, headers).end(JSON.stringify({ data: { id: 'usr_1' } }));
        return;
      }
      const retryAfter = status === 409 && noRetryAfter ? {} : { 'retry-after': '1' };
      response.writeHead(status, { ...headers, ...retryAfter }).end(
        JSON.stringify({
          error: { code: ERRORS[status], message: `answered ${status}` },
          request_id: `req_${seen.length}`,
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
beforeEach(() => {
  seen.length = 0;
  script = [];
  noRetryAfter = false;
});

const client = () => new Voiceplane({ apiKey: 'vp_test_x', baseUrl, maxRetries: 2 });

describe('503 and 409 answers', () => {
  it('repeats a read after a 503, waiting Retry-After', async () => {
    script = [503];
    const started = Date.now();
    expect(await client().users.retrieve('usr_1')).toEqual({ id: 'usr_1' });
    expect(seen.map((s) => s.method)).toEqual(['GET', 'GET']);
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
  });

  it('repeats a create after a 503 with the same generated Idempotency-Key', async () => {
    script = [503];
    await client().users.create({ email: 'a@example.com', name: 'A', password: 'correct horse' });
    expect(seen).toHaveLength(2);
    expect(seen[0].idempotencyKey).toBeDefined();
    expect(seen[1].idempotencyKey).toBe(seen[0].idempotencyKey);
  });

  it('keeps the Idempotency-Key the caller gives', async () => {
    await client().users.create(
      { email: 'a@example.com', name: 'A', password: 'p' },
      { idempotencyKey: 'order-42' },
    );
    expect(seen[0].idempotencyKey).toBe('order-42');
  });

  it('repeats a create told 409 while its Idempotency-Key is in flight', async () => {
    script = [409];
    await client().users.create({ email: 'a@example.com', name: 'A', password: 'correct horse' });
    expect(seen).toHaveLength(2);
  });

  it('does not repeat a 409 without Retry-After (a key reused with another body)', async () => {
    script = [409];
    noRetryAfter = true;
    await expect(
      client().users.create({ email: 'a@example.com', name: 'A', password: 'correct horse' }),
    ).rejects.toMatchObject({ status: 409 });
    expect(seen).toHaveLength(1);
  });

  it('does not repeat a write without an Idempotency-Key after a 503: it may have happened', async () => {
    script = [503];
    const error = await client()
      .agents.publish('agt_1')
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(VoiceplaneError);
    expect(error).toMatchObject({ status: 503, code: 'service_unavailable', requestId: 'req_1' });
    expect(seen).toHaveLength(1);
  });

  it('gives up after maxRetries and raises the last answer', async () => {
    script = [503, 503, 503, 503];
    await expect(client().plans.list()).rejects.toMatchObject({ status: 503, requestId: 'req_3' });
    expect(seen).toHaveLength(3);
  });

  it('does not repeat a DELETE the API does not call idempotent; repeats the user tombstone', async () => {
    script = [503];
    await expect(client().agents.del('agt_1')).rejects.toMatchObject({ status: 503 });
    expect(seen).toHaveLength(1);
    script = [503];
    await client().users.del('usr_1');
    expect(seen.map((s) => s.method)).toEqual(['DELETE', 'DELETE', 'DELETE']);
  });

  it('refuses an Idempotency-Key on an operation that ignores it, sending nothing', async () => {
    await expect(client().agents.publish('agt_1', { idempotencyKey: 'mine' })).rejects.toThrow(TypeError);
    await expect(
      client().doNotCall.add({ phone_number: '+14155550100' }, { idempotencyKey: 'mine' }),
    ).rejects.toThrow(TypeError);
    expect(seen).toHaveLength(0);
  });

  it('does not wait a Retry-After longer than maxRetryDelayMs', async () => {
    script = [503];
    const patient = new Voiceplane({ apiKey: 'vp_test_x', baseUrl, maxRetryDelayMs: 500 });
    await expect(patient.users.retrieve('usr_1')).rejects.toMatchObject({ status: 503 });
    expect(seen).toHaveLength(1);
  });

  it('reaches a service behind a path prefix', async () => {
    const prefixed = new Voiceplane({ apiKey: 'vp_test_x', baseUrl: `${baseUrl}/voice` });
    await prefixed.users.retrieve('usr_1');
    expect(seen[0].url).toBe('/voice/api/v1/users/usr_1');
  });

  it('does not repeat a 500: a defect is not fixed by asking again', async () => {
    script = [500];
    await expect(client().users.retrieve('usr_1')).rejects.toMatchObject({
      status: 500,
      code: 'internal_error',
    });
    expect(seen).toHaveLength(1);
  });
});
