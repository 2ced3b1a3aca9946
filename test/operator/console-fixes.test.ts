/**
 * Smaller promises of the operator console, with a platform name of the operator's own
 * (PLATFORM_NAME=Orbit Voice): a tenant and its first owner are created together or not at all;
 * a resent wallet credit form credits once; a staff invitation link is never in a POST answer nor
 * in the request log, and is shown once; the agency's members see the platform's name, never
 * "voiceplane", as the issuer in their authenticator app; the admin role cannot manage staff.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { consoleClient } from '../console/http.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { addStaff, type OperatorClient, operatorClient } from './console-helpers.js';

let t: TestApp;
let admin: OperatorClient;

beforeAll(async () => {
  t = await startTestApp({ env: { PLATFORM_NAME: 'Orbit Voice' } });
  admin = operatorClient(t);
  expect((await admin.signIn(await addStaff(t, 'admin'))).status).toBe(303);
});
afterAll(async () => {
  await t?.close();
});

const tenantsNamed = async (name: string) =>
  (await t.admin('GET', '/admin/v1/tenants?limit=100')).body.data.filter((row: any) => row.name === name);

describe('creating a tenant with its first owner', () => {
  it('creates both together', async () => {
    const created = await admin.post('/operator/tenants', {
      name: 'Together Ltd',
      owner_email: 'owner@together.example',
    });
    expect(created.status).toBe(200);
    const [tenant] = await tenantsNamed('Together Ltd');
    expect((await t.services.members.list(tenant.id)).map((member) => member.email)).toEqual([
      'owner@together.example',
    ]);
  });

  it('leaves no tenant behind when the owner cannot be created', async () => {
    const members = t.services.members as { create: (...args: any[]) => Promise<unknown> };
    const original = members.create;
    members.create = async (...args: any[]) => {
      await original(...args);
      throw new Error('the owner could not be stored');
    };
    try {
      const failed = await admin.post('/operator/tenants', {
        name: 'Orphan Ltd',
        owner_email: 'owner@orphan.example',
      });
      expect(failed.status).toBe(500);
    } finally {
      members.create = original;
    }
    expect(await tenantsNamed('Orphan Ltd')).toEqual([]);
    const members2 = await t.services.database.db
      .selectFrom('members')
      .select('email')
      .where('email', '=', 'owner@orphan.example')
      .execute();
    expect(members2).toEqual([]);
  });
});

describe('the wallet credit form', () => {
  it('credits once however often the same form is sent, and again from a new form', async () => {
    const tenantId = (await t.admin('POST', '/admin/v1/tenants', { name: 'Credit Once Ltd' })).body.data.id;
    await t.admin('PUT', `/admin/v1/tenants/${tenantId}/wallet`, { wholesale_rate: 0.05, currency: 'usd' });
    const page = await admin.get(`/operator/tenants/${tenantId}`);
    const formKey = /action="[^"]*\/wallet\/credit">.*?name="form_key" value="([^"]+)"/s.exec(page.body)?.[1];
    expect(formKey).toBeDefined();
    const url = `/operator/tenants/${tenantId}/wallet/credit`;
    const fields = { minutes: '300', reason: 'goodwill', form_key: formKey as string };
    expect((await admin.post(url, fields)).status).toBe(303);
    expect((await admin.post(url, fields)).status).toBe(303);
    expect((await t.services.wallets.get(tenantId)).balance_minutes).toBe(300);
    const reused = await admin.post(url, { ...fields, minutes: '400' });
    expect(reused.status).toBe(409);
    const next = /name="form_key" value="([^"]+)"/.exec(
      (await admin.get(`/operator/tenants/${tenantId}`)).body,
    )?.[1];
    expect(next).not.toBe(formKey);
    expect((await admin.post(url, { ...fields, form_key: next as string })).status).toBe(303);
    expect((await t.services.wallets.get(tenantId)).balance_minutes).toBe(600);
  });
});

describe('staff invitations', () => {
  it('shows the link once after a redirect, and keeps it out of the request log', async () => {
    const owner = operatorClient(t);
    expect((await owner.signIn(await addStaff(t, 'owner'))).status).toBe(303);
    const created = await owner.post('/operator/staff/invitations', {
      email: 'once@platform.example',
      role: 'support',
    });
    expect(created.status).toBe(303);
    expect(created.headers.location).toBe('/operator/staff');
    expect(created.body).not.toMatch(/vpoi_/);
    const shown = await owner.get('/operator/staff');
    const token = /\/operator\/invitations\/(vpoi_[0-9A-Za-z]+)/.exec(shown.body)?.[1] as string;
    expect(token).toBeDefined();
    expect(shown.body).toContain('Invitation created for once@platform.example.');
    expect((await owner.get('/operator/staff')).body).not.toContain(token);
    // The invitee's link works, and its token is not in the request log.
    expect((await operatorClient(t).get(`/operator/invitations/${token}`)).status).toBe(200);
    expect(t.logs.join('\n')).not.toContain(token);
  });

  it('refuses the admin role the staff page and its forms', async () => {
    expect((await admin.get('/operator/staff')).status).toBe(403);
    for (const [url, fields] of [
      ['/operator/staff/invitations', { email: 'x@platform.example', role: 'support' }],
      ['/operator/staff/stf_x/role', { role: 'owner' }],
      ['/operator/staff/stf_x/remove', {}],
      ['/operator/staff/invitations/inv_x/revoke', {}],
    ] as const) {
      expect((await admin.post(url, fields)).status, url).toBe(403);
    }
  });
});

describe('the support role', () => {
  it('is refused every operator form post with 403, and nothing changes', async () => {
    const tenantId = (await t.admin('POST', '/admin/v1/tenants', { name: 'Read Only Ltd' })).body.data.id;
    await t.admin('PUT', `/admin/v1/tenants/${tenantId}/wallet`, { wholesale_rate: 0.05, currency: 'usd' });
    await t.admin('POST', '/admin/v1/phone-numbers', { phone_number: '+14155550199', tenant_id: tenantId });
    const support = operatorClient(t);
    expect((await support.signIn(await addStaff(t, 'support'))).status).toBe(303);
    const base = `/operator/tenants/${tenantId}`;
    const number = '/operator/phone-numbers/%2B14155550199';
    const writes: [string, Record<string, string>][] = [
      ['/operator/tenants', { name: 'Nope', owner_email: 'nope@example.com' }],
      [`${base}/suspend`, { reason: 'no' }],
      [`${base}/lift`, {}],
      [`${base}/wallet`, { wholesale_rate: '0.09', currency: 'usd' }],
      [`${base}/wallet/credit`, { minutes: '100' }],
      [`${base}/processor`, { application_fee_percent: '5' }],
      [`${base}/branding`, { brand_name: 'Nope' }],
      [`${base}/domains`, { hostname: 'nope.example' }],
      [`${base}/domains/dom_x/verify`, {}],
      [`${base}/domains/dom_x/remove`, {}],
      ['/operator/phone-numbers', { phone_number: '+14155550198', tenant_id: tenantId }],
      [`${number}/reassign`, { tenant_id: tenantId }],
      [`${number}/release`, {}],
      ['/operator/brand', { name: 'Nope' }],
      ['/operator/jobs/1/retry', {}],
      ['/operator/staff/invitations', { email: 'x@example.com', role: 'owner' }],
    ];
    for (const [url, fields] of writes) {
      expect((await support.post(url, fields)).status, url).toBe(403);
    }
    const tenant = (await t.admin('GET', `/admin/v1/tenants/${tenantId}`)).body.data;
    expect(tenant).toMatchObject({ suspended_at: null, application_fee_percent: null });
    expect((await t.services.wallets.get(tenantId)).balance_minutes).toBe(0);
    expect((await t.admin('GET', '/admin/v1/phone-numbers/%2B14155550199')).status).toBe(200);
  });
});

describe('the platform’s name for agencies', () => {
  it('is the issuer of a member’s authenticator app entry, never voiceplane', async () => {
    const tenantId = (await t.admin('POST', '/admin/v1/tenants', { name: 'Issuer Ltd' })).body.data.id;
    await t.admin('POST', `/admin/v1/tenants/${tenantId}/members`, {
      email: 'owner@issuer.example',
      password: 'member password 123',
      role: 'owner',
    });
    const member = consoleClient(t);
    expect((await member.signIn('owner@issuer.example', 'member password 123')).status).toBe(303);
    const setup = await member.get('/console/account/two-factor');
    expect(setup.status).toBe(200);
    const uri = /otpauth:\/\/totp\/[^"<]+/.exec(setup.body.replaceAll('&amp;', '&'))?.[0] ?? '';
    expect(decodeURIComponent(uri)).toContain('issuer=Orbit Voice');
    expect(setup.body).not.toMatch(/voiceplane/i);
  });
});
