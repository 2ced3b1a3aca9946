/**
 * Refusals a person understands: a phone number refused says what E.164 looks like, in the API
 * and beside the console's field, which it names by its label; a local http:// webhook says how a
 * development server allows it; the domain page names the CNAME target host
 * (PUBLIC_CNAME_TARGET, by default the public URL's host name); console and portal have an icon,
 * the portal's in the agency's colour.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config/config.js';
import { createTenant } from '../support/app.js';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { consoleClient } from './http.js';

const E164 = 'must be in E.164 format: + then the country code and number, e.g. +14155550123.';

let f: ConsoleFixture;
beforeAll(async () => {
  f = await startConsole({ env: { PUBLIC_CNAME_TARGET: 'portals.voiceplane.example.' } });
}, 180_000);
afterAll(() => f?.close());

async function signedInClient() {
  const client = consoleClient(f.t);
  expect((await client.signIn(f.owner.email, f.owner.password)).status).toBe(303);
  return client;
}

describe('a refused phone number', () => {
  it('says what E.164 is in the API', async () => {
    const refused = await f.tenant.request('POST', '/api/v1/do-not-call', { phone_number: '4155550123' });
    expect(refused.status).toBe(422);
    expect(refused.body.error.details).toContainEqual({ field: 'phone_number', issue: E164 });
  });

  it('is named by its label beside the console field', async () => {
    const client = await signedInClient();
    await client.get('/console/do-not-call');
    const refused = await client.post('/console/do-not-call', { phone_number: '(415) 555-0123' });
    expect(refused.status).toBe(422);
    expect(refused.body).toContain(`Phone number ${E164}`);
  });
});

describe('a webhook URL on this machine', () => {
  it('explains WEBHOOK_ALLOW_PRIVATE in the API and in the console', async () => {
    const api = await f.tenant.request('POST', '/api/v1/webhook-endpoints', {
      url: 'http://127.0.0.1:3000/hooks',
      events: ['*'],
    });
    expect(api.status).toBe(422);
    const issue = api.body.error.details.find((d: { field: string }) => d.field === 'url')?.issue;
    expect(issue).toMatch(/^must be an https URL on a public address.*WEBHOOK_ALLOW_PRIVATE=true/);

    const https = await f.tenant.request('POST', '/api/v1/webhook-endpoints', {
      url: 'https://127.0.0.1/hooks',
      events: ['*'],
    });
    expect(https.body.error.details[0].issue).toContain('WEBHOOK_ALLOW_PRIVATE=true');

    const client = await signedInClient();
    await client.get('/console/webhooks/new');
    const page = await client.post('/console/webhooks', { url: 'http://127.0.0.1:3000/hooks', events: '*' });
    expect(page.status).toBe(422);
    expect(page.body).toContain('URL must be an https URL on a public address');
    expect(page.body).toContain('WEBHOOK_ALLOW_PRIVATE=true');
  });
});

describe('the custom domain instructions', () => {
  it('name the CNAME target host, not an address and port', async () => {
    const client = await signedInClient();
    const page = await client.get('/console/branding');
    expect(page.body).toContain(
      'create a CNAME record for it whose target is <code>portals.voiceplane.example</code>',
    );
  });

  it('default to the public URL’s host name, and refuse a target that is no DNS name', () => {
    expect(loadConfig({ PUBLIC_BASE_URL: 'https://app.voiceplane.example:8443/' }).publicCnameTarget).toBe(
      'app.voiceplane.example',
    );
    expect(() => loadConfig({ PUBLIC_CNAME_TARGET: 'http://x.example:80' })).toThrow(/PUBLIC_CNAME_TARGET/);
  });
});

describe('icons', () => {
  it('links the console’s icon and draws the portal’s in the agency’s colour', async () => {
    const client = await signedInClient();
    const page = await client.get('/console');
    const href = /<link rel="icon" type="image\/svg\+xml" href="([^"]+)">/.exec(page.body)?.[1];
    expect(href).toMatch(/^\/console\/assets\/favicon\.svg\?v=/);
    const icon = await f.t.app.inject({ method: 'GET', url: href as string });
    expect(icon.statusCode).toBe(200);
    expect(icon.headers['content-type']).toContain('image/svg+xml');

    await f.t.services.branding.update(f.tenant.id, {
      slug: 'sunbeam',
      brand_name: 'Sunbeam',
      primary_color: '#0E7490',
    });
    const signIn = await f.t.app.inject({ method: 'GET', url: '/portal/sunbeam/sign-in' });
    expect(signIn.body).toMatch(
      /<link rel="icon" type="image\/svg\+xml" href="\/portal\/sunbeam\/favicon\.svg\?v=/,
    );
    const portalIcon = await f.t.app.inject({ method: 'GET', url: '/portal/sunbeam/favicon.svg' });
    expect(portalIcon.statusCode).toBe(200);
    expect(portalIcon.body).toContain('fill="#0e7490"');
    expect(portalIcon.body).toContain('>S</text>');
  });
});

describe('the webhook endpoints list', () => {
  it('says plainly whether an endpoint answers, and since when it fails', async () => {
    const created = await f.tenant.request('POST', '/api/v1/webhook-endpoints', {
      url: 'https://93.184.215.14/hooks',
      events: ['*'],
    });
    expect(created.status, created.raw).toBe(201);
    const id = created.body.data.id as string;
    const client = await signedInClient();
    const healthy = await client.get('/console/webhooks');
    expect(healthy.body).toContain('Healthy');
    expect(healthy.body).toContain('Answering: no delivery is failing.');
    expect(healthy.body).not.toContain('Failing since');

    await f.t.services.database.db
      .updateTable('webhook_endpoints')
      .set({ failing_since: new Date('2026-11-20T08:00:00Z') })
      .where('id', '=', id)
      .execute();
    const failing = await client.get('/console/webhooks');
    expect(failing.body).toMatch(
      /Failing<\/span><br><span class="subtle">Failing since <time[^>]*>2026-11-20 08:00 UTC/,
    );
    const detail = await client.get(`/console/webhooks/${id}`);
    expect(detail.body).toContain('Failing since');

    const other = await createTenant(f.t, { name: 'Other Agency' });
    const theirs = await other.request('POST', '/api/v1/webhook-endpoints', {
      url: 'https://93.184.215.14/theirs',
      events: ['*'],
    });
    expect((await client.get(`/console/webhooks/${theirs.body.data.id}`)).status).toBe(404);
  });
});
