/**
 * The operator console over HTTP: sign-in with email, password and TOTP (a wrong or replayed code
 * refused, the session cookie's flags), the roles (support reads and is refused every write with
 * 403, admin is refused staff), CSRF and cross-site refusals, the invitation flow with its TOTP
 * set-up, and the tenant page's writes going through the services.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startTestApp, type TestApp } from '../support/app.js';
import { addStaff, codeOf, operatorClient, type TestStaff } from './console-helpers.js';

let t: TestApp;
let owner: TestStaff;

beforeAll(async () => {
  t = await startTestApp();
  owner = await addStaff(t, 'owner');
});
afterAll(async () => {
  await t?.close();
});

const createTenant = async (name: string) =>
  (await t.admin('POST', '/admin/v1/tenants', { name })).body.data.id as string;

describe('signing in to the operator console', () => {
  it('sends a signed-out visitor to the sign-in page', async () => {
    const answer = await operatorClient(t).get('/operator/tenants');
    expect(answer.status).toBe(303);
    expect(answer.headers.location).toBe('/operator/sign-in?next=%2Foperator%2Ftenants');
  });

  it('refuses a wrong code and a right password, then accepts the right code once', async () => {
    const staff = await addStaff(t, 'admin');
    const client = operatorClient(t);
    const wrong = await client.signIn(staff, '000000' === codeOf(staff.secret) ? '111111' : '000000');
    expect(wrong.status).toBe(401);
    expect(wrong.body).toContain('The email, password or code is incorrect.');
    const code = codeOf(staff.secret);
    const right = await client.signIn(staff, code);
    expect(right.status).toBe(303);
    const cookie = String(right.headers['set-cookie']);
    expect(cookie).toMatch(/vp_operator=vpo_/);
    expect(cookie).toMatch(/HttpOnly/i);
    expect(cookie).toMatch(/SameSite=Lax/i);
    expect(cookie).toMatch(/Path=\/operator/);
    // The same code again (a replay) opens nothing.
    const replay = await operatorClient(t).signIn(staff, code);
    expect(replay.status).toBe(401);
  });

  it('refuses a wrong password even with the right code', async () => {
    const staff = await addStaff(t, 'support');
    const answer = await operatorClient(t).signIn(
      { ...staff, password: 'not the password' },
      codeOf(staff.secret),
    );
    expect(answer.status).toBe(401);
  });

  it('signs out: the old cookie no longer opens a page', async () => {
    const client = operatorClient(t);
    expect((await client.signIn(owner)).status).toBe(303);
    const token = client.cookies.get('vp_operator');
    expect((await client.get('/operator/tenants')).status).toBe(200);
    expect((await client.post('/operator/sign-out', {})).status).toBe(303);
    const again = await t.inject({
      method: 'GET',
      url: '/operator/tenants',
      headers: { cookie: `vp_operator=${token}` },
    });
    expect(again.status).toBe(303);
  });

  it('leaves the root ADMIN_TOKEN working for the operator API', async () => {
    expect((await t.admin('GET', '/admin/v1/tenants')).status).toBe(200);
  });
});

describe('roles', () => {
  it('lets support read every page but shows no write form and refuses every write with 403', async () => {
    const tenantId = await createTenant('Support Co');
    const support = operatorClient(t);
    expect((await support.signIn(await addStaff(t, 'support'))).status).toBe(303);
    for (const url of [
      '/operator/tenants',
      `/operator/tenants/${tenantId}`,
      '/operator/revenue',
      '/operator/engines',
      '/operator/jobs',
      '/operator/brand',
    ]) {
      const page = await support.get(url);
      expect(page.status, url).toBe(200);
      expect(page.body, url).not.toMatch(/<form method="post" action="\/operator\/(?!sign-out)/);
    }
    const writes: [string, Record<string, string>][] = [
      ['/operator/tenants', { name: 'Nope', owner_email: 'nope@example.com' }],
      [`/operator/tenants/${tenantId}/wallet`, { wholesale_rate: '0.05', currency: 'usd' }],
      [`/operator/tenants/${tenantId}/branding`, { brand_name: 'Nope' }],
      ['/operator/brand', { name: 'Nope' }],
      ['/operator/jobs/1/retry', {}],
      ['/operator/staff/invitations', { email: 'x@example.com', role: 'owner' }],
    ];
    for (const [url, fields] of writes) {
      const answer = await support.post(url, fields);
      expect(answer.status, url).toBe(403);
    }
    expect((await t.services.wallets.get(tenantId)).metered).toBe(false);
  });

  it('lets admin change tenants but not staff', async () => {
    const admin = operatorClient(t);
    expect((await admin.signIn(await addStaff(t, 'admin'))).status).toBe(303);
    const tenants = await admin.get('/operator/tenants');
    expect(tenants.body).not.toContain('href="/operator/staff"');
    expect((await admin.get('/operator/staff')).status).toBe(403);
    const invite = await admin.post('/operator/staff/invitations', {
      email: 'new@platform.example',
      role: 'owner',
    });
    expect(invite.status).toBe(403);
    expect(await t.services.staff.listInvitations()).toEqual([]);
  });
});

describe('CSRF and cross-site requests', () => {
  it('refuses a POST without the token, and a token of another session', async () => {
    const tenantId = await createTenant('Csrf Co');
    const admin = operatorClient(t);
    await admin.signIn(await addStaff(t, 'admin'));
    const missing = await admin.post(
      `/operator/tenants/${tenantId}/wallet`,
      { wholesale_rate: '0.05', currency: 'usd' },
      { withCsrf: false },
    );
    expect(missing.status).toBe(403);
    expect(missing.body).toContain('did not come from the operator console');
    const other = operatorClient(t);
    await other.signIn(await addStaff(t, 'admin'));
    const page = await other.get('/operator/tenants');
    const foreignToken = /name="_csrf" value="([^"]+)"/.exec(page.body)?.[1] ?? '';
    const swapped = await admin.post(
      `/operator/tenants/${tenantId}/wallet`,
      { wholesale_rate: '0.05', currency: 'usd', _csrf: foreignToken },
      { withCsrf: false },
    );
    expect(swapped.status).toBe(403);
    expect((await t.services.wallets.get(tenantId)).metered).toBe(false);
  });

  it('refuses a JSON body and sends a strict Content-Security-Policy', async () => {
    const admin = operatorClient(t);
    await admin.signIn(await addStaff(t, 'admin'));
    const page = await admin.get('/operator/tenants');
    expect(String(page.headers['content-security-policy'])).toContain("frame-ancestors 'none'");
    const json = await t.inject({
      method: 'POST',
      url: '/operator/brand',
      headers: {
        'content-type': 'application/json',
        cookie: `vp_operator=${admin.cookies.get('vp_operator')}`,
      },
      payload: '{"name":"x"}',
    });
    expect(json.status).toBe(415);
  });
});

describe('staff invitations', () => {
  it('an owner invites, the invitee sets up TOTP and signs in with their role', async () => {
    const client = operatorClient(t);
    await client.signIn(owner);
    const created = await client.post('/operator/staff/invitations', {
      email: 'invitee@platform.example',
      role: 'support',
    });
    // The link is not in the POST's answer: the redirect's page shows it, once.
    expect(created.status).toBe(303);
    expect(created.body).not.toMatch(/vpoi_/);
    const shown = await client.get('/operator/staff');
    const link = /(\/operator\/invitations\/vpoi_[0-9A-Za-z]+)/.exec(shown.body)?.[1] as string;
    expect((await client.get('/operator/staff')).body).not.toContain(link);
    expect(link).toBeDefined();
    const invitee = operatorClient(t);
    const form = await invitee.get(link);
    expect(form.status).toBe(200);
    const secret = /id="totp-secret">([A-Z2-7]+)</.exec(form.body)?.[1] as string;
    expect(form.body).toContain('otpauth://totp/');
    const setup = /name="setup" value="([^"]+)"/.exec(form.body)?.[1] as string;
    const wrong = await invitee.post(link, {
      setup,
      password: 'a good password',
      code: codeOf(secret) === '123456' ? '654321' : '123456',
    });
    expect(wrong.status).toBe(422);
    const accepted = await invitee.post(link, {
      setup,
      password: 'a good password',
      name: 'Ivy',
      code: codeOf(secret),
    });
    expect(accepted.status).toBe(303);
    expect((await invitee.get(link)).status).toBe(404);
    const signedIn = await invitee.signIn({
      id: '',
      email: 'invitee@platform.example',
      password: 'a good password',
      secret,
      role: 'support',
    });
    expect(signedIn.status).toBe(303);
  });

  it('keeps the last owner: it can be neither demoted nor removed', async () => {
    const t2 = await startTestApp();
    try {
      const only = await addStaff(t2, 'owner');
      const client = operatorClient(t2);
      await client.signIn(only);
      const demote = await client.post(`/operator/staff/${only.id}/role`, { role: 'admin' });
      expect(demote.status).toBe(409);
      const remove = await client.post(`/operator/staff/${only.id}/remove`, {});
      expect(remove.status).toBe(409);
    } finally {
      await t2.close();
    }
  });
});

describe('tenant pages', () => {
  it('creates a tenant with its first owner, meters it, credits its wallet and saves its branding', async () => {
    const admin = operatorClient(t);
    await admin.signIn(await addStaff(t, 'admin'));
    const created = await admin.post('/operator/tenants', {
      name: 'Acme Voice',
      owner_email: 'ada@acme.example',
    });
    expect(created.status).toBe(200);
    const tenantId = /href="\/operator\/tenants\/(ten_[0-9A-Za-z]+)"/.exec(created.body)?.[1] as string;
    const password = /id="owner-password">([0-9A-Za-z]{20})</.exec(created.body)?.[1];
    expect(password).toBeDefined();
    expect((await t.services.members.list(tenantId)).map((m) => [m.email, m.role])).toEqual([
      ['ada@acme.example', 'owner'],
    ]);

    const refused = await admin.post(`/operator/tenants/${tenantId}/wallet`, {
      wholesale_rate: 'cheap',
      currency: 'USD',
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatch(/id="wholesale_rate-error"/);
    expect(refused.body).toMatch(/id="currency-error"/);
    expect(
      (await admin.post(`/operator/tenants/${tenantId}/wallet`, { wholesale_rate: '0.05', currency: 'usd' }))
        .status,
    ).toBe(303);
    expect(
      (await admin.post(`/operator/tenants/${tenantId}/wallet/credit`, { minutes: '1000', reason: 'launch' }))
        .status,
    ).toBe(303);
    expect((await t.services.wallets.get(tenantId)).balance_minutes).toBe(1000);
    expect(
      (
        await admin.post(`/operator/tenants/${tenantId}/branding`, {
          brand_name: 'Acme',
          primary_color: '#112233',
        })
      ).status,
    ).toBe(303);
    expect((await t.services.branding.get(tenantId)).brand_name).toBe('Acme');
    const page = await admin.get(`/operator/tenants/${tenantId}`);
    expect(page.body).toContain('launch');
    expect(page.body).toContain('ada@acme.example');

    const search = await admin.get('/operator/tenants?q=acme');
    expect(search.body).toContain('Acme Voice');
    const none = await admin.get('/operator/tenants?q=zzzz-nothing');
    expect(none.body).toContain('No tenant matches');
  });

  it('puts a failed job back in line', async () => {
    const admin = operatorClient(t);
    await admin.signIn(await addStaff(t, 'admin'));
    const { rows } = await (await import('kysely')).sql<{ id: string }>`
      INSERT INTO jobs (queue, payload, status, run_at, attempts, max_attempts, last_error, created_at, finished_at)
      VALUES ('emails.send', '{}', 'failed', now(), 10, 10, 'smtp refused', now(), now()) RETURNING id::text AS id`.execute(
      t.services.database.db,
    );
    const jobs = await admin.get('/operator/jobs');
    expect(jobs.body).toContain('smtp refused');
    expect((await admin.post(`/operator/jobs/${rows[0].id}/retry`, {})).status).toBe(303);
    const again = await admin.post(`/operator/jobs/${rows[0].id}/retry`, {});
    expect(again.status).toBe(404);
  });
});
