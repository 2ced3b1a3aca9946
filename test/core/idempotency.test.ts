/** Idempotency-Key on POST /api/v1/users, exactly as docs/design-choices.md says. */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createIdempotencyStore, fingerprintOf } from '../../src/core/idempotency/store.js';
import { createTenant, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { ENGINE } from '../support/databases.js';
import { expectError, expectInvalidFields, query } from '../support/expect.js';

const clock = new ManualClock('2026-07-01T00:00:00.000Z');
const HOUR = 60 * 60 * 1000;
let t: TestApp;
let a: TestTenant;
let b: TestTenant;
let counter = 0;

const body = (overrides: Record<string, unknown> = {}) => ({
  email: `idem${++counter}@example.com`,
  name: 'Idem Potent',
  password: 'correct horse',
  ...overrides,
});
const post = (input: unknown, key?: string, tenant = a) =>
  tenant.request('POST', '/api/v1/users', input, key === undefined ? {} : { 'idempotency-key': key });
const usersWithEmail = async (email: string) =>
  (
    await query<{ id: string }>(
      t,
      sql`SELECT id FROM users WHERE lower(email) = lower(${email}) AND deleted_at IS NULL`,
    )
  ).length;

beforeAll(async () => {
  t = await startTestApp({ clock });
  a = await createTenant(t, { name: 'A' });
  b = await createTenant(t, { name: 'B' });
});
afterAll(() => t.close());

describe('replay', () => {
  it('returns the original status, body and Location with Idempotent-Replayed and a new X-Request-Id', async () => {
    const input = body();
    const first = await post(input, 'key-replay-1');
    expect(first.status).toBe(201);
    expect(first.headers['idempotent-replayed']).toBeUndefined();
    const second = await post(input, 'key-replay-1', a);
    expect(second.status).toBe(201);
    expect(second.body).toEqual(first.body);
    expect(second.headers.location).toBe(first.headers.location);
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.headers['x-request-id']).toBeTruthy();
    expect(second.headers['x-request-id']).not.toBe(first.headers['x-request-id']);
    expect(await usersWithEmail(input.email)).toBe(1);
  });

  it('treats a body with reordered keys as the same request', async () => {
    const input = body();
    const first = await post(input, 'key-reorder');
    const reordered = { password: input.password, name: input.name, email: input.email };
    const second = await post(reordered, 'key-reorder');
    expect(second.headers['idempotent-replayed']).toBe('true');
    expect(second.body).toEqual(first.body);
  });

  it('echoes an incoming X-Request-Id on the replay, never the original one', async () => {
    const input = body();
    await post(input, 'key-reqid', a);
    const replay = await a.request('POST', '/api/v1/users', input, {
      'idempotency-key': 'key-reqid',
      'x-request-id': 'my-retry-1',
    });
    expect(replay.headers['x-request-id']).toBe('my-retry-1');
  });

  it('without a key a repeat is not de-duplicated: 409 conflict', async () => {
    const input = body();
    expect((await post(input)).status).toBe(201);
    expectError(await post(input), 409, 'conflict');
  });
});

describe('what is stored', () => {
  it('a 409 conflict is stored: the replay differs only in request_id', async () => {
    const input = body();
    expect((await post(input)).status).toBe(201);
    const first = await post(input, 'key-conflict');
    expectError(first, 409, 'conflict');
    const replay = await post(input, 'key-conflict');
    expectError(replay, 409, 'conflict');
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.request_id).not.toBe(first.body.request_id);
    expect({ ...replay.body, request_id: 'x' }).toEqual({ ...first.body, request_id: 'x' });
    // Still the stored answer after the email is freed.
    const [row] = await query<{ id: string }>(t, sql`SELECT id FROM users WHERE email = ${input.email}`);
    expect((await a.request('DELETE', `/api/v1/users/${row.id}`)).status).toBe(200);
    const later = await post(input, 'key-conflict');
    expect(later.status).toBe(409);
    expect(later.headers['idempotent-replayed']).toBe('true');
  });

  it('a 422 validation_failed is not stored: a corrected retry with the same key proceeds', async () => {
    const input = body();
    expectInvalidFields(await post({ ...input, name: 42 }, 'key-422'), ['name']);
    const corrected = await post(input, 'key-422');
    expect(corrected.status).toBe(201);
    expect(corrected.headers['idempotent-replayed']).toBeUndefined();
    expect((await post(input, 'key-422')).headers['idempotent-replayed']).toBe('true');
  });

  it('400, 401 and 403 answers are not stored', async () => {
    const input = body();
    const malformed = await t.inject({
      method: 'POST',
      url: '/api/v1/users',
      headers: {
        authorization: `Bearer ${a.key}`,
        'content-type': 'application/json',
        'idempotency-key': 'key-4xx',
      },
      payload: '{"email":',
    });
    expectError(malformed, 400, 'invalid_request');
    const reader = await createTenant(t, { scopes: ['users:read'] });
    expectError(
      await t.partner(reader.key, 'POST', '/api/v1/users', input, { 'idempotency-key': 'key-4xx' }),
      403,
      'permission_denied',
    );
    expectError(
      await t.partner('vp_test_00000000000000000000000000000000', 'POST', '/api/v1/users', input, {
        'idempotency-key': 'key-4xx',
      }),
      401,
      'authentication_failed',
    );
    const proceeds = await post(input, 'key-4xx');
    expect(proceeds.status).toBe(201);
    expect(proceeds.headers['idempotent-replayed']).toBeUndefined();
  });
});

