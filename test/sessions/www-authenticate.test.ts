/**
 * RFC 6750: every 401 of a bearer-authenticated surface (/api/v1, /auth/v1, /admin/v1) carries
 * `WWW-Authenticate: Bearer realm="voiceplane"`, with `error="invalid_token"` when the request
 * presented a token that is not accepted; a 403 for a missing scope names it. The webhook (the
 * URL is its credential) has no bearer challenge.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { listRoutes, withoutRateLimits } from '../security/routes.js';
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

const NO_TOKEN = 'Bearer realm="voiceplane"';
const BAD_TOKEN = 'Bearer realm="voiceplane", error="invalid_token"';

const clock = new ManualClock('2026-04-01T12:00:00.000Z');
let t: TestApp;
let tenant: TestTenant;
let sessionToken: string;

beforeAll(async () => {
  t = await startTestApp({ clock, adapters: withoutRateLimits });
  tenant = await createTenant(t);
  const user = await createUser(tenant);
  const session = await sessionClient(t).signIn(tenant.id, user.email, 'correct horse');
  sessionToken = session.body.data.token;
});
afterAll(() => t.close());

const get = (url: string, authorization?: string) =>
  t.inject({ method: 'GET', url, headers: authorization === undefined ? {} : { authorization } });

describe('WWW-Authenticate on 401', () => {
  it('partner API: no key → the bare challenge; a wrong, revoked or foreign token → invalid_token', async () => {
    const none = await get('/api/v1/users');
    expectError(none, 401, 'authentication_failed');
    expect(none.headers['www-authenticate']).toBe(NO_TOKEN);
    for (const authorization of [
      `Bearer ${tenant.key}x`,
      `Bearer ${ADMIN_TOKEN}`,
      `Bearer ${sessionToken}`,
    ]) {
      const refused = await get('/api/v1/users', authorization);
      expectError(refused, 401, 'authentication_failed');
      expect(refused.headers['www-authenticate']).toBe(BAD_TOKEN);
    }
    // An unknown /api/v1 URL is a partner request too.
    expect((await get('/api/v1/nothing-here')).headers['www-authenticate']).toBe(NO_TOKEN);
  });

  it('partner API: a key without the scope is 403 with insufficient_scope naming it', async () => {
    const reader = await t.admin('POST', `/admin/v1/tenants/${tenant.id}/api-keys`, {
      scopes: ['plans:read'],
    });
    const refused = await get('/api/v1/users', `Bearer ${reader.body.data.key}`);
    expectError(refused, 403, 'permission_denied');
    expect(refused.headers['www-authenticate']).toBe(
      'Bearer realm="voiceplane", error="insufficient_scope", scope="users:read"',
    );
    // Allowed requests carry no challenge.
    expect(
      (await get('/api/v1/plans', `Bearer ${reader.body.data.key}`)).headers['www-authenticate'],
    ).toBeUndefined();
  });

  it('operator API: no token → the bare challenge; a wrong token → invalid_token', async () => {
    const none = await get('/admin/v1/calls');
    expectError(none, 401, 'authentication_failed');
    expect(none.headers['www-authenticate']).toBe(NO_TOKEN);
    const wrong = await get('/admin/v1/calls', `Bearer ${ADMIN_TOKEN}x`);
    expect(wrong.headers['www-authenticate']).toBe(BAD_TOKEN);
    expect(
      (await get('/admin/v1/calls', `Bearer ${ADMIN_TOKEN}`)).headers['www-authenticate'],
    ).toBeUndefined();
  });

  it('sessions: /me and sign-out challenge; a failed sign-in (credentials in the body) names no error', async () => {
    const api = sessionClient(t);
    expect((await get('/auth/v1/me')).headers['www-authenticate']).toBe(NO_TOKEN);
    expect((await get('/auth/v1/me', 'Bearer vps_unknown')).headers['www-authenticate']).toBe(BAD_TOKEN);
    expect((await api.signOut()).headers['www-authenticate']).toBe(NO_TOKEN);
    const failed = await api.signIn(tenant.id, 'nobody@example.com', 'wrong password');
    expectError(failed, 401, 'authentication_failed');
    expect(failed.headers['www-authenticate']).toBe(NO_TOKEN);
    expect((await get('/auth/v1/me', `Bearer ${sessionToken}`)).headers['www-authenticate']).toBeUndefined();
  });

  it('every 401 of every route of the three surfaces carries the challenge', async () => {
    const routes = listRoutes(t.app).filter((r) => /^\/(api|auth|admin)\/v1\//.test(r.path));
    let refusals = 0;
    for (const route of routes) {
      const url = route.path.replace(/:(\w+)/g, 'x_unknown');
      for (const authorization of [undefined, 'Bearer not-a-valid-token']) {
        const response = await t.inject({
          method: route.method as 'GET',
          url,
          headers: {
            'content-type': 'application/json',
            ...(authorization === undefined ? {} : { authorization }),
          },
          payload: route.method === 'GET' || route.method === 'DELETE' ? undefined : '{}',
        });
        if (response.status !== 401) continue;
        refusals++;
        expect(response.headers['www-authenticate'], `${route.method} ${route.path}`).toBe(
          authorization === undefined ? NO_TOKEN : BAD_TOKEN,
        );
      }
    }
    expect(refusals).toBeGreaterThan(routes.length);
  });

  it('the webhook has no bearer challenge', async () => {
    const response = await t.inject({
      method: 'POST',
      url: '/webhooks/agents/webh_unknown0000000000000000000000000/trigger',
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ phone: '+14155550123', name: 'Ada' }),
    });
    expect(response.status).toBe(404);
    expect(response.headers['www-authenticate']).toBeUndefined();
  });
});
