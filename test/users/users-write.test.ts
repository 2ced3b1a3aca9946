/** POST /api/v1/users and DELETE /api/v1/users/{id}, and the sessions of users (/auth/v1). */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createTenant, createUser, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { expectError, expectInvalidFields, ISO_MS, query } from '../support/expect.js';

const clock = new ManualClock('2026-02-01T10:00:00.000Z');
let t: TestApp;
let a: TestTenant;
let b: TestTenant;

const body = (overrides: Record<string, unknown> = {}) => ({
  email: `u${Math.random().toString(36).slice(2)}@example.com`,
  name: 'Grace Hopper',
  password: 'correct horse',
  ...overrides,
});

const raw = (payload: string | Buffer, contentType = 'application/json', tenant = a) =>
  t.inject({
    method: 'POST',
    url: '/api/v1/users',
    headers: { authorization: `Bearer ${tenant.key}`, 'content-type': contentType },
    payload,
  });

const signIn = (tenantId: string, email: string, password: string) =>
  t.inject({
    method: 'POST',
    url: '/auth/v1/sessions',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ tenant_id: tenantId, email, password }),
  });

const me = (token: string) =>
  t.inject({ method: 'GET', url: '/auth/v1/me', headers: { authorization: `Bearer ${token}` } });

beforeAll(async () => {
  t = await startTestApp({ clock });
  a = await createTenant(t, { name: 'A' });
  b = await createTenant(t, { name: 'B' });
});
afterAll(() => t.close());

describe('POST /api/v1/users', () => {
  it('creates an active user: 201, the four fields, a Location that answers', async () => {
    const input = body({ phone: '+442071838750' });
    const response = await a.request('POST', '/api/v1/users', input);
    expect(response.status).toBe(201);
    const data = response.body.data;
    expect(Object.keys(response.body)).toEqual(['data']);
    expect(Object.keys(data).sort()).toEqual(['created_at', 'email', 'id', 'name']);
    expect(data).toMatchObject({ email: input.email, name: input.name });
    expect(data.id).toMatch(/^usr_[0-9A-Za-z]{20,}$/);
    expect(data.created_at).toMatch(ISO_MS);
    expect(response.headers.location).toBe(`http://voiceplane.test/api/v1/users/${data.id}`);
    const path = new URL(String(response.headers.location)).pathname;
    const fetched = await a.request('GET', path);
    expect(fetched.status).toBe(200);
    expect(fetched.body.data).toMatchObject({
      id: data.id,
      status: 'active',
      phone: '+442071838750',
      created_at: data.created_at,
      plan_id: null,
      plan_name: null,
    });
  });

  it('stores the password only as a memory-hard hash', async () => {
    const user = await createUser(a, { password: 'a secret pass' });
    const [row] = await query<{ password_hash: string }>(
      t,
      sql`SELECT password_hash FROM users WHERE id = ${user.id}`,
    );
    expect(row.password_hash).not.toContain('a secret pass');
    expect(row.password_hash).toMatch(/^(scrypt|\$argon2)/);
  });

  it('rejects an email already used in the tenant, case-insensitively, with 409 conflict', async () => {
    const user = await createUser(a, { email: 'Dup.Licate@Example.com' });
    expectError(
      await a.request('POST', '/api/v1/users', body({ email: 'dup.licate@example.COM' })),
      409,
      'conflict',
    );
    expectError(await a.request('POST', '/api/v1/users', body({ email: user.email })), 409, 'conflict');
    // Another tenant may use it.
    expect((await b.request('POST', '/api/v1/users', body({ email: 'dup.licate@example.com' }))).status).toBe(
      201,
    );
  });

  it('types every field strictly and lists every offending field', async () => {
    expectInvalidFields(await a.request('POST', '/api/v1/users', body({ name: 42 })), ['name']);
    expectInvalidFields(
      await a.request('POST', '/api/v1/users', { email: 7, name: 42, password: true, phone: 14155550123 }),
      ['email', 'name', 'password', 'phone'],
    );
    expectInvalidFields(await a.request('POST', '/api/v1/users', { name: null }), [
      'email',
      'name',
      'password',
    ]);
    expectInvalidFields(await a.request('POST', '/api/v1/users', {}), ['email', 'name', 'password']);
  });

  it('rejects unknown fields instead of dropping them', async () => {
    const response = await a.request('POST', '/api/v1/users', body({ role: 'admin', status: 'blocked' }));
    expectInvalidFields(response, ['role', 'status']);
  });

  it.each([
    ['email', 'not-an-email'],
    ['email', ''],
    ['email', 'a@'],
    ['name', ''],
    ['password', '1234567'],
    ['password', ''],
    ['phone', '4155550123'],
    ['phone', '+0155550123'],
    ['phone', '+1 415 555 0123'],
    ['phone', '+12345'],
    ['phone', '+1234567890123456'],
    ['phone', null],
  ])('rejects %s = %j with 422', async (field, value) => {
    expectInvalidFields(await a.request('POST', '/api/v1/users', body({ [field]: value })), [field]);
  });

  it('accepts the smallest valid values', async () => {
    const response = await a.request(
      'POST',
      '/api/v1/users',
      body({ name: 'X', password: '12345678', phone: '+1234567' }),
    );
    expect(response.status).toBe(201);
  });

  it.each([
    ['malformed JSON', '{"email": '],
    ['an array', '[1, 2]'],
    ['a string', '"hello"'],
    ['a number', '42'],
    ['null', 'null'],
    ['an empty body', ''],
  ])('answers 400 invalid_request for %s', async (_what, payload) => {
    expectError(await raw(payload), 400, 'invalid_request');
  });

  it('answers 415 invalid_request for a non-JSON content type', async () => {
    expectError(await raw('email=a@b.co', 'application/x-www-form-urlencoded'), 415, 'invalid_request');
    expectError(await raw(JSON.stringify(body()), 'text/plain'), 415, 'invalid_request');
  });

  it('answers 413 invalid_request over 1 MiB and accepts JSON up to it', async () => {
    const big = JSON.stringify(body({ name: 'x'.repeat(1024 * 1024) }));
    expectError(await raw(big), 413, 'invalid_request');
    // Just under the limit the body is parsed (and then fails validation on its length).
    const under = JSON.stringify(body({ name: 'x'.repeat(1024 * 1024 - 200) }));
    expectInvalidFields(await raw(under), ['name']);
  });

  it('accepts application/json with a charset', async () => {
    expect((await raw(JSON.stringify(body()), 'application/json; charset=utf-8')).status).toBe(201);
  });

  it('stores nothing for a rejected request', async () => {
    const before = (await a.request('GET', '/api/v1/users?limit=1')).body.pagination.total;
    await a.request('POST', '/api/v1/users', body({ name: 42 }));
    await a.request('POST', '/api/v1/users', body({ extra: 1 }));
    await raw('{"email":');
    expect((await a.request('GET', '/api/v1/users?limit=1')).body.pagination.total).toBe(before);
  });
});

