/**
 * TRUST_PROXY: behind a load balancer the per-address limits (401s, sign-in) must key on the
 * client's address from X-Forwarded-For, and only when the request comes through a trusted proxy.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimits } from '../../src/rate-limits/service.js';
import { startTestApp, type TestApp } from '../support/app.js';

const NOW = Date.parse('2026-03-01T12:00:00.000Z');

/** An app whose rate-limit clock stands still, so a bucket refills only when a test says so. */
function appWith(env: Record<string, string>): Promise<TestApp> {
  return startTestApp({
    env,
    adapters: ({ database }) => ({ rateLimits: createRateLimits({ db: database.db, now: () => NOW }) }),
  });
}

/** A guessed key from `client`, relayed by a proxy at `proxy` (the socket's address). */
function guess(t: TestApp, client: string, proxy = '127.0.0.1') {
  return t.inject({
    method: 'GET',
    url: '/api/v1/plans',
    remoteAddress: proxy,
    headers: { authorization: `Bearer vp_test_${'x'.repeat(32)}`, 'x-forwarded-for': client },
  });
}

async function exhaust(t: TestApp, client: string, proxy?: string): Promise<void> {
  // The unauthenticated budget per address is a burst of 100.
  for (let i = 0; i < 100; i++) expect((await guess(t, client, proxy)).status).toBe(401);
  expect((await guess(t, client, proxy)).status).toBe(429);
}

describe('TRUST_PROXY unset (the default)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await appWith({});
  });
  afterAll(() => t.close());

  it('ignores X-Forwarded-For: a client cannot pick a fresh address to escape the limit', async () => {
    await exhaust(t, '203.0.113.1');
    expect((await guess(t, '203.0.113.2')).status).toBe(429);
  });
});

describe('TRUST_PROXY=127.0.0.1', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await appWith({ TRUST_PROXY: '127.0.0.1' });
  });
  afterAll(() => t.close());

  it('limits each client behind the trusted proxy on its own', async () => {
    await exhaust(t, '203.0.113.1');
    expect((await guess(t, '203.0.113.2')).status).toBe(401);
  });

  it('believes X-Forwarded-For only from the trusted proxy', async () => {
    // From an untrusted peer the header is ignored: the peer's own address is the client.
    await exhaust(t, '198.51.100.1', '192.0.2.9');
    expect((await guess(t, '198.51.100.2', '192.0.2.9')).status).toBe(429);
  });
});

describe('TRUST_PROXY=1 (one proxy hop)', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await appWith({ TRUST_PROXY: '1' });
  });
  afterAll(() => t.close());

  it('takes the address the nearest proxy saw, not one a client wrote further left', async () => {
    // A client sending its own X-Forwarded-For cannot escape: the proxy appends the real address.
    for (let i = 0; i < 100; i++) {
      expect((await guess(t, `10.9.9.${i % 250}, 203.0.113.7`)).status).toBe(401);
    }
    expect((await guess(t, '10.1.1.1, 203.0.113.7')).status).toBe(429);
    expect((await guess(t, '203.0.113.8')).status).toBe(401);
  });
});
