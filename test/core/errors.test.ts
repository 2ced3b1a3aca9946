/** The error envelope, X-Request-Id, unknown routes, the check order of docs/design-choices.md, and unexpected errors. */
import type { FastifyPluginAsync } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, createUser, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { expectError, expectInvalidFields } from '../support/expect.js';

let t: TestApp;
let a: TestTenant;
let reader: TestTenant;

/** Routes that fail the way a bug or an outage would, to prove what the handler hides. */
const failingRoutes: FastifyPluginAsync = async (app) => {
  app.get('/test-failures/bug', { config: { scope: 'users:read' } }, async () => {
    throw new Error('SELECT password_hash FROM users WHERE secret = 42');
  });
  app.get('/test-failures/unique', { config: { scope: 'users:read' } }, async () => {
    throw Object.assign(new Error('duplicate key value violates unique constraint "users_pkey"'), {
      code: '23505',
    });
  });
  app.get('/test-failures/down', { config: { scope: 'users:read' } }, async () => {
    throw Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' });
  });
  app.get('/test-failures/read-only', { config: { scope: 'users:read' } }, async () => {
    // What a primary being demoted in a failover answers a write.
    throw Object.assign(new Error('cannot execute INSERT in a read-only transaction'), { code: '25006' });
  });
  app.get('/test-failures/database-gone', { config: { scope: 'users:read' } }, async () => {
    throw Object.assign(new Error('database "vp_t_1" does not exist'), { code: '3D000' });
  });
};

beforeAll(async () => {
  t = await startTestApp({
    extraRoutes: { partner: [failingRoutes] },
  });
  a = await createTenant(t);
  reader = await createTenant(t, { scopes: ['users:read', 'plans:read'] });
});
afterAll(() => t.close());

const post = (headers: Record<string, string>, payload: string) =>
  t.inject({ method: 'POST', url: '/api/v1/users', headers, payload });

describe('X-Request-Id', () => {
  it('is generated on every answer, success or error, and equals the error body’s request_id', async () => {
    const ok = await a.request('GET', '/api/v1/users');
    expect(ok.headers['x-request-id']).toMatch(/^req_[0-9A-Za-z]+$/);
    const bad = await a.request('GET', '/api/v1/users?page=0');
    expectError(bad, 422, 'validation_failed');
    expect(bad.headers['x-request-id']).not.toBe(ok.headers['x-request-id']);
    const health = await t.inject({ method: 'GET', url: '/healthz' });
    expect(health.headers['x-request-id']).toBeTruthy();
  });

  it('echoes an incoming id of at most 128 printable characters', async () => {
    for (const id of ['abc', 'trace-123/456:789', 'span 42 of trace 7', '~'.repeat(128)]) {
      const response = await a.request('GET', '/api/v1/plans/plan_missing', undefined, {
        'x-request-id': id,
      });
      expect(response.headers['x-request-id']).toBe(id);
      expect(response.body.request_id).toBe(id);
    }
  });

  it('replaces a longer or non-printable incoming id', async () => {
    for (const id of ['x'.repeat(129), 'caf\u00e9', 'a\tb']) {
      const response = await a.request('GET', '/api/v1/plans/plan_missing', undefined, {
        'x-request-id': id,
      });
      expect(response.headers['x-request-id']).toMatch(/^req_/);
      expect(response.body.request_id).toBe(response.headers['x-request-id']);
    }
  });

  it('is echoed on the operator API and the sessions surface too', async () => {
    const admin = await t.admin('GET', '/admin/v1/tenants/ten_missing', undefined, {
      'x-request-id': 'op-1',
    });
    expectError(admin, 404, 'not_found');
    expect(admin.body.request_id).toBe('op-1');
    const me = await t.inject({ method: 'GET', url: '/auth/v1/me', headers: { 'x-request-id': 'me-1' } });
    expectError(me, 401, 'authentication_failed');
    expect(me.body.request_id).toBe('me-1');
  });
});

describe('unknown routes', () => {
  it('answer 404 not_found in the envelope under /api/v1 and /admin/v1', async () => {
    expectError(await a.request('GET', '/api/v1/nothing-here'), 404, 'not_found');
    expectError(await a.request('GET', '/api/v1'), 404, 'not_found');
    expectError(await a.request('PUT', '/api/v1/users', {}), 404, 'not_found');
    expectError(await a.request('PATCH', '/api/v1/plans/plan_x', {}), 404, 'not_found');
    expectError(await t.admin('GET', '/admin/v1/nothing-here'), 404, 'not_found');
  });
});

