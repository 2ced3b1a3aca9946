/**
 * A refused brand change names every offending field at once: the schema's issues together with
 * the logo URL's host, which only the service checks (a plain DNS name, for the portal's
 * Content-Security-Policy).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { expectInvalidFields } from '../support/expect.js';

let t: TestApp;
let tenant: TestTenant;
beforeAll(async () => {
  t = await startTestApp();
  tenant = await createTenant(t);
});
afterAll(() => t.close());

describe('PATCH /admin/v1/tenants/{id}/branding', () => {
  it('names a bad colour and a logo on an address together, and changes nothing', async () => {
    const response = await t.admin('PATCH', `/admin/v1/tenants/${tenant.id}/branding`, {
      primary_color: 'blue',
      support_email: 'not an email',
      logo_url: 'https://203.0.113.7/logo.png',
    });
    expectInvalidFields(response, ['primary_color', 'support_email', 'logo_url']);
    const brand = (await t.admin('GET', `/admin/v1/tenants/${tenant.id}/branding`)).body.data;
    expect(brand).toMatchObject({ primary_color: null, logo_url: null, support_email: null });
  });

  it('a logo URL the schema refuses is named once; the service’s own check stands alone', async () => {
    const refused = await t.admin('PATCH', `/admin/v1/tenants/${tenant.id}/branding`, {
      primary_color: 'blue',
      logo_url: 'http://cdn.example.com/logo.png',
    });
    expectInvalidFields(refused, ['primary_color', 'logo_url']);
    expect(refused.body.error.details).toHaveLength(2);
    const alone = await t.admin('PATCH', `/admin/v1/tenants/${tenant.id}/branding`, {
      logo_url: 'https://203.0.113.7/logo.png',
    });
    expectInvalidFields(alone, ['logo_url']);
    const unknownTenant = await t.admin('PATCH', '/admin/v1/tenants/ten_nobody/branding', {
      primary_color: 'blue',
    });
    expectInvalidFields(unknownTenant, ['primary_color']);
  });
});
