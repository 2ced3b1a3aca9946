/** The operator API (/admin/v1): its token, tenants, API keys, user status and credits (docs/design-choices.md). */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import {
  ADMIN_TOKEN,
  createTenant,
  createUser,
  SCOPES,
  startTestApp,
  type TestApp,
  type TestTenant,
} from '../support/app.js';
import { expectError, expectInvalidFields, ISO_MS, query } from '../support/expect.js';

const clock = new ManualClock('2026-09-15T09:30:00.000Z');
const HOUR = 60 * 60 * 1000;
let t: TestApp;
let a: TestTenant;

beforeAll(async () => {
  t = await startTestApp({ clock });
  a = await createTenant(t);
});
afterAll(() => t.close());

describe('the operator token', () => {
  it('is required on every operator route', async () => {
    const user = await createUser(a);
    const routes: [string, string, unknown][] = [
      ['POST', '/admin/v1/tenants', { name: 'x' }],
      ['GET', `/admin/v1/tenants/${a.id}`, undefined],
      ['PATCH', `/admin/v1/tenants/${a.id}`, { name: 'x' }],
      ['POST', `/admin/v1/tenants/${a.id}/api-keys`, { scopes: ['users:read'] }],
      ['DELETE', `/admin/v1/api-keys/${a.keyId}`, undefined],
      ['POST', `/admin/v1/tenants/${a.id}/plans`, {}],
      ['PATCH', '/admin/v1/plans/plan_x', { name: 'x' }],
      ['DELETE', '/admin/v1/plans/plan_x', undefined],
      ['PATCH', `/admin/v1/users/${user.id}`, { status: 'blocked' }],
      ['POST', `/admin/v1/users/${user.id}/credits`, { minutes: 5 }],
      ['GET', `/admin/v1/users/${user.id}/credits`, undefined],
    ];
    const wrong = [
      '',
      'Bearer ',
      `Bearer ${ADMIN_TOKEN}x`,
      `Bearer ${a.key}`,
      `Basic ${ADMIN_TOKEN}`,
      ADMIN_TOKEN,
    ];
    for (const [method, url, body] of routes) {
      for (const authorization of wrong) {
        const response = await t.inject({
          method: method as 'GET',
          url,
          headers: {
            ...(authorization ? { authorization } : {}),
            ...(body ? { 'content-type': 'application/json' } : {}),
          },
          payload: body ? JSON.stringify(body) : undefined,
        });
        expectError(response, 401, 'authentication_failed');
      }
    }
    // Nothing changed: the key still works, the user is still active with no credits.
    expect((await a.request('GET', `/api/v1/users/${user.id}`)).body.data.status).toBe('active');
    expect((await t.admin('GET', `/admin/v1/users/${user.id}/credits`)).body.data.balance_minutes).toBe(0);
  });

  it('is refused by the partner API', async () => {
    expectError(await t.partner(ADMIN_TOKEN, 'GET', '/api/v1/users'), 401, 'authentication_failed');
    expectError(await t.partner(ADMIN_TOKEN, 'GET', '/api/v1/plans'), 401, 'authentication_failed');
  });
});

