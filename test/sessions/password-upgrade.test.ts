/**
 * Sign-in upgrades stored password hashes: a legacy scrypt hash verifies as it is and is replaced
 * by Argon2id in the same request; new users get Argon2id; wrong passwords and unknown emails
 * still get the one answer.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, createUser, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { expectError, query } from '../support/expect.js';
import { legacyScryptHash } from '../support/passwords.js';

let t: TestApp;
let a: TestTenant;

const signIn = (email: string, password: string, tenantId = a.id) =>
  t.inject({
    method: 'POST',
    url: '/auth/v1/sessions',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ tenant_id: tenantId, email, password }),
  });

const storedHash = async (userId: string) =>
  (await query<{ password_hash: string }>(t, sql`SELECT password_hash FROM users WHERE id = ${userId}`))[0]
    .password_hash;

const setStoredHash = (userId: string, hash: string) =>
  query(t, sql`UPDATE users SET password_hash = ${hash} WHERE id = ${userId}`);

beforeAll(async () => {
  // The test setting of PASSWORD_HASH_MEMORY_KIB (1024) from startTestApp.
  t = await startTestApp();
  a = await createTenant(t, { name: 'A' });
});
afterAll(() => t.close());

describe('password hashes at sign-in', () => {
  it('new users get an Argon2id hash at the configured memory', async () => {
    const user = await createUser(a, { password: 'a secret pass' });
    expect(await storedHash(user.id)).toMatch(/^\$argon2id\$v=19\$m=1024,t=2,p=1\$/);
  });

  it('a legacy scrypt hash signs in and is replaced by Argon2id in the same request', async () => {
    const user = await createUser(a, { password: 'open sesame' });
    const legacy = legacyScryptHash('open sesame', 16384);
    await setStoredHash(user.id, legacy);

    const first = await signIn(user.email, 'open sesame');
    expect(first.status).toBe(201);
    const upgraded = await storedHash(user.id);
    expect(upgraded).toMatch(/^\$argon2id\$v=19\$m=1024,t=2,p=1\$/);

    // The new hash is the same password, and is kept as it is from then on.
    expect((await signIn(user.email, 'open sesame')).status).toBe(201);
    expect(await storedHash(user.id)).toBe(upgraded);
    expectError(await signIn(user.email, 'open sesamE'), 401, 'authentication_failed');
  });

  it('a wrong password against a legacy hash fails with the usual answer and changes nothing', async () => {
    const user = await createUser(a, { password: 'open sesame' });
    const legacy = legacyScryptHash('open sesame');
    await setStoredHash(user.id, legacy);
    const wrong = await signIn(user.email, 'not the password');
    const unknown = await signIn('nobody-here@example.com', 'not the password');
    expectError(wrong, 401, 'authentication_failed');
    expectError(unknown, 401, 'authentication_failed');
    expect(wrong.body.error.message).toBe(unknown.body.error.message);
    expect(await storedHash(user.id)).toBe(legacy);
  });

  it('a blocked user with a legacy hash is refused and the hash stays', async () => {
    const user = await createUser(a, { password: 'open sesame' });
    const legacy = legacyScryptHash('open sesame');
    await setStoredHash(user.id, legacy);
    expect((await t.admin('PATCH', `/admin/v1/users/${user.id}`, { status: 'blocked' })).status).toBe(200);
    expectError(await signIn(user.email, 'open sesame'), 401, 'authentication_failed');
    expect(await storedHash(user.id)).toBe(legacy);
  });

  it('an unknown email in another tenant goes through the decoy and answers the same 401', async () => {
    const other = await createTenant(t, { name: 'B' });
    const user = await createUser(a, { password: 'open sesame' });
    expectError(await signIn(user.email, 'open sesame', other.id), 401, 'authentication_failed');
  });
});
