/**
 * Rate limits as a partner sees them, with the in-process store and a hand-moved time source:
 * burst then steady rate to the exact numbers, Retry-After honoured, headers on every answer
 * (successes, errors, replays, 429), per-tenant limits, 401s limited per client IP, the webhook
 * policy (on a throwaway route), failed sign-ins, and the OpenAPI document.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createRateLimits } from '../../src/rate-limits/service.js';
import { createTenant, createUser, startTestApp, type TestApp, type TestResponse } from '../support/app.js';

let t: TestApp;
let nowMs = Date.parse('2026-03-01T12:00:00.000Z');
const advance = (ms: number) => {
  nowMs += ms;
};

beforeAll(async () => {
  t = await startTestApp({
    adapters: ({ database }) => ({ rateLimits: createRateLimits({ db: database.db, now: () => nowMs }) }),
    extraRoutes: {
      // A cheap partner route (no database work) to send hundreds of requests through.
      partner: [
        async (app) => {
          app.get('/rl-probe', { config: { scope: 'plans:read' } }, async () => ({ ok: true }));
        },
      ],
      // A stand-in for the call-trigger webhook: the policy is declared by the route config.
      root: [
        async (app) => {
          app.post(
            '/rl-webhook/:agentWebhookId',
            { config: { rateLimit: 'webhook' } },
            async (_request, reply) => reply.code(202).send({ queued: true }),
          );
        },
      ],
    },
  });
});
afterAll(() => t.close());

const headersOf = (r: TestResponse) => ({
  limit: Number(r.headers['ratelimit-limit']),
  remaining: Number(r.headers['ratelimit-remaining']),
  reset: Number(r.headers['ratelimit-reset']),
});

/** Sends `count` requests at the current time; returns how many passed before the first 429. */
async function sendUntilLimited(send: () => Promise<TestResponse>, max: number) {
  let passed = 0;
  for (let i = 0; i < max; i++) {
    const r = await send();
    if (r.status === 429) return { passed, limited: r };
    passed++;
  }
  return { passed, limited: undefined };
}