describe('tenants', () => {
  it('creates a tenant without email settings', async () => {
    const response = await t.admin('POST', '/admin/v1/tenants', { name: 'Blue Agency' });
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject({
      name: 'Blue Agency',
      email: null,
      created_at: clock.now().toISOString(),
    });
    expect(response.body.data.id).toMatch(/^ten_[0-9A-Za-z]{20,}$/);
    const fetched = await t.admin('GET', `/admin/v1/tenants/${response.body.data.id}`);
    expect(fetched.body.data).toEqual(response.body.data);
  });

  it('never returns the SMTP password', async () => {
    const email = {
      smtp_url: 'smtps://mailer:s3cr3t-pw@smtp.example.com:465',
      from: 'Blue <hello@blue.example>',
    };
    const created = await t.admin('POST', '/admin/v1/tenants', { name: 'Mailer', email });
    expect(created.status).toBe(201);
    expect(created.body.data.email.from).toBe('Blue <hello@blue.example>');
    expect(created.body.data.email.smtp_url).toContain('smtp.example.com');
    expect(created.raw).not.toContain('s3cr3t-pw');
    const id = created.body.data.id;
    const fetched = await t.admin('GET', `/admin/v1/tenants/${id}`);
    expect(fetched.raw).not.toContain('s3cr3t-pw');
    const patched = await t.admin('PATCH', `/admin/v1/tenants/${id}`, {
      email: { smtp_url: 'smtp://u:other-pw@mail.example.com:587', from: 'x@blue.example' },
    });
    expect(patched.status).toBe(200);
    expect(patched.raw).not.toContain('other-pw');
    expect(t.logs.join('\n')).not.toMatch(/s3cr3t-pw|other-pw/);
  });

  it('patches the name and clears the email settings with null', async () => {
    const created = await t.admin('POST', '/admin/v1/tenants', {
      name: 'Old',
      email: { smtp_url: 'smtp://mail.example.com', from: 'a@b.example' },
    });
    const id = created.body.data.id;
    const renamed = await t.admin('PATCH', `/admin/v1/tenants/${id}`, { name: 'New' });
    expect(renamed.body.data).toMatchObject({ id, name: 'New', created_at: created.body.data.created_at });
    expect(renamed.body.data.email).not.toBeNull();
    const cleared = await t.admin('PATCH', `/admin/v1/tenants/${id}`, { email: null });
    expect(cleared.body.data).toMatchObject({ name: 'New', email: null });
  });

  it('rejects invalid tenant input and unknown tenants', async () => {
    expectInvalidFields(await t.admin('POST', '/admin/v1/tenants', { name: '' }), ['name']);
    expectInvalidFields(await t.admin('POST', '/admin/v1/tenants', { name: 5, colour: 'red' }), [
      'name',
      'colour',
    ]);
    expectError(
      await t.admin('POST', '/admin/v1/tenants', {
        name: 'x',
        email: { smtp_url: 'http://mail.example.com', from: 'a@b.example' },
      }),
      422,
      'validation_failed',
    );
    expectError(await t.admin('PATCH', '/admin/v1/tenants/ten_missing', { name: 'x' }), 404, 'not_found');
    expectError(await t.admin('GET', '/admin/v1/tenants/ten_missing'), 404, 'not_found');
  });
});

