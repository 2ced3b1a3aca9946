/**
 * The operator console's phone numbers page over HTTP: the list with its tenant and engine
 * filters; import, reassign and release through the phone-numbers service, refused exactly as the
 * operator API refuses (an unknown tenant or a number the engine does not hold 422, a second
 * import 409); support reads but every form post is refused 403; CSRF refusals.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { addStaff, type OperatorClient, operatorClient } from './console-helpers.js';

let t: TestApp;
let admin: OperatorClient;
let acme: string;
let globex: string;

const createTenant = async (name: string) =>
  (await t.admin('POST', '/admin/v1/tenants', { name })).body.data.id as string;
const numberOf = async (phone: string) =>
  t.admin('GET', `/admin/v1/phone-numbers/${encodeURIComponent(phone)}`);
const path = (phone: string) => `/operator/phone-numbers/${encodeURIComponent(phone)}`;

beforeAll(async () => {
  t = await startTestApp();
  acme = await createTenant('Acme Phones');
  globex = await createTenant('Globex Phones');
  admin = operatorClient(t);
  expect((await admin.signIn(await addStaff(t, 'admin'))).status).toBe(303);
});
afterAll(async () => {
  await t?.close();
});

describe('the phone numbers page', () => {
  it('shows an empty state first, then imports a number for a tenant', async () => {
    const empty = await admin.get('/operator/phone-numbers');
    expect(empty.status).toBe(200);
    expect(empty.body).toContain('No phone numbers yet');
    const imported = await admin.post('/operator/phone-numbers', {
      phone_number: '+14155550111',
      tenant_id: acme,
    });
    expect(imported.status).toBe(303);
    expect(imported.headers.location).toBe('/operator/phone-numbers');
    expect((await numberOf('+14155550111')).body.data).toMatchObject({
      tenant_id: acme,
      engine: 'simulated',
    });
    const list = await admin.get('/operator/phone-numbers');
    expect(list.body).toContain('Imported +14155550111 for Acme Phones.');
    expect(list.body).toContain('+14155550111');
    expect(list.body).toContain('Acme Phones');
  });

  it('refuses what the API refuses, with the issues beside the fields', async () => {
    const bad = await admin.post('/operator/phone-numbers', {
      phone_number: '4155550112',
      tenant_id: 'ten_nope',
    });
    expect(bad.status).toBe(422);
    expect(bad.body).toMatch(/id="phone_number-error"/);
    expect(bad.body).toContain('value="4155550112"');
    const noTenant = await admin.post('/operator/phone-numbers', {
      phone_number: '+14155550112',
      tenant_id: 'ten_nope',
    });
    expect(noTenant.status).toBe(422);
    expect(noTenant.body).toMatch(/id="tenant_id-error"/);
    expect((await numberOf('+14155550112')).status).toBe(404);
    const unheld = await admin.post('/operator/phone-numbers', {
      phone_number: '+14155550000',
      tenant_id: acme,
    });
    expect(unheld.status).toBe(422);
    expect(unheld.body).toContain('holds no such number');
    const twice = await admin.post('/operator/phone-numbers', {
      phone_number: '+14155550111',
      tenant_id: globex,
    });
    expect(twice.status).toBe(409);
    expect(twice.body).toContain('already imported');
    expect((await numberOf('+14155550111')).body.data.tenant_id).toBe(acme);
  });

  it('filters by tenant and by engine', async () => {
    await t.admin('POST', '/admin/v1/phone-numbers', { phone_number: '+14155550113', tenant_id: globex });
    const acmeOnly = await admin.get(`/operator/phone-numbers?tenant_id=${acme}`);
    expect(acmeOnly.body).toContain('+14155550111');
    expect(acmeOnly.body).not.toContain('+14155550113');
    const simulated = await admin.get('/operator/phone-numbers?engine=simulated');
    expect(simulated.body).toContain('+14155550113');
    const vapi = await admin.get('/operator/phone-numbers?engine=vapi');
    expect(vapi.body).toContain('No number matches');
    const api = await t.admin('GET', '/admin/v1/phone-numbers?engine=retell');
    expect(api.body.data).toEqual([]);
  });

  it('reassigns a number to another tenant after a confirmation, refusing an unknown tenant', async () => {
    const page = await admin.get('/operator/phone-numbers');
    expect(page.body).toContain('data-confirm="Move +14155550111 to another tenant?');
    expect(page.body).toContain('data-confirm="Release +14155550111?');
    const unknown = await admin.post(`${path('+14155550111')}/reassign`, { tenant_id: 'ten_nope' });
    expect(unknown.status).toBe(422);
    expect(unknown.body).toContain('value="ten_nope"');
    expect((await numberOf('+14155550111')).body.data.tenant_id).toBe(acme);
    const moved = await admin.post(`${path('+14155550111')}/reassign`, { tenant_id: globex });
    expect(moved.status).toBe(303);
    expect((await numberOf('+14155550111')).body.data.tenant_id).toBe(globex);
    expect((await admin.get('/operator/phone-numbers')).body).toContain(
      '+14155550111 now belongs to Globex Phones.',
    );
  });

  it('releases a number; a second release says it is gone', async () => {
    const released = await admin.post(`${path('+14155550113')}/release`, {});
    expect(released.status).toBe(303);
    expect((await numberOf('+14155550113')).status).toBe(404);
    const again = await admin.post(`${path('+14155550113')}/release`, {});
    expect(again.status).toBe(404);
  });
});

describe('who may change numbers', () => {
  it('lets support read the page without a form and refuses every post with 403', async () => {
    await t.admin('POST', '/admin/v1/phone-numbers', { phone_number: '+14155550114', tenant_id: acme });
    const support = operatorClient(t);
    expect((await support.signIn(await addStaff(t, 'support'))).status).toBe(303);
    const page = await support.get('/operator/phone-numbers');
    expect(page.status).toBe(200);
    expect(page.body).toContain('+14155550114');
    expect(page.body).not.toMatch(/<form method="post" action="\/operator\/(?!sign-out)/);
    for (const [url, fields] of [
      ['/operator/phone-numbers', { phone_number: '+14155550115', tenant_id: acme }],
      [`${path('+14155550114')}/reassign`, { tenant_id: globex }],
      [`${path('+14155550114')}/release`, {}],
    ] as const) {
      expect((await support.post(url, fields)).status, url).toBe(403);
    }
    expect((await numberOf('+14155550114')).body.data.tenant_id).toBe(acme);
    expect((await numberOf('+14155550115')).status).toBe(404);
  });

  it('refuses a post without the CSRF token or with another session’s', async () => {
    const missing = await admin.post(`${path('+14155550114')}/release`, {}, { withCsrf: false });
    expect(missing.status).toBe(403);
    expect(missing.body).toContain('did not come from the operator console');
    const other = operatorClient(t);
    await other.signIn(await addStaff(t, 'admin'));
    const foreign = /name="_csrf" value="([^"]+)"/.exec(
      (await other.get('/operator/phone-numbers')).body,
    )?.[1];
    const swapped = await admin.post(
      `${path('+14155550114')}/reassign`,
      { tenant_id: globex, _csrf: foreign ?? '' },
      { withCsrf: false },
    );
    expect(swapped.status).toBe(403);
    expect((await numberOf('+14155550114')).body.data.tenant_id).toBe(acme);
  });
});