describe('partner API: token bucket per API key', () => {
  it('lets exactly the burst (200) through at once, then exactly 100 per second', async () => {
    const tenant = await createTenant(t, { scopes: ['plans:read'] });
    const probe = () => tenant.request('GET', '/api/v1/rl-probe');

    const first = await probe();
    expect(first.status).toBe(200);
    expect(headersOf(first)).toEqual({ limit: 200, remaining: 199, reset: 1 });

    const burst = await sendUntilLimited(probe, 300);
    expect(burst.passed + 1).toBe(200);
    const limited = burst.limited!;
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(limited.body.request_id).toBe(limited.headers['x-request-id']);
    expect(limited.headers['retry-after']).toBe('1');
    expect(headersOf(limited)).toEqual({ limit: 200, remaining: 0, reset: 2 });

    // One second later: exactly 100 more.
    advance(1000);
    expect((await sendUntilLimited(probe, 300)).passed).toBe(100);

    // Steady pace: one request every 10 ms is exactly the rate, so 300 in a row all pass...
    for (let i = 0; i < 300; i++) {
      advance(10);
      const r = await probe();
      expect(r.status, `request ${i}`).toBe(200);
      expect(r.headers['ratelimit-remaining']).toBe('0');
    }
    // ...and one request more within the same 10 ms does not.
    expect((await probe()).status).toBe(429);
    advance(9);
    expect((await probe()).status).toBe(429);
    advance(1);
    expect((await probe()).status).toBe(200);
  });

  it('honours Retry-After: after waiting that long the next request passes', async () => {
    const tenant = await createTenant(t, { scopes: ['plans:read'] });
    const patched = await t.admin('PATCH', `/admin/v1/tenants/${tenant.id}`, {
      rate_limit: { requests_per_second: 1, burst: 3 },
    });
    expect(patched.status).toBe(200);
    const probe = () => tenant.request('GET', '/api/v1/rl-probe');
    expect((await sendUntilLimited(probe, 10)).passed).toBe(3);

    advance(400);
    const limited = await probe();
    expect(limited.status).toBe(429);
    const retryAfter = Number(limited.headers['retry-after']);
    expect(Number.isInteger(retryAfter) && retryAfter >= 1).toBe(true);
    expect(retryAfter).toBe(1); // 0.6 s missing, rounded up to whole seconds
    advance(retryAfter * 1000);
    expect((await probe()).status).toBe(200);
  });

  it('puts the headers on every answer: success, 403, 404, 422, idempotent replays, 429', async () => {
    const tenant = await createTenant(t);
    const readOnly = await t.admin('POST', `/admin/v1/tenants/${tenant.id}/api-keys`, {
      scopes: ['plans:read'],
    });
    const answers = [
      await tenant.request('GET', '/api/v1/plans'),
      await tenant.request('GET', '/api/v1/plans/plan_doesnotexist'),
      await tenant.request('GET', '/api/v1/users?limit=1000'),
      await tenant.request('POST', '/api/v1/users', { email: 'not-an-email' }),
      await t.partner(readOnly.body.data.key, 'GET', '/api/v1/users'),
    ];
    expect(answers.map((r) => r.status)).toEqual([200, 404, 422, 422, 403]);
    for (const r of answers) {
      expect(r.headers['ratelimit-limit']).toBe('200');
      expect(r.headers['ratelimit-remaining']).toMatch(/^\d+$/);
      expect(r.headers['ratelimit-reset']).toMatch(/^\d+$/);
    }
    // The first four share one key's budget: 199, 198, 197, 196.
    expect(answers.slice(0, 4).map((r) => headersOf(r).remaining)).toEqual([199, 198, 197, 196]);
  });

  it('treats an unknown /api/v1 URL like any partner request: 401 without a key, counted 404 with one', async () => {
    const tenant = await createTenant(t);
    const known = await tenant.request('GET', '/api/v1/plans');
    const unknown = await tenant.request('GET', '/api/v1/no-such-resource');
    const bare = await tenant.request('POST', '/api/v1');
    expect([known.status, unknown.status, bare.status]).toEqual([200, 404, 404]);
    expect(unknown.body.error.code).toBe('not_found');
    expect([known, unknown, bare].map((r) => headersOf(r).remaining)).toEqual([199, 198, 197]);
    const anonymous = await t.inject({ method: 'GET', url: '/api/v1/no-such-resource' });
    expect(anonymous.status).toBe(401);
    expect(anonymous.body.error.code).toBe('authentication_failed');
    expect(anonymous.headers['ratelimit-limit']).toMatch(/^\d+$/);
    // Outside /api/v1 nothing changes: a plain 404, no partner key asked for.
    const elsewhere = await t.inject({ method: 'GET', url: '/no-such-page' });
    expect(elsewhere.status).toBe(404);
    expect(elsewhere.headers['ratelimit-limit']).toBeUndefined();
  });

  it('counts idempotent replays against the budget, and limits them like any request', async () => {
    const tenant = await createTenant(t);
    await t.admin('PATCH', `/admin/v1/tenants/${tenant.id}`, {
      rate_limit: { requests_per_second: 1, burst: 4 },
    });
    const body = { email: 'replayed@example.com', name: 'Replayed', password: 'correct horse' };
    const headers = { 'idempotency-key': 'rl-replay-1' };
    const created = await tenant.request('POST', '/api/v1/users', body, headers);
    expect(created.status).toBe(201);
    const replays = [];
    for (let i = 0; i < 3; i++) replays.push(await tenant.request('POST', '/api/v1/users', body, headers));
    expect(replays.map((r) => r.status)).toEqual([201, 201, 201]);
    expect(replays.map((r) => r.headers['idempotent-replayed'])).toEqual(['true', 'true', 'true']);
    expect([created, ...replays].map((r) => headersOf(r).remaining)).toEqual([3, 2, 1, 0]);
    const limited = await tenant.request('POST', '/api/v1/users', body, headers);
    expect(limited.status).toBe(429);
    expect(limited.headers['idempotent-replayed']).toBeUndefined();
    expect(limited.headers['retry-after']).toBe('1');
  });

  it('gives each API key its own bucket', async () => {
    const tenant = await createTenant(t, { scopes: ['plans:read'] });
    await t.admin('PATCH', `/admin/v1/tenants/${tenant.id}`, {
      rate_limit: { requests_per_second: 1, burst: 2 },
    });
    const second = await t.admin('POST', `/admin/v1/tenants/${tenant.id}/api-keys`, {
      scopes: ['plans:read'],
    });
    expect((await sendUntilLimited(() => tenant.request('GET', '/api/v1/rl-probe'), 5)).passed).toBe(2);
    expect(
      (await sendUntilLimited(() => t.partner(second.body.data.key, 'GET', '/api/v1/rl-probe'), 5)).passed,
    ).toBe(2);
  });
});