describe('API keys', () => {
  it('issues vp_<env>_<32 base62> keys, shown once and stored only as a hash', async () => {
    const test = await t.admin('POST', `/admin/v1/tenants/${a.id}/api-keys`, { scopes: ['users:read'] });
    expect(test.status).toBe(201);
    const data = test.body.data;
    expect(data.key).toMatch(/^vp_test_[0-9A-Za-z]{32}$/);
    expect(data).toMatchObject({
      env: 'test',
      scopes: ['users:read'],
      name: null,
      expires_at: null,
      created_at: clock.now().toISOString(),
    });
    expect(data.id).toMatch(/^key_[0-9A-Za-z]{20,}$/);
    const live = await t.admin('POST', `/admin/v1/tenants/${a.id}/api-keys`, {
      scopes: [...SCOPES],
      env: 'live',
      name: 'Production',
    });
    expect(live.body.data.key).toMatch(/^vp_live_[0-9A-Za-z]{32}$/);
    expect(live.body.data).toMatchObject({ env: 'live', name: 'Production' });
    expect(new Set(live.body.data.scopes)).toEqual(new Set(SCOPES));
    // Both work.
    expect((await t.partner(data.key, 'GET', '/api/v1/users')).status).toBe(200);
    expect((await t.partner(live.body.data.key, 'GET', '/api/v1/plans')).status).toBe(200);
    // The secret is nowhere in the database, nor in any other answer or the logs.
    const rows = await query<Record<string, unknown>>(t, sql`SELECT * FROM api_keys WHERE id = ${data.id}`);
    expect(JSON.stringify(rows)).not.toContain(data.key);
    expect(JSON.stringify(rows)).not.toContain(data.key.slice(-32));
    expect((await t.admin('GET', `/admin/v1/tenants/${a.id}`)).raw).not.toContain(data.key);
    expect(t.logs.join('\n')).not.toContain(data.key);
  });

  it('honours expires_at: a past one is rejected, a future one stops working when reached', async () => {
    expectInvalidFields(
      await t.admin('POST', `/admin/v1/tenants/${a.id}/api-keys`, {
        scopes: ['users:read'],
        expires_at: '2020-01-01T00:00:00.000Z',
      }),
      ['expires_at'],
    );
    expectInvalidFields(
      await t.admin('POST', `/admin/v1/tenants/${a.id}/api-keys`, {
        scopes: ['users:read'],
        expires_at: clock.now().toISOString(),
      }),
      ['expires_at'],
    );
    const expiresAt = new Date(clock.now().getTime() + HOUR).toISOString();
    const response = await t.admin('POST', `/admin/v1/tenants/${a.id}/api-keys`, {
      scopes: ['users:read'],
      expires_at: expiresAt,
    });
    expect(response.status).toBe(201);
    expect(response.body.data.expires_at).toBe(expiresAt);
    expect((await t.partner(response.body.data.key, 'GET', '/api/v1/users')).status).toBe(200);
    clock.advance(HOUR);
    expectError(
      await t.partner(response.body.data.key, 'GET', '/api/v1/users'),
      401,
      'authentication_failed',
    );
  });

  it('rejects bad scopes, envs and fields', async () => {
    const url = `/admin/v1/tenants/${a.id}/api-keys`;
    expectInvalidFields(await t.admin('POST', url, { scopes: [] }), ['scopes']);
    expectInvalidFields(await t.admin('POST', url, { scopes: ['users:admin'] }), ['scopes.0']);
    expectInvalidFields(await t.admin('POST', url, { scopes: 'users:read' }), ['scopes']);
    expectInvalidFields(await t.admin('POST', url, { scopes: ['users:read'], env: 'prod' }), ['env']);
    expectInvalidFields(await t.admin('POST', url, { scopes: ['users:read'], expires_at: 'tomorrow' }), [
      'expires_at',
    ]);
    expectInvalidFields(await t.admin('POST', url, { env: 'test' }), ['scopes']);
    expectError(
      await t.admin('POST', '/admin/v1/tenants/ten_missing/api-keys', { scopes: ['users:read'] }),
      404,
      'not_found',
    );
  });

  it('revokes a key: 200 { id, revoked_at }, then 401; unknown ids 404', async () => {
    const issued = await t.admin('POST', `/admin/v1/tenants/${a.id}/api-keys`, { scopes: ['users:read'] });
    const response = await t.admin('DELETE', `/admin/v1/api-keys/${issued.body.data.id}`);
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual({
      id: issued.body.data.id,
      revoked_at: expect.stringMatching(ISO_MS),
    });
    expectError(await t.partner(issued.body.data.key, 'GET', '/api/v1/users'), 401, 'authentication_failed');
    expectError(await t.admin('DELETE', '/admin/v1/api-keys/key_missing'), 404, 'not_found');
  });

  it('a partner key is refused by the operator API', async () => {
    expectError(
      await t.partner(a.key, 'POST', '/admin/v1/tenants', { name: 'x' }),
      401,
      'authentication_failed',
    );
    expectError(await t.partner(a.key, 'GET', `/admin/v1/tenants/${a.id}`), 401, 'authentication_failed');
  });
});