describe('DELETE /api/v1/users/{id}', () => {
  it('soft-deletes: tombstone, repeat gives the same tombstone, gone from the list and GET', async () => {
    const user = await createUser(a);
    const first = await a.request('DELETE', `/api/v1/users/${user.id}`);
    expect(first.status).toBe(200);
    expect(first.body).toEqual({ data: { id: user.id, deleted_at: expect.stringMatching(ISO_MS) } });
    const again = await a.request('DELETE', `/api/v1/users/${user.id}`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(first.body);
    const listed = await a.request('GET', `/api/v1/users?limit=100&search=${encodeURIComponent(user.email)}`);
    expect(listed.body.data).toEqual([]);
    expect(listed.body.pagination.total).toBe(0);
    expectError(await a.request('GET', `/api/v1/users/${user.id}`), 404, 'not_found');
    // The row is kept (soft deletion).
    const rows = await query(t, sql`SELECT deleted_at FROM users WHERE id = ${user.id}`);
    expect(rows).toHaveLength(1);
  });

  it('revokes the user’s sessions at once and removes its memberships', async () => {
    const user = await createUser(a, { password: 'open sesame' });
    const s1 = await signIn(a.id, user.email, 'open sesame');
    const s2 = await signIn(a.id, user.email, 'open sesame');
    expect((await me(s1.body.data.token)).status).toBe(200);
    expect(await query(t, sql`SELECT 1 FROM memberships WHERE user_id = ${user.id}`)).toHaveLength(1);
    expect((await a.request('DELETE', `/api/v1/users/${user.id}`)).status).toBe(200);
    expectError(await me(s1.body.data.token), 401, 'authentication_failed');
    expectError(await me(s2.body.data.token), 401, 'authentication_failed');
    expect(await query(t, sql`SELECT 1 FROM memberships WHERE user_id = ${user.id}`)).toHaveLength(0);
    const sessions = await query<{ revoked_at: Date | null }>(
      t,
      sql`SELECT revoked_at FROM sessions WHERE user_id = ${user.id}`,
    );
    expect(sessions.map((s) => s.revoked_at !== null)).toEqual([true, true]);
    expectError(await signIn(a.id, user.email, 'open sesame'), 401, 'authentication_failed');
  });

  it('frees the email for a new user, and deleting that one gives its own tombstone', async () => {
    const user = await createUser(a, { email: 'reuse@example.com' });
    const tomb = await a.request('DELETE', `/api/v1/users/${user.id}`);
    const again = await a.request('POST', '/api/v1/users', body({ email: 'REUSE@example.com' }));
    expect(again.status).toBe(201);
    expect(again.body.data.id).not.toBe(user.id);
    expect((await a.request('DELETE', `/api/v1/users/${user.id}`)).body).toEqual(tomb.body);
    const second = await a.request('DELETE', `/api/v1/users/${again.body.data.id}`);
    expect(second.body.data.id).toBe(again.body.data.id);
  });

  it('answers 404 for an id that never existed in the tenant, including another tenant’s user', async () => {
    expectError(await a.request('DELETE', '/api/v1/users/usr_neverexisted000000000000'), 404, 'not_found');
    const theirs = await createUser(b);
    expectError(await a.request('DELETE', `/api/v1/users/${theirs.id}`), 404, 'not_found');
    expect((await b.request('GET', `/api/v1/users/${theirs.id}`)).status).toBe(200);
  });
});

describe('user sessions (/auth/v1)', () => {
  it('signs in with 201 { token, user_id, expires_at } and /me answers the list item', async () => {
    const user = await createUser(a, { password: 'p4ssword!' });
    const response = await signIn(a.id, user.email.toUpperCase(), 'p4ssword!');
    expect(response.status).toBe(201);
    expect(Object.keys(response.body.data).sort()).toEqual(['expires_at', 'token', 'user_id']);
    expect(response.body.data.user_id).toBe(user.id);
    expect(response.body.data.expires_at).toMatch(ISO_MS);
    const mine = await me(response.body.data.token);
    expect(mine.status).toBe(200);
    expect(mine.body.data).toEqual((await a.request('GET', `/api/v1/users/${user.id}`)).body.data);
  });

  it('stores only a hash of the token, and the session ends after 7 days', async () => {
    const user = await createUser(a, { password: 'p4ssword!' });
    const { token, expires_at } = (await signIn(a.id, user.email, 'p4ssword!')).body.data;
    expect(expires_at).toBe(new Date(clock.now().getTime() + 7 * 24 * 3600 * 1000).toISOString());
    const rows = await query<Record<string, unknown>>(
      t,
      sql`SELECT * FROM sessions WHERE user_id = ${user.id}`,
    );
    expect(JSON.stringify(rows)).not.toContain(token);
    clock.set(new Date(new Date(expires_at).getTime() - 1));
    expect((await me(token)).status).toBe(200);
    clock.set(expires_at);
    expectError(await me(token), 401, 'authentication_failed');
    clock.set('2026-02-01T10:00:00.000Z');
  });

  it('answers the same 401 for a wrong email and a wrong password', async () => {
    const user = await createUser(a, { password: 'p4ssword!' });
    const wrongPassword = await signIn(a.id, user.email, 'p4ssword?');
    const wrongEmail = await signIn(a.id, `x${user.email}`, 'p4ssword!');
    const wrongTenant = await signIn(b.id, user.email, 'p4ssword!');
    for (const response of [wrongPassword, wrongEmail, wrongTenant])
      expectError(response, 401, 'authentication_failed');
    expect(wrongPassword.body.error).toEqual(wrongEmail.body.error);
    expect(wrongTenant.body.error).toEqual(wrongEmail.body.error);
  });

  it('blocked users cannot sign in, and blocking ends their sessions', async () => {
    const user = await createUser(a, { password: 'p4ssword!' });
    const session = await signIn(a.id, user.email, 'p4ssword!');
    expect((await t.admin('PATCH', `/admin/v1/users/${user.id}`, { status: 'blocked' })).status).toBe(200);
    const refused = await signIn(a.id, user.email, 'p4ssword!');
    expectError(refused, 401, 'authentication_failed');
    expect(refused.body.error).toEqual((await signIn(a.id, user.email, 'wrong one')).body.error);
    expectError(await me(session.body.data.token), 401, 'authentication_failed');
    // Unblocked again, the user may sign in.
    expect((await t.admin('PATCH', `/admin/v1/users/${user.id}`, { status: 'active' })).status).toBe(200);
    expect((await signIn(a.id, user.email, 'p4ssword!')).status).toBe(201);
  });

  it('/me refuses a missing, unknown or foreign token', async () => {
    expectError(await t.inject({ method: 'GET', url: '/auth/v1/me' }), 401, 'authentication_failed');
    expectError(await me('vps_unknown'), 401, 'authentication_failed');
    expectError(await me(a.key), 401, 'authentication_failed');
    expectError(await me('test-admin-token-0123456789'), 401, 'authentication_failed');
  });

  it('a session token is refused by /api/v1 and /admin/v1', async () => {
    const user = await createUser(a, { password: 'p4ssword!' });
    const token = (await signIn(a.id, user.email, 'p4ssword!')).body.data.token;
    expectError(await t.partner(token, 'GET', '/api/v1/users'), 401, 'authentication_failed');
    expectError(
      await t.partner(token, 'GET', `/admin/v1/users/${user.id}/credits`),
      401,
      'authentication_failed',
    );
  });

  it('rejects a malformed sign-in body like any other', async () => {
    expectInvalidFields(
      await t.inject({
        method: 'POST',
        url: '/auth/v1/sessions',
        headers: { 'content-type': 'application/json' },
        payload: JSON.stringify({ tenant_id: 1, email: 'x', extra: true }),
      }),
      ['tenant_id', 'email', 'password', 'extra'],
    );
  });
});