describe('per-tenant limits (PATCH /admin/v1/tenants/{id})', () => {
  it('shows the default, applies a tenant’s own numbers to each key, and restores the default with null', async () => {
    const tenant = await createTenant(t, { scopes: ['plans:read'] });
    const shown = await t.admin('GET', `/admin/v1/tenants/${tenant.id}`);
    expect(shown.body.data.rate_limit).toEqual({ requests_per_second: 100, burst: 200 });

    const patched = await t.admin('PATCH', `/admin/v1/tenants/${tenant.id}`, {
      rate_limit: { requests_per_second: 5, burst: 10 },
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data.rate_limit).toEqual({ requests_per_second: 5, burst: 10 });

    const probe = () => tenant.request('GET', '/api/v1/rl-probe');
    const burst = await sendUntilLimited(probe, 50);
    expect(burst.passed).toBe(10);
    expect(headersOf(burst.limited!)).toEqual({ limit: 10, remaining: 0, reset: 2 });
    expect(burst.limited!.headers['retry-after']).toBe('1');
    advance(1000);
    expect((await sendUntilLimited(probe, 50)).passed).toBe(5);

    const reset = await t.admin('PATCH', `/admin/v1/tenants/${tenant.id}`, { rate_limit: null });
    expect(reset.body.data.rate_limit).toEqual({ requests_per_second: 100, burst: 200 });
    // Every process reads the tenant's numbers again within a second.
    advance(1000);
    const after = await probe();
    expect(after.status).toBe(200);
    expect(after.headers['ratelimit-limit']).toBe('200');
  });

  it('rejects invalid numbers with 422 validation_failed', async () => {
    const tenant = await createTenant(t);
    for (const rateLimit of [
      { requests_per_second: 0, burst: 10 },
      { requests_per_second: 5 },
      { requests_per_second: 1.5, burst: 3 },
      { requests_per_second: '5', burst: 10 },
    ]) {
      const r = await t.admin('PATCH', `/admin/v1/tenants/${tenant.id}`, { rate_limit: rateLimit });
      expect(r.status, JSON.stringify(rateLimit)).toBe(422);
      expect(r.body.error.code).toBe('validation_failed');
    }
    expect(
      (
        await t.admin('PATCH', '/admin/v1/tenants/ten_missing', {
          rate_limit: { requests_per_second: 1, burst: 1 },
        })
      ).status,
    ).toBe(404);
  });
});

describe('requests refused with 401 are limited per client IP', () => {
  it('throttles key guessing without touching valid keys from the same address', async () => {
    advance(60_000); // any earlier 401s of this file are forgotten
    const tenant = await createTenant(t, { scopes: ['plans:read'] });
    const guess = (i: number) =>
      t.partner(`vp_test_${String(i).padStart(32, 'x')}`, 'GET', '/api/v1/rl-probe');
    const answers: number[] = [];
    for (let i = 0; i < 100; i++) answers.push((await guess(i)).status);
    expect(answers.every((s) => s === 401)).toBe(true);

    const limited = await guess(100);
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(limited.headers['retry-after']).toBe('1');
    expect(headersOf(limited)).toMatchObject({ limit: 100, remaining: 0 });
    // No Authorization header at all counts the same.
    expect((await t.inject({ method: 'GET', url: '/api/v1/rl-probe' })).status).toBe(429);

    // A valid key from the same address is counted in its own bucket.
    const valid = await tenant.request('GET', '/api/v1/rl-probe');
    expect(valid.status).toBe(200);
    expect(valid.headers['ratelimit-limit']).toBe('200');

    advance(100); // 10 per second: one more guess may be answered
    expect((await guess(101)).status).toBe(401);
    expect((await guess(102)).status).toBe(429);
  });
});

describe('webhook: token bucket per webhook id', () => {
  it('lets 20 through at once, then 10 per second, per webhook id', async () => {
    const hit = (id: string) =>
      t.inject({
        method: 'POST',
        url: `/rl-webhook/${id}`,
        headers: { 'content-type': 'application/json' },
        payload: '{}',
      });
    const a = 'webh_AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA';
    const b = 'webh_BBBBBBBBBBBBBBBBBBBBBBBBBBBBBBBB';
    const first = await hit(a);
    expect(first.status).toBe(202);
    expect(headersOf(first)).toEqual({ limit: 20, remaining: 19, reset: 1 });
    const burst = await sendUntilLimited(() => hit(a), 50);
    expect(burst.passed + 1).toBe(20);
    expect(burst.limited!.body.error.code).toBe('rate_limited');
    expect(burst.limited!.headers['retry-after']).toBe('1');
    expect(headersOf(burst.limited!)).toEqual({ limit: 20, remaining: 0, reset: 2 });
    // Another webhook id is not affected.
    expect((await hit(b)).status).toBe(202);
    advance(1000);
    expect((await sendUntilLimited(() => hit(a), 50)).passed).toBe(10);
    advance(100);
    expect((await hit(a)).status).toBe(202);
    expect((await hit(a)).status).toBe(429);
  });

  it('applies to the real call-trigger route, counted before the webhook id is even looked up', async () => {
    const url = '/webhooks/agents/webh_ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ/trigger';
    const trigger = () =>
      t.inject({
        method: 'POST',
        url,
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ phone: '+14155550123', name: 'Ada' }),
      });
    const answers = [];
    for (let i = 0; i < 21; i++) answers.push(await trigger());
    expect(answers.slice(0, 20).map((r) => r.status)).toEqual(Array(20).fill(404));
    expect(answers[19].headers['ratelimit-remaining']).toBe('0');
    expect(answers[20].status).toBe(429);
    expect(answers[20].body.error.code).toBe('rate_limited');
    expect(answers[20].headers['retry-after']).toBe('1');
  });
});