describe('user status', () => {
  it('sets active, pending and blocked and answers the list item', async () => {
    const user = await createUser(a);
    for (const status of ['pending', 'blocked', 'active']) {
      const response = await t.admin('PATCH', `/admin/v1/users/${user.id}`, { status });
      expect(response.status).toBe(200);
      expect(response.body.data).toEqual({
        ...(await a.request('GET', `/api/v1/users/${user.id}`)).body.data,
        status,
      });
    }
  });

  it('rejects other statuses and fields; unknown and deleted users are 404', async () => {
    const user = await createUser(a);
    expectInvalidFields(await t.admin('PATCH', `/admin/v1/users/${user.id}`, { status: 'deleted' }), [
      'status',
    ]);
    expectInvalidFields(
      await t.admin('PATCH', `/admin/v1/users/${user.id}`, { status: 'active', name: 'x' }),
      ['name'],
    );
    expectInvalidFields(await t.admin('PATCH', `/admin/v1/users/${user.id}`, {}), ['status']);
    await a.request('DELETE', `/api/v1/users/${user.id}`);
    expectError(
      await t.admin('PATCH', `/admin/v1/users/${user.id}`, { status: 'blocked' }),
      404,
      'not_found',
    );
    expectError(
      await t.admin('PATCH', '/admin/v1/users/usr_missing', { status: 'blocked' }),
      404,
      'not_found',
    );
  });
});

describe('credits', () => {
  it('a new user has 0; grants and debits move the balance, negative allowed', async () => {
    const user = await createUser(a);
    const url = `/admin/v1/users/${user.id}/credits`;
    expect((await t.admin('GET', url)).body).toEqual({ data: { user_id: user.id, balance_minutes: 0 } });
    const grant = await t.admin('POST', url, { minutes: 30, reason: 'welcome' });
    expect(grant.status).toBe(201);
    expect(grant.body).toEqual({ data: { user_id: user.id, balance_minutes: 30 } });
    expect((await t.admin('POST', url, { minutes: -45 })).body.data.balance_minutes).toBe(-15);
    expect((await t.admin('POST', url, { minutes: 0 })).body.data.balance_minutes).toBe(-15);
    expect((await t.admin('GET', url)).body.data.balance_minutes).toBe(-15);
    const ledger = await query<{ minutes: number }>(
      t,
      sql`SELECT minutes FROM credit_ledger WHERE user_id = ${user.id} ORDER BY created_at, id`,
    );
    expect(ledger.map((r) => r.minutes).reduce((x, y) => x + y, 0)).toBe(-15);
  });

  it('concurrent grants all count', async () => {
    const user = await createUser(a);
    const url = `/admin/v1/users/${user.id}/credits`;
    await Promise.all(Array.from({ length: 10 }, () => t.admin('POST', url, { minutes: 3 })));
    expect((await t.admin('GET', url)).body.data.balance_minutes).toBe(30);
  });

  it('types minutes strictly; unknown and deleted users are 404', async () => {
    const user = await createUser(a);
    const url = `/admin/v1/users/${user.id}/credits`;
    expectInvalidFields(await t.admin('POST', url, { minutes: 1.5 }), ['minutes']);
    expectInvalidFields(await t.admin('POST', url, { minutes: '10' }), ['minutes']);
    expectInvalidFields(await t.admin('POST', url, { minutes: 5, note: 'x' }), ['note']);
    expectInvalidFields(await t.admin('POST', url, {}), ['minutes']);
    expect((await t.admin('GET', url)).body.data.balance_minutes).toBe(0);
    expectError(await t.admin('GET', '/admin/v1/users/usr_missing/credits'), 404, 'not_found');
    expectError(
      await t.admin('POST', '/admin/v1/users/usr_missing/credits', { minutes: 1 }),
      404,
      'not_found',
    );
    await a.request('DELETE', `/api/v1/users/${user.id}`);
    expectError(await t.admin('GET', url), 404, 'not_found');
  });
});
