/**
 * The operator's white-label API (docs/white-label.md): a tenant's brand (validation per field, 404,
 * slug conflicts, nulls clearing, the display name and portal URL it derives), its custom domains
 * (hostnames refused, verification through a fake TXT resolver, one verifier per name, removal),
 * and how the portal finds a brand: by verified host, by slug or tenant id.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TxtResolver } from '../../src/branding/service.js';
import { createTenant, startTestApp, type TestApp, type TestTenant } from '../support/app.js';

const txt = new Map<string, string[][]>();
const resolveTxt: TxtResolver = async (name) => {
  const records = txt.get(name);
  if (!records) throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
  return records;
};

let t: TestApp;
let acme: TestTenant;
let globex: TestTenant;

beforeAll(async () => {
  t = await startTestApp({ adapters: () => ({ resolveTxt }) });
  acme = await createTenant(t, { name: 'Acme Agency' });
  globex = await createTenant(t, { name: 'Globex Agency' });
});
afterAll(() => t.close());

const branding = (tenantId: string) => `/admin/v1/tenants/${tenantId}/branding`;
const domains = (tenantId: string) => `/admin/v1/tenants/${tenantId}/domains`;

describe('branding', () => {
  it('starts empty: the tenant’s name, the portal under the tenant id', async () => {
    const got = await t.admin('GET', branding(acme.id));
    expect(got.status).toBe(200);
    expect(got.body.data).toEqual({
      slug: null,
      brand_name: null,
      logo_url: null,
      primary_color: null,
      support_email: null,
      display_name: 'Acme Agency',
      portal_url: `http://voiceplane.test/portal/${acme.id}`,
      updated_at: null,
    });
  });

  it('is changed by PATCH, and nulls clear fields', async () => {
    const patched = await t.admin('PATCH', branding(acme.id), {
      slug: 'acme',
      brand_name: 'Acme Voice',
      logo_url: 'https://cdn.acme.example/logo.png',
      primary_color: '#0B5FFF',
      support_email: 'help@acme.example',
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      slug: 'acme',
      brand_name: 'Acme Voice',
      primary_color: '#0b5fff',
      display_name: 'Acme Voice',
      portal_url: 'http://voiceplane.test/portal/acme',
    });
    expect(patched.body.data.updated_at).toEqual(expect.any(String));
    // A field left out stays; null clears it.
    const cleared = await t.admin('PATCH', branding(acme.id), { brand_name: null, logo_url: null });
    expect(cleared.body.data).toMatchObject({
      slug: 'acme',
      brand_name: null,
      logo_url: null,
      primary_color: '#0b5fff',
      display_name: 'Acme Agency',
    });
    expect((await t.admin('GET', branding(acme.id))).body.data).toEqual(cleared.body.data);
  });

  it('refuses each invalid field with 422 and changes nothing', async () => {
    const before = (await t.admin('GET', branding(acme.id))).body.data;
    for (const [field, value] of [
      ['slug', 'Not A Slug'],
      ['slug', '-acme'],
      ['slug', 'a'.repeat(41)],
      ['slug', 'ten_abc'],
      ['brand_name', ''],
      ['brand_name', 'x'.repeat(101)],
      ['logo_url', 'http://cdn.acme.example/logo.png'],
      ['logo_url', 'not a url'],
      ['logo_url', 'https://'],
      ['logo_url', 'https:///logo.png'],
      ['logo_url', 'https://localhost/logo.png'],
      ['logo_url', 'https://cdn.acme.example;x/logo.png'],
      ['logo_url', 'https://cdn.acme.example,x/logo.png'],
      ['brand_name', '   '],
      ['primary_color', 'red'],
      ['primary_color', '#12345'],
      ['support_email', 'not an email'],
    ] as const) {
      const refused = await t.admin('PATCH', branding(acme.id), { [field]: value });
      expect(refused.status, `${field}=${value}`).toBe(422);
      expect(refused.body.error.code).toBe('validation_failed');
      expect(refused.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    expect((await t.admin('PATCH', branding(acme.id), { colour: '#000000' })).status).toBe(422);
    expect((await t.admin('GET', branding(acme.id))).body.data).toEqual(before);
  });

  it('answers 404 for an unknown tenant', async () => {
    expect((await t.admin('GET', branding('ten_nope'))).status).toBe(404);
    const patched = await t.admin('PATCH', branding('ten_nope'), { brand_name: 'X' });
    expect(patched.status).toBe(404);
    expect(patched.body.error.code).toBe('not_found');
  });

  it('refuses a slug another tenant uses with 409', async () => {
    const taken = await t.admin('PATCH', branding(globex.id), { slug: 'acme', brand_name: 'Globex' });
    expect(taken.status).toBe(409);
    expect(taken.body.error).toMatchObject({
      code: 'conflict',
      details: [{ field: 'slug', issue: 'is taken' }],
    });
    expect((await t.admin('GET', branding(globex.id))).body.data.brand_name).toBeNull();
  });
});

describe('custom domains', () => {
  it('are added once (201, then 200 with the same record)', async () => {
    const added = await t.admin('POST', domains(acme.id), { hostname: 'Portal.Acme.example.' });
    expect(added.status).toBe(201);
    const domain = added.body.data;
    expect(domain).toMatchObject({
      hostname: 'portal.acme.example',
      status: 'pending',
      verification: { type: 'TXT', name: '_voiceplane.portal.acme.example' },
      verified_at: null,
      checked_at: null,
      check_problem: null,
    });
    expect(domain.verification.value).toMatch(/^voiceplane-verification=[A-Za-z0-9_-]{20,}$/);
    const again = await t.admin('POST', domains(acme.id), { hostname: 'portal.acme.example' });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(domain);
    expect((await t.admin('GET', domains(acme.id))).body.data).toEqual([domain]);
  });

  it('refuse what is not a DNS name of the tenant’s own', async () => {
    for (const hostname of [
      '192.0.2.10',
      '::1',
      'localhost',
      'portal',
      'https://portal.acme.example',
      'portal.acme.example:8443',
      'portal.acme.example/portal',
      'portal acme.example',
      '-portal.acme.example',
      'portal.acme.123',
      'voiceplane.test',
      'VoicePlane.test.',
    ]) {
      const refused = await t.admin('POST', domains(acme.id), { hostname });
      expect(refused.status, hostname).toBe(422);
      expect(refused.body.error.details[0].field, hostname).toBe('hostname');
    }
    expect((await t.admin('POST', domains('ten_nope'), { hostname: 'x.acme.example' })).status).toBe(404);
    expect((await t.admin('GET', domains(acme.id))).body.data).toHaveLength(1);
  });

  it('verify only once the TXT record holds the value (also split in chunks)', async () => {
    const [domain] = (await t.admin('GET', domains(acme.id))).body.data;
    const verify = `${domains(acme.id)}/${domain.id}/verify`;
    expect(await t.services.branding.forHost('portal.acme.example:443')).toBeUndefined();

    const absent = await t.admin('POST', verify);
    expect(absent.status).toBe(422);
    expect(absent.body.error.code).toBe('unprocessable_entity');
    expect(absent.body.error.message).toContain(
      'No TXT record was found at _voiceplane.portal.acme.example.',
    );
    expect(absent.body.error.details.domain).toMatchObject({
      status: 'pending',
      check_problem: 'No TXT record was found at _voiceplane.portal.acme.example.',
    });
    const stored = (await t.admin('GET', domains(acme.id))).body.data[0];
    expect(stored.checked_at).toEqual(expect.any(String));
    expect(stored.check_problem).toContain('No TXT record');

    txt.set('_voiceplane.portal.acme.example', [['voiceplane-verification=someone-else']]);
    const wrong = await t.admin('POST', verify);
    expect(wrong.status).toBe(422);
    expect(wrong.body.error.details.domain.check_problem).toContain('do not include');

    const value: string = domain.verification.value;
    txt.set('_voiceplane.portal.acme.example', [['v=spf1 -all'], [value.slice(0, 30), value.slice(30)]]);
    const verified = await t.admin('POST', verify);
    expect(verified.status).toBe(200);
    expect(verified.body.data).toMatchObject({ status: 'verified', check_problem: null });
    expect(verified.body.data.verified_at).toEqual(expect.any(String));
    // Verifying again changes nothing.
    expect((await t.admin('POST', verify)).body.data).toEqual(verified.body.data);

    expect((await t.admin('GET', branding(acme.id))).body.data.portal_url).toBe(
      'https://portal.acme.example/portal',
    );
    expect((await t.services.branding.forHost('portal.acme.example:443'))?.tenantId).toBe(acme.id);
    expect((await t.services.branding.forHost('PORTAL.acme.example'))?.portalUrl).toBe(
      'https://portal.acme.example/portal',
    );
    expect(await t.services.branding.forHost('voiceplane.test')).toBeUndefined();
  });

  it('may be added by two tenants, but only one verifies a name (409 for the other)', async () => {
    const [ours] = (await t.admin('GET', domains(acme.id))).body.data;
    const theirs = await t.admin('POST', domains(globex.id), { hostname: 'portal.acme.example' });
    expect(theirs.status).toBe(201);
    expect(theirs.body.data.verification.value).not.toBe(ours.verification.value);
    // Even with their own value in the zone, the name is Acme's.
    txt.set('_voiceplane.portal.acme.example', [[theirs.body.data.verification.value]]);
    const conflict = await t.admin('POST', `${domains(globex.id)}/${theirs.body.data.id}/verify`);
    expect(conflict.status).toBe(409);
    expect(conflict.body.error.code).toBe('conflict');
    expect((await t.services.branding.forHost('portal.acme.example'))?.tenantId).toBe(acme.id);
    // Another tenant's domain id is not found through this tenant.
    expect((await t.admin('POST', `${domains(globex.id)}/${ours.id}/verify`)).status).toBe(404);
    expect((await t.admin('DELETE', `${domains(globex.id)}/${ours.id}`)).status).toBe(404);
    expect((await t.admin('DELETE', `${domains(globex.id)}/${theirs.body.data.id}`)).status).toBe(200);
  });

  it('are removed (200, then 404), and the host stops being the tenant’s', async () => {
    const [domain] = (await t.admin('GET', domains(acme.id))).body.data;
    const removed = await t.admin('DELETE', `${domains(acme.id)}/${domain.id}`);
    expect(removed.status).toBe(200);
    expect(removed.body.data.id).toBe(domain.id);
    expect((await t.admin('DELETE', `${domains(acme.id)}/${domain.id}`)).status).toBe(404);
    expect((await t.admin('POST', `${domains(acme.id)}/${domain.id}/verify`)).status).toBe(404);
    expect(await t.services.branding.forHost('portal.acme.example:443')).toBeUndefined();
    expect((await t.admin('GET', branding(acme.id))).body.data.portal_url).toBe(
      'http://voiceplane.test/portal/acme',
    );
  });
});

describe('finding a brand for the portal', () => {
  it('by slug, or by tenant id (which keeps working once a slug is set)', async () => {
    expect((await t.services.branding.forSlug('acme'))?.tenantId).toBe(acme.id);
    expect(await t.services.branding.forSlug(globex.id)).toMatchObject({
      tenantId: globex.id,
      name: 'Globex Agency',
      portalKey: globex.id,
      portalUrl: `http://voiceplane.test/portal/${globex.id}`,
    });
    // With a slug, the slug is the address, and links with the id keep working.
    expect(await t.services.branding.forSlug(acme.id)).toMatchObject({
      tenantId: acme.id,
      portalKey: 'acme',
    });
    expect(await t.services.branding.forSlug('nobody')).toBeUndefined();
    expect(await t.services.branding.forSlug('x'.repeat(65))).toBeUndefined();
    // A slug given up is free again, at once in this process.
    await t.admin('PATCH', branding(acme.id), { slug: null });
    expect(await t.services.branding.forSlug('acme')).toBeUndefined();
    expect((await t.services.branding.forSlug(acme.id))?.tenantId).toBe(acme.id);
    const moved = await t.admin('PATCH', branding(globex.id), { slug: 'acme' });
    expect(moved.status).toBe(200);
    expect((await t.services.branding.forSlug('acme'))?.tenantId).toBe(globex.id);
  });
});