describe('reuse and key format', () => {
  it('the same key with a different body answers 409 idempotency_key_reuse and changes nothing', async () => {
    const input = body();
    expect((await post(input, 'key-reuse')).status).toBe(201);
    const other = body();
    expectError(await post(other, 'key-reuse'), 409, 'idempotency_key_reuse');
    expect(await usersWithEmail(other.email)).toBe(0);
    // The original is still replayed.
    expect((await post(input, 'key-reuse')).headers['idempotent-replayed']).toBe('true');
  });

  it('keys are scoped to the tenant', async () => {
    const inA = body();
    const inB = body();
    expect((await post(inA, 'key-shared', a)).status).toBe(201);
    const response = await post(inB, 'key-shared', b);
    expect(response.status).toBe(201);
    expect(response.headers['idempotent-replayed']).toBeUndefined();
    expect(await usersWithEmail(inB.email)).toBe(1);
  });

  it('accepts 255 printable ASCII characters, spaces included', async () => {
    const key = ` ~!${'k'.repeat(250)}#&`;
    expect(key.length).toBe(255);
    const input = body();
    expect((await post(input, key)).status).toBe(201);
    expect((await post(input, key)).headers['idempotent-replayed']).toBe('true');
  });

  it.each([
    ['256 characters', 'k'.repeat(256)],
    ['a tab', 'a\tb'],
    ['a non-ASCII character', 'clé'],
    ['empty', ''],
  ])('answers 400 invalid_request for a key that is %s, storing nothing', async (_what, key) => {
    const input = body();
    expectError(await post(input, key), 400, 'invalid_request');
    expect(await usersWithEmail(input.email)).toBe(0);
  });

  it('authentication and scope are checked before the key', async () => {
    const reader = await createTenant(t, { scopes: ['users:read'] });
    expectError(
      await t.partner(reader.key, 'POST', '/api/v1/users', body(), { 'idempotency-key': 'k'.repeat(300) }),
      403,
      'permission_denied',
    );
    expectError(
      await t.partner('nope', 'POST', '/api/v1/users', body(), { 'idempotency-key': 'k'.repeat(300) }),
      401,
      'authentication_failed',
    );
  });
});