describe('sign-in throttling', () => {
  const signIn = (tenantId: string, email: string, password: string, ip?: string) =>
    t.inject({
      method: 'POST',
      url: '/auth/v1/sessions',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ tenant_id: tenantId, email, password }),
      ...(ip ? { remoteAddress: ip } : {}),
    });

  it('allows 10 failures per tenant + email, then 429 for wrong and right passwords alike, one more per 90 s', async () => {
    const tenant = await createTenant(t);
    const user = await createUser(tenant, { password: 'correct horse' });
    // Successful sign-ins cost nothing.
    for (let i = 0; i < 12; i++)
      expect((await signIn(tenant.id, user.email, 'correct horse')).status).toBe(201);

    const failures = [];
    for (let i = 0; i < 10; i++) failures.push(await signIn(tenant.id, user.email, `wrong ${i}`));
    expect(failures.map((r) => r.status)).toEqual(Array(10).fill(401));
    expect(failures.every((r) => r.body.error.code === 'authentication_failed')).toBe(true);
    expect(failures[9].headers['ratelimit-remaining']).toBe('0');

    const limited = await signIn(tenant.id, user.email.toUpperCase(), 'correct horse');
    expect(limited.status).toBe(429);
    expect(limited.body.error.code).toBe('rate_limited');
    expect(limited.headers['retry-after']).toBe('90');

    advance(90_000);
    expect((await signIn(tenant.id, user.email, 'correct horse')).status).toBe(201);
    expect((await signIn(tenant.id, user.email, 'wrong again')).status).toBe(401);
    expect((await signIn(tenant.id, user.email, 'correct horse')).status).toBe(429);
  });

  it('answers a wrong email exactly like a wrong password, throttling included', async () => {
    const tenant = await createTenant(t);
    const user = await createUser(tenant, { password: 'correct horse' });
    const run = async (email: string, password: string) => {
      const answers = [];
      for (let i = 0; i < 11; i++) answers.push(await signIn(tenant.id, email, password, '198.51.100.7'));
      return answers.map((r) => [
        r.status,
        r.body.error.code,
        r.body.error.message,
        r.headers['ratelimit-remaining'],
        r.headers['retry-after'],
      ]);
    };
    const wrongPassword = await run(user.email, 'not the password');
    const wrongEmail = await run('nobody@example.com', 'not the password');
    expect(wrongEmail).toEqual(wrongPassword);
    expect(wrongPassword[10][0]).toBe(429);
  });

  it('limits failures per client IP across accounts (100), other addresses unaffected', async () => {
    advance(15 * 60_000);
    const tenant = await createTenant(t);
    const statuses = [];
    for (let i = 0; i < 101; i++)
      statuses.push((await signIn(tenant.id, `guess${i}@example.com`, 'password1', '203.0.113.9')).status);
    expect(statuses.slice(0, 100).every((s) => s === 401)).toBe(true);
    expect(statuses[100]).toBe(429);
    expect((await signIn(tenant.id, 'guess0@example.com', 'password1', '203.0.113.10')).status).toBe(401);
  });
});

describe('OpenAPI document', () => {
  it('documents the RateLimit-* headers on partner answers and Retry-After on 429', async () => {
    const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).body;
    const list = doc.paths['/api/v1/users'].get.responses;
    expect(Object.keys(list['200'].headers)).toEqual(
      expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Remaining', 'RateLimit-Reset']),
    );
    expect(Object.keys(list['429'].headers)).toContain('Retry-After');
    expect(list['429'].description).toMatch(/100 requests\/s with bursts of 200/);
    expect(list['401'].headers['RateLimit-Limit']).toBeDefined();
  });
});
