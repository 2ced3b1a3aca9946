/**
 * A tenant's email settings refused for more than one reason name every offending field: a sender
 * that is no address and an SMTP host on the platform's own network (SMTP_ALLOW_PRIVATE=false)
 * together, not the first found.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { expectInvalidFields } from '../support/expect.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { SMTP_ALLOW_PRIVATE: 'false' } });
});
afterAll(() => t.close());

describe('a tenant’s email settings', () => {
  it('names a bad sender and a private SMTP host together', async () => {
    const email = { smtp_url: 'smtp://127.0.0.1:2525', from: 'not a sender' };
    expectInvalidFields(await t.admin('POST', '/admin/v1/tenants', { name: 'Acme', email }), [
      'email.smtp_url',
      'email.from',
    ]);
    const created = await t.admin('POST', '/admin/v1/tenants', { name: 'Acme' });
    expect(created.status).toBe(201);
    const patched = await t.admin('PATCH', `/admin/v1/tenants/${created.body.data.id}`, { email });
    expectInvalidFields(patched, ['email.smtp_url', 'email.from']);
    expect(patched.body.error.details).toHaveLength(2);
  });
});
