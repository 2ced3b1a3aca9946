/** With ADMIN_TOKEN unset, the operator API answers 401 to everything (docs/design-choices.md). */
import { afterAll, beforeAll, describe, it } from 'vitest';
import { ADMIN_TOKEN, startTestApp, type TestApp } from '../support/app.js';
import { expectError } from '../support/expect.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { ADMIN_TOKEN: '' } });
});
afterAll(() => t.close());

describe('ADMIN_TOKEN unset', () => {
  it.each([
    ['POST', '/admin/v1/tenants', { name: 'x' }],
    ['GET', '/admin/v1/tenants', undefined],
    ['GET', '/admin/v1/tenants/ten_x', undefined],
    ['GET', '/admin/v1/tenants/ten_x/api-keys', undefined],
    ['GET', '/admin/v1/tenants/ten_x/agents', undefined],
    ['PATCH', '/admin/v1/tenants/ten_x', { name: 'x' }],
    ['POST', '/admin/v1/tenants/ten_x/api-keys', { scopes: ['users:read'] }],
    ['DELETE', '/admin/v1/api-keys/key_x', undefined],
    ['POST', '/admin/v1/tenants/ten_x/plans', {}],
    ['PATCH', '/admin/v1/plans/plan_x', {}],
    ['DELETE', '/admin/v1/plans/plan_x', undefined],
    ['PATCH', '/admin/v1/users/usr_x', { status: 'active' }],
    ['POST', '/admin/v1/users/usr_x/credits', { minutes: 1 }],
    ['GET', '/admin/v1/users/usr_x/credits', undefined],
  ] as const)('%s %s answers 401 whatever the token', async (method, url, body) => {
    for (const authorization of [
      undefined,
      'Bearer ',
      `Bearer ${ADMIN_TOKEN}`,
      'Bearer undefined',
      'Bearer null',
    ]) {
      const response = await t.inject({
        method,
        url,
        headers: {
          ...(authorization ? { authorization } : {}),
          ...(body ? { 'content-type': 'application/json' } : {}),
        },
        payload: body ? JSON.stringify(body) : undefined,
      });
      expectError(response, 401, 'authentication_failed');
    }
  });
});