describe('input the database cannot store', () => {
  it('U+0000 in a body string, a query parameter or a path parameter is 422 validation_failed naming the field', async () => {
    const before = (await a.request('GET', '/api/v1/users')).body.pagination.total;
    const body = await a.request('POST', '/api/v1/users', {
      email: 'nul@example.com',
      name: 'a\u0000b',
      password: '1234567\u00008',
    });
    expect(body.body.error.details).toEqual([
      { field: 'name', issue: 'must not contain the NUL character (U+0000).' },
      { field: 'password', issue: 'must not contain the NUL character (U+0000).' },
    ]);
    expectInvalidFields(
      await a.request('POST', '/api/v1/users', { email: 'nul@example.com', name: 42, 'x\u0000': 1 }),
      ['name', 'x\u0000', 'password'],
    );
    expect((await a.request('GET', '/api/v1/users')).body.pagination.total).toBe(before);
    expectInvalidFields(await a.request('GET', '/api/v1/users?search=%00'), ['search']);
    expectInvalidFields(await a.request('GET', '/api/v1/users/usr_%00'), ['id']);
    expectInvalidFields(await a.request('DELETE', '/api/v1/users/usr_%00'), ['id']);
    expectInvalidFields(await a.request('GET', '/api/v1/plans/plan_%00'), ['id']);
    expectInvalidFields(await t.admin('POST', '/admin/v1/tenants', { name: 'x\u0000' }), ['name']);
    const signIn = await t.inject({
      method: 'POST',
      url: '/auth/v1/sessions',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ tenant_id: 'ten_\u0000', email: 'a@b.co', password: 'x' }),
    });
    expectInvalidFields(signIn, ['tenant_id']);
  });

  it('an unpaired surrogate is refused rather than stored as U+FFFD', async () => {
    const response = await a.request('POST', '/api/v1/users', {
      email: 'lone@example.com',
      name: 'a\ud800b',
      password: '12345678',
    });
    expect(response.body.error.details).toEqual([
      { field: 'name', issue: 'must be valid Unicode (no unpaired surrogate).' },
    ]);
    const paired = await a.request('POST', '/api/v1/users', {
      email: 'emoji@example.com',
      name: 'Zoë 😀',
      password: '12345678',
    });
    expect(paired.status).toBe(201);
    expect((await a.request('GET', `/api/v1/users/${paired.body.data.id}`)).body.data.name).toBe('Zoë 😀');
  });

  it('an unknown query parameter holding U+0000 is still ignored', async () => {
    expect((await a.request('GET', '/api/v1/users?colour=%00')).status).toBe(200);
  });
});

describe('errors the router answers itself', () => {
  it('a malformed percent-encoding in the path is 400 invalid_request in the envelope', async () => {
    const response = await a.request('GET', '/api/v1/users/%zz', undefined, { 'x-request-id': 'bad-url-1' });
    expectError(response, 400, 'invalid_request');
    expect(response.body.request_id).toBe('bad-url-1');
    expectError(await t.admin('GET', '/admin/v1/tenants/%E0%A4%A'), 400, 'invalid_request');
  });

  it('a path parameter over 500 characters is 404 not_found in the envelope', async () => {
    expectError(await a.request('GET', `/api/v1/users/${'x'.repeat(501)}`), 404, 'not_found');
    expectError(await a.request('DELETE', `/api/v1/users/${'x'.repeat(1000)}`), 404, 'not_found');
  });
});

describe('unexpected errors', () => {
  it('a bug answers 500 internal_error without stack or SQL, and is logged with its request id', async () => {
    const response = await a.request('GET', '/api/v1/test-failures/bug');
    expectError(response, 500, 'internal_error');
    expect(response.raw).not.toMatch(/SELECT|password_hash|secret|at .*\.ts/);
    expect(response.body.error.details).toBeUndefined();
    const line = t.logs.find(
      (l) => l.includes(String(response.headers['x-request-id'])) && l.includes('"level":50'),
    );
    expect(line).toBeTruthy();
  });

  it('a unique violation answers 409 conflict without the constraint name', async () => {
    const response = await a.request('GET', '/api/v1/test-failures/unique');
    expectError(response, 409, 'conflict');
    expect(response.raw).not.toContain('users_pkey');
  });

  it('a lost database connection answers 503 service_unavailable', async () => {
    const response = await a.request('GET', '/api/v1/test-failures/down');
    expectError(response, 503, 'service_unavailable');
    expect(response.raw).not.toContain('5432');
  });

  it('a server that does not take writes (a failover) answers 503 service_unavailable with Retry-After', async () => {
    const response = await a.request('GET', '/api/v1/test-failures/read-only');
    expectError(response, 503, 'service_unavailable');
    expect(response.headers['retry-after']).toBe('1');
  });

  it('a dropped database answers 503 service_unavailable', async () => {
    const response = await a.request('GET', '/api/v1/test-failures/database-gone');
    expectError(response, 503, 'service_unavailable');
    expect(response.raw).not.toContain('vp_t_1');
  });
});

