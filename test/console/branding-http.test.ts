/**
 * The branding and domains page over plain HTTP: viewers read it without controls and a forged
 * POST changes nothing; admins change the brand (refused fields answer the form again, beside the
 * field, storing nothing; a slug of another agency is refused); domains are added, verified with a
 * fake DNS resolver (absent record → what was found, present → verified) and removed; another
 * tenant's domain answers 404; a POST without its CSRF token is 403.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TxtResolver } from '../../src/branding/service.js';
import { createTenant, type TestTenant } from '../support/app.js';
import { type ConsoleFixture, OWNER_PASSWORD, startConsole } from './helpers.js';
import { type ConsoleClient, consoleClient } from './http.js';

/** TXT records by name; a name without any answers ENOTFOUND, as node:dns does. */
const txt = new Map<string, string[][]>();
const resolveTxt: TxtResolver = async (name) => {
  const records = txt.get(name);
  if (!records) throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
  return records;
};

let f: ConsoleFixture;
let other: TestTenant;
let admin: ConsoleClient;
let viewer: ConsoleClient;
let otherOwner: ConsoleClient;

async function signedInClient(member: { email: string; password: string }): Promise<ConsoleClient> {
  const client = consoleClient(f.t);
  expect((await client.signIn(member.email, member.password)).status).toBe(303);
  return client;
}

