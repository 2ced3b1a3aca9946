/** DELETE /auth/v1/sessions: signing out revokes the presented session token, and only it. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import {
  ADMIN_TOKEN,
  createTenant,
  createUser,
  startTestApp,
  type TestApp,
  type TestTenant,
} from '../support/app.js';
import { expectError } from '../support/expect.js';
import { sessionClient } from './helpers.js';

const clock = new ManualClock('2026-03-02T09:00:00.000Z');
let t: TestApp;
let tenant: TestTenant;
let api: ReturnType<typeof sessionClient>;

beforeAll(async () => {
  t = await startTestApp({ clock });
  tenant = await createTenant(t);
  api = sessionClient(t);
});
afterAll(() => t.close());

async function tokenOf(email: string, password = 'correct horse'): Promise<string> {
  const response = await api.signIn(tenant.id, email, password);
  expect(response.status, response.raw).toBe(201);
  return response.body.data.token;
}

describe('sign-out', () => {
  it('revokes only the presented token: the user’s other session and other users’ sessions still work', async () => {
    const user = await createUser(tenant);
    const other = await createUser(tenant);
    const laptop = await tokenOf(user.email);
    const phone = await tokenOf(user.email);
    const theirs = await tokenOf(other.email);

    const out = await api.signOut(laptop);
    expect(out.status, out.raw).toBe(204);
    expect(out.raw).toBe('');

    expectError(await api.me(laptop), 401, 'authentication_failed');
    const stillIn = await api.me(phone);
    expect(stillIn.status).toBe(200);
    expect(stillIn.body.data.id).toBe(user.id);
    expect((await api.me(theirs)).status).toBe(200);
    // Signing in again after signing out works.
    expect((await api.me(await tokenOf(user.email))).status).toBe(200);
  });

  it('signing out twice answers 401 the second time', async () => {
    const user = await createUser(tenant);
    const token = await tokenOf(user.email);
    expect((await api.signOut(token)).status).toBe(204);
    const again = await api.signOut(token);
    expectError(again, 401, 'authentication_failed');
    expect(again.headers['www-authenticate']).toBe('Bearer realm="voiceplane", error="invalid_token"');
  });

  it('an expired session cannot sign out', async () => {
    const user = await createUser(tenant);
    const token = await tokenOf(user.email);
    clock.advance(7 * 24 * 60 * 60 * 1000 + 1);
    expectError(await api.signOut(token), 401, 'authentication_failed');
  });

  it('without a session token, or with another surface’s credential, it is 401 and nothing is revoked', async () => {
    const user = await createUser(tenant);
    const token = await tokenOf(user.email);
    expectError(await api.signOut(), 401, 'authentication_failed');
    for (const credential of [tenant.key, ADMIN_TOKEN, `${token}x`, 'vps_unknown']) {
      expectError(await api.signOut(credential), 401, 'authentication_failed');
    }
    expect((await api.me(token)).status).toBe(200);
  });

  it('a blocked user’s session is refused, like on /me', async () => {
    const user = await createUser(tenant);
    const token = await tokenOf(user.email);
    const blocked = await t.admin('PATCH', `/admin/v1/users/${user.id}`, { status: 'blocked' });
    expect(blocked.status, blocked.raw).toBe(200);
    expectError(await api.signOut(token), 401, 'authentication_failed');
  });
});