describe('check order: 401 → 403 → 400/415/413 → 422 → 404 → 409/422 business', () => {
  const tooBig = JSON.stringify({ name: 'x'.repeat(1100 * 1024) });

  it('401 before everything else', async () => {
    const variants: Record<string, string>[] = [
      {},
      { authorization: 'Bearer vp_test_wrongwrongwrongwrongwrongwrongwr' },
      { authorization: 'Basic abc' },
    ];
    for (const headers of variants) {
      expectError(
        await post({ ...headers, 'content-type': 'text/plain' }, 'hello'),
        401,
        'authentication_failed',
      );
      expectError(
        await post({ ...headers, 'content-type': 'application/json' }, '{bad'),
        401,
        'authentication_failed',
      );
      expectError(
        await post({ ...headers, 'content-type': 'application/json' }, tooBig),
        401,
        'authentication_failed',
      );
      expectError(
        await post({ ...headers, 'content-type': 'application/json' }, '{"name":42}'),
        401,
        'authentication_failed',
      );
    }
    expectError(
      await t.inject({ method: 'DELETE', url: '/api/v1/users/usr_missing' }),
      401,
      'authentication_failed',
    );
  });

  it('403 with required_scopes before request shape, validation and existence', async () => {
    const auth = { authorization: `Bearer ${reader.key}` };
    for (const response of [
      await post({ ...auth, 'content-type': 'text/plain' }, 'hello'),
      await post({ ...auth, 'content-type': 'application/json' }, '{bad'),
      await post({ ...auth, 'content-type': 'application/json' }, tooBig),
      await post({ ...auth, 'content-type': 'application/json' }, '{"name":42}'),
      await reader.request('DELETE', '/api/v1/users/usr_missing'),
    ]) {
      expectError(response, 403, 'permission_denied');
      expect(response.body.error.details).toEqual({ required_scopes: ['users:write'] });
    }
    const plansOnly = await createTenant(t, { scopes: ['plans:read'] });
    const denied = await plansOnly.request('GET', '/api/v1/users?page=0');
    expectError(denied, 403, 'permission_denied');
    expect(denied.body.error.details).toEqual({ required_scopes: ['users:read'] });
  });

  it('400/415/413 before 422 validation', async () => {
    const auth = { authorization: `Bearer ${a.key}` };
    expectError(await post({ ...auth, 'content-type': 'text/plain' }, '{"name":42}'), 415, 'invalid_request');
    expectError(
      await post({ ...auth, 'content-type': 'application/json' }, '{"name":42'),
      400,
      'invalid_request',
    );
    expectError(await post({ ...auth, 'content-type': 'application/json' }, tooBig), 413, 'invalid_request');
    expectError(
      await post(
        { ...auth, 'content-type': 'application/json', 'idempotency-key': 'k'.repeat(256) },
        '{"name":42}',
      ),
      400,
      'invalid_request',
    );
  });

  it('422 validation before 404 existence, 404 before business rules', async () => {
    expectError(
      await t.admin('PATCH', '/admin/v1/users/usr_missing', { status: 'gone' }),
      422,
      'validation_failed',
    );
    expectError(
      await t.admin('PATCH', '/admin/v1/users/usr_missing', { status: 'blocked' }),
      404,
      'not_found',
    );
    expectError(
      await t.admin('PATCH', '/admin/v1/plans/plan_missing', { monthly_price: '1' }),
      422,
      'validation_failed',
    );
    expectError(
      await t.admin('POST', '/admin/v1/tenants/ten_missing/api-keys', {
        scopes: ['users:read'],
        expires_at: '2000-01-01T00:00:00.000Z',
      }),
      404,
      'not_found',
    );
    expectError(
      await t.admin('POST', `/admin/v1/tenants/${a.id}/api-keys`, {
        scopes: ['users:read'],
        expires_at: '2000-01-01T00:00:00.000Z',
      }),
      422,
      'validation_failed',
    );
  });

  it('409 conflict only once the request is valid', async () => {
    const user = await createUser(a);
    const response = await a.request('POST', '/api/v1/users', { email: user.email, name: 42, password: 'x' });
    expectError(response, 422, 'validation_failed');
    expectError(
      await a.request('POST', '/api/v1/users', { email: user.email, name: 'N', password: '12345678' }),
      409,
      'conflict',
    );
  });
});