/** The text of the error paragraph beside a field. */
const fieldError = (body: string, id: string) =>
  new RegExp(`id="${id}-error">([^<]*)<`).exec(body)?.[1]?.replace(/&#39;/g, "'");

const brand = () => f.t.services.branding.get(f.tenant.id);

beforeAll(async () => {
  f = await startConsole({ adapters: () => ({ resolveTxt }) });
  other = await createTenant(f.t, { name: 'Other Agency' });
  const email = `owner-${Date.now()}@other.example`;
  const created = await f.t.admin('POST', `/admin/v1/tenants/${other.id}/members`, {
    email,
    password: OWNER_PASSWORD,
    role: 'owner',
  });
  expect(created.status).toBe(201);
  admin = await signedInClient(await f.addMember('admin'));
  viewer = await signedInClient(await f.addMember('viewer'));
  otherOwner = await signedInClient({ email, password: OWNER_PASSWORD });
});
afterAll(async () => {
  await f?.close();
});

describe('viewers', () => {
  it('see the brand and domains without a form, and a forged POST is 403 and changes nothing', async () => {
    const { domain } = await f.t.services.branding.addDomain(f.tenant.id, {
      hostname: 'viewer.northwind.example',
    });
    const page = await viewer.get('/console/branding');
    expect(page.status).toBe(200);
    expect(page.body).toContain('Branding and domains');
    expect(page.body).toContain('viewer.northwind.example');
    expect(page.body).toContain(domain.verification.value);
    expect(page.body).toContain('Only admins and owners change the brand and domains.');
    expect(page.body).not.toMatch(/action="\/console\/branding/);
    expect(page.body).not.toMatch(/Save brand|Add domain|Verify now|>Remove</);
    expect(page.body).toContain('aria-current="page">Branding</a>');

    const before = await brand();
    for (const [url, fields] of [
      ['/console/branding', { brand_name: 'Hijacked', slug: 'hijacked' }],
      ['/console/branding/domains', { hostname: 'evil.example' }],
      [`/console/branding/domains/${domain.id}/verify`, {}],
      [`/console/branding/domains/${domain.id}/remove`, {}],
    ] as const) {
      const forged = await viewer.post(url, fields);
      expect(forged.status, url).toBe(403);
      expect(forged.body).toContain('Your role (viewer) cannot do this');
    }
    expect(await brand()).toEqual(before);
    const hostnames = (await f.t.services.branding.listDomains(f.tenant.id)).map((d) => d.hostname);
    expect(hostnames).toEqual(['viewer.northwind.example']);
    await f.t.services.branding.removeDomain(f.tenant.id, domain.id);
  });
});

describe('the brand', () => {
  it('is changed by an admin, blank fields clearing, the color only when picked', async () => {
    const page = await admin.get('/console/branding');
    expect(page.status).toBe(200);
    expect(page.body).toContain('Save brand');
    // Without a brand: the agency's name, the portal under the tenant id, the platform's color.
    expect(page.body).toContain(`http://voiceplane.test/portal/${f.tenant.id}`);
    expect(page.body).toContain('(the agency’s name)');

    const saved = await admin.post('/console/branding', {
      brand_name: '  Northwind Calls ',
      logo_url: 'https://cdn.northwind.example/logo.svg',
      support_email: 'help@northwind.example',
      slug: 'northwind',
      primary_color: '#0B5FFF',
      primary_color_shown: '#4f46e5',
    });
    expect(saved.status).toBe(303);
    expect(saved.headers.location).toBe('/console/branding');
    expect(await brand()).toMatchObject({
      brand_name: 'Northwind Calls',
      logo_url: 'https://cdn.northwind.example/logo.svg',
      support_email: 'help@northwind.example',
      slug: 'northwind',
      primary_color: '#0b5fff',
      display_name: 'Northwind Calls',
      portal_url: 'http://voiceplane.test/portal/northwind',
    });
    const shown = await admin.get('/console/branding');
    expect(shown.body).toContain('Brand saved');
    expect(shown.body).toContain('http://voiceplane.test/portal/northwind');
    expect(shown.body).toContain('<code>#0b5fff</code>');
    expect(shown.body).toContain('fill="#0b5fff"');
    // The logo is a link, never an image the console's policy would block.
    expect(shown.body).toContain('href="https://cdn.northwind.example/logo.svg"');
    expect(shown.body).not.toContain('<img');

    // An untouched color input (it always posts a value) keeps the color; blank fields clear.
    const kept = await admin.post('/console/branding', {
      brand_name: 'Northwind Calls',
      logo_url: '',
      support_email: '',
      slug: 'northwind',
      primary_color: '#0b5fff',
      primary_color_shown: '#0b5fff',
    });
    expect(kept.status).toBe(303);
    expect(await brand()).toMatchObject({ logo_url: null, support_email: null, primary_color: '#0b5fff' });
    // "No brand color" clears it.
    const cleared = await admin.post('/console/branding', {
      brand_name: 'Northwind Calls',
      slug: 'northwind',
      primary_color: '#0b5fff',
      primary_color_shown: '#0b5fff',
      primary_color_none: '1',
    });
    expect(cleared.status).toBe(303);
    expect((await brand()).primary_color).toBeNull();
  });

  it('answers refused fields beside each field with the API’s message and stores nothing', async () => {
    const before = await brand();
    const cases: [Record<string, string>, string, string][] = [
      [
        { primary_color: 'red', primary_color_shown: '#4f46e5' },
        'primary_color',
        'Primary color has an invalid format.',
      ],
      [{ slug: 'Not A Slug' }, 'slug', 'Portal address has an invalid format.'],
      [{ logo_url: 'http://cdn.northwind.example/logo.png' }, 'logo_url', 'Logo URL has an invalid format.'],
      [{ support_email: 'not an email' }, 'support_email', 'Support email must be a valid email address.'],
      [{ brand_name: 'x'.repeat(101) }, 'brand_name', 'Brand name must be at most 100 characters long.'],
      [
        { brand_name: 'Nul\u0000Name' },
        'brand_name',
        'Brand name must not contain the NUL character (U+0000).',
      ],
    ];
    for (const [fields, id, message] of cases) {
      const refused = await admin.post('/console/branding', { brand_name: 'Changed', ...fields });
      expect(refused.status, id).toBe(422);
      expect(fieldError(refused.body, id), id).toBe(message);
      expect(refused.body).toContain('The brand was not saved');
      // What was typed is kept in the form.
      if (id !== 'primary_color') expect(refused.body).toContain(`value="${fields[id]}"`);
      expect(await brand()).toEqual(before);
    }
  });

  it('refuses a slug another agency uses (409, beside the field)', async () => {
    expect(
      (await f.t.admin('PATCH', `/admin/v1/tenants/${other.id}/branding`, { slug: 'taken' })).status,
    ).toBe(200);
    const before = await brand();
    const refused = await admin.post('/console/branding', { brand_name: 'Northwind Calls', slug: 'taken' });
    expect(refused.status).toBe(409);
    expect(fieldError(refused.body, 'slug')).toBe('Another tenant already uses this slug.');
    expect(await brand()).toEqual(before);
  });
});

describe('custom domains', () => {
  it('are added, fail verification with what the lookup found, then verify once the record exists', async () => {
    const bad = await admin.post('/console/branding/domains', {
      hostname: 'https://portal.northwind.example/x',
    });
    expect(bad.status).toBe(422);
    expect(fieldError(bad.body, 'hostname')).toContain('must be a DNS name');
    expect(await f.t.services.branding.listDomains(f.tenant.id)).toEqual([]);

    const added = await admin.post('/console/branding/domains', { hostname: 'Portal.Northwind.example' });
    expect(added.status).toBe(303);
    const [domain] = await f.t.services.branding.listDomains(f.tenant.id);
    expect(domain).toMatchObject({ hostname: 'portal.northwind.example', status: 'pending' });
    const page = await admin.get('/console/branding');
    expect(page.body).toContain('portal.northwind.example added');
    expect(page.body).toContain('_voiceplane.portal.northwind.example');
    expect(page.body).toContain(domain.verification.value);
    expect(page.body).toContain('Not checked yet.');
    expect(page.body).toContain(`data-copy="${domain.id}-value"`);
    const again = await admin.post('/console/branding/domains', { hostname: 'portal.northwind.example' });
    expect(again.status).toBe(303);
    expect((await admin.get('/console/branding')).body).toContain('was already added; nothing changed');

    const failed = await admin.post(`/console/branding/domains/${domain.id}/verify`, {});
    expect(failed.status).toBe(422);
    expect(failed.body).toContain('No TXT record was found at _voiceplane.portal.northwind.example.');
    const checked = (await f.t.services.branding.listDomains(f.tenant.id))[0];
    expect(checked).toMatchObject({
      status: 'pending',
      check_problem: expect.stringContaining('No TXT record'),
    });
    expect(checked.checked_at).not.toBeNull();

    txt.set('_voiceplane.portal.northwind.example', [['v=spf1 -all'], ['something-else']]);
    const wrong = await admin.post(`/console/branding/domains/${domain.id}/verify`, {});
    expect(wrong.status).toBe(422);
    expect(wrong.body).toContain(`do not include ${domain.verification.value}`);

    txt.set('_voiceplane.portal.northwind.example', [[domain.verification.value]]);
    const verified = await admin.post(`/console/branding/domains/${domain.id}/verify`, {});
    expect(verified.status).toBe(303);
    const after = await admin.get('/console/branding');
    expect(after.body).toContain('portal.northwind.example is verified');
    expect(after.body).toContain('https://portal.northwind.example/portal');
    expect(after.body).not.toContain('Verify now');
    expect((await brand()).portal_url).toBe('https://portal.northwind.example/portal');
  });

  it("answers 404 for another tenant's domain and changes nothing; a name verified elsewhere is 409", async () => {
    const [ours] = await f.t.services.branding.listDomains(f.tenant.id);
    expect((await otherOwner.get('/console/branding')).body).not.toContain('portal.northwind.example');
    for (const action of ['verify', 'remove']) {
      const refused = await otherOwner.post(`/console/branding/domains/${ours.id}/${action}`, {});
      expect(refused.status, action).toBe(404);
      expect(refused.body).toContain('Domain not found.');
    }
    expect((await f.t.services.branding.listDomains(f.tenant.id))[0]).toEqual(ours);

    // The other agency may add the name, but not verify it: ours already is.
    expect((await otherOwner.post('/console/branding/domains', { hostname: ours.hostname })).status).toBe(
      303,
    );
    const [theirs] = await f.t.services.branding.listDomains(other.id);
    const conflict = await otherOwner.post(`/console/branding/domains/${theirs.id}/verify`, {});
    expect(conflict.status).toBe(409);
    expect(conflict.body).toContain('is already verified by another tenant');
    expect((await f.t.services.branding.listDomains(other.id))[0].status).toBe('pending');
  });

  it('are removed by an admin', async () => {
    const [domain] = await f.t.services.branding.listDomains(f.tenant.id);
    const removed = await admin.post(`/console/branding/domains/${domain.id}/remove`, {});
    expect(removed.status).toBe(303);
    expect((await admin.get('/console/branding')).body).toContain(`${domain.hostname} removed.`);
    expect(await f.t.services.branding.listDomains(f.tenant.id)).toEqual([]);
    expect((await brand()).portal_url).toBe('http://voiceplane.test/portal/northwind');
    expect((await admin.post(`/console/branding/domains/${domain.id}/remove`, {})).status).toBe(404);
  });
});

describe('requests', () => {
  it('refuse a POST without its CSRF token (403) or a JSON body (415), changing nothing', async () => {
    const before = await brand();
    const noToken = await admin.post('/console/branding', { brand_name: 'No Token' }, { withCsrf: false });
    expect(noToken.status).toBe(403);
    expect(noToken.body).toContain('This form has expired or did not come from the console.');
    const noTokenDomain = await admin.post(
      '/console/branding/domains',
      { hostname: 'csrf.northwind.example' },
      { withCsrf: false },
    );
    expect(noTokenDomain.status).toBe(403);
    const json = await f.t.inject({
      method: 'POST',
      url: '/console/branding',
      headers: { 'content-type': 'application/json', cookie: `vp_console=${admin.sessionToken()}` },
      payload: JSON.stringify({ brand_name: 'Json' }),
    });
    expect(json.status).toBe(415);
    expect(await brand()).toEqual(before);
    expect(await f.t.services.branding.listDomains(f.tenant.id)).toEqual([]);
  });

  it('sends the signed-out visitor to sign in', async () => {
    const anonymous = await consoleClient(f.t).get('/console/branding');
    expect(anonymous.status).toBe(303);
    expect(anonymous.headers.location).toBe('/console/sign-in?next=%2Fconsole%2Fbranding');
  });
});