describe('concurrency', () => {
  it(`20 concurrent identical requests with one key create one user and answer identically (${ENGINE})`, async () => {
    const input = body();
    const responses = await Promise.all(Array.from({ length: 20 }, () => post(input, 'key-concurrent')));
    expect(responses.map((r) => r.status)).toEqual(Array(20).fill(201));
    for (const r of responses) {
      expect(r.body).toEqual(responses[0].body);
      expect(r.headers.location).toBe(responses[0].headers.location);
    }
    expect(responses.filter((r) => r.headers['idempotent-replayed'] === undefined)).toHaveLength(1);
    expect(await usersWithEmail(input.email)).toBe(1);
    expect(new Set(responses.map((r) => r.headers['x-request-id'])).size).toBe(20);
  });

  it('20 concurrent requests with one key but different bodies: one user, the rest 409 idempotency_key_reuse', async () => {
    const inputs = Array.from({ length: 20 }, () => body());
    const responses = await Promise.all(inputs.map((input) => post(input, 'key-concurrent-mixed')));
    const created = responses.filter((r) => r.status === 201);
    expect(created).toHaveLength(1);
    for (const r of responses) if (r.status !== 201) expectError(r, 409, 'idempotency_key_reuse');
    const total = (await Promise.all(inputs.map((i) => usersWithEmail(i.email)))).reduce((x, y) => x + y, 0);
    expect(total).toBe(1);
  });

  it('a key whose request is still executing makes a duplicate wait, then 409 conflict with Retry-After: 1', async () => {
    const store = createIdempotencyStore({ db: t.services.database.db, clock, waitMs: 150, pollMs: 10 });
    const first = await store.begin(a.id, 'key-busy', 'fp');
    expect(first.kind).toBe('execute');
    expect((await store.begin(a.id, 'key-busy', 'fp')).kind).toBe('busy');
    expect((await store.begin(a.id, 'key-busy', 'other')).kind).toBe('reuse');
    // Over HTTP the busy answer is 409 conflict with Retry-After: 1 (after the 10 s wait; not waited for here).
  });

  it('a request that died while executing is taken over once its lease expires', async () => {
    const input = body();
    const fingerprint = fingerprintOf('POST', '/api/v1/users', input);
    const now = clock.now();
    await sql`INSERT INTO idempotency_keys (tenant_id, key, fingerprint, status, owner, locked_until, created_at)
      VALUES (${a.id}, 'key-crashed', ${fingerprint}, 'executing', 'ghost', ${new Date(now.getTime() - 1)}, ${now})`.execute(
      t.services.database.db,
    );
    const response = await post(input, 'key-crashed');
    expect(response.status).toBe(201);
    expect(await usersWithEmail(input.email)).toBe(1);
  });
});

describe('leases', () => {
  it('a live request keeps its key past its lease (its process renews it), a finished one does not', async () => {
    const db = t.services.database.db;
    const leaseClock = new ManualClock(clock.now().toISOString());
    const owner = createIdempotencyStore({ db, clock: leaseClock, leaseMs: 60 });
    const other = createIdempotencyStore({ db, clock: leaseClock, leaseMs: 60, waitMs: 0 });
    const first = await owner.begin(a.id, 'key-renewed', 'fp');
    if (first.kind !== 'execute') throw new Error(`expected to execute, got ${first.kind}`);
    const lockedUntil = async () =>
      (
        await query<{ locked_until: Date }>(
          t,
          sql`SELECT locked_until FROM idempotency_keys WHERE tenant_id = ${a.id} AND key = 'key-renewed'`,
        )
      )[0].locked_until.getTime();

    // Far past the lease by the clock: the owner's next renewal moves the lease past it again.
    leaseClock.advance(1000);
    while ((await lockedUntil()) <= leaseClock.now().getTime()) await new Promise((r) => setTimeout(r, 10));
    expect((await other.begin(a.id, 'key-renewed', 'fp')).kind).toBe('busy');

    owner.finish({ tenantId: a.id, key: 'key-renewed', ...first, recorded: false });
    leaseClock.advance(1000);
    expect((await other.begin(a.id, 'key-renewed', 'fp')).kind).toBe('execute');
  });
});

describe('the 24-hour window', () => {
  it('replays within 24 h and treats the key as new after it', async () => {
    const input = body();
    const first = await post(input, 'key-window');
    expect(first.status).toBe(201);
    clock.advance(24 * HOUR - 1);
    expect((await post(input, 'key-window')).headers['idempotent-replayed']).toBe('true');
    expectError(await post(body(), 'key-window'), 409, 'idempotency_key_reuse');
    clock.advance(2);
    // Expired: the same key now starts a fresh request (a different body is no reuse).
    const fresh = body();
    const response = await post(fresh, 'key-window');
    expect(response.status).toBe(201);
    expect(response.headers['idempotent-replayed']).toBeUndefined();
    expect(response.body.data.id).not.toBe(first.body.data.id);
  });

  it('the purge job deletes expired records only', async () => {
    const input = body();
    await post(input, 'key-purge-old');
    clock.advance(23 * HOUR);
    await post(body(), 'key-purge-new');
    clock.advance(2 * HOUR);
    await t.services.idempotency.purgeExpired();
    const keys = (
      await query<{ key: string }>(t, sql`SELECT key FROM idempotency_keys WHERE tenant_id = ${a.id}`)
    ).map((r) => r.key);
    expect(keys).not.toContain('key-purge-old');
    expect(keys).toContain('key-purge-new');
  });
});
