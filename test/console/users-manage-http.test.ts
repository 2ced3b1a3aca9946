/**
 * Managing users from the console over plain HTTP (docs/console.md): create with a password or
 * with an emailed invitation (no welcome email then, a link to the portal's set-password page that
 * works once), edit, block, delete after a confirmation page. Each form refuses what the API
 * refuses (the same fields, the same conflict), a replayed form acts once, and another tenant's
 * user is the 404 page on every new page.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { outboxRows, postUser } from '../emails/helpers.js';
import { createTenant, type TestTenant } from '../support/app.js';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { type ConsoleClient, consoleClient, type PageResponse } from './http.js';

let f: ConsoleFixture;
let admin: ConsoleClient;
let other: TestTenant;

const formKeyIn = (page: PageResponse) => /name="form_key" value="([^"]+)"/.exec(page.body)?.[1];

beforeAll(async () => {
  f = await startConsole();
  const patched = await f.t.admin('PATCH', `/admin/v1/tenants/${f.tenant.id}`, {
    email: { smtp_url: 'smtp://127.0.0.1:2525', from: 'Northwind <hello@northwind.example>' },
  });
  expect(patched.status, patched.raw).toBe(200);
  other = await createTenant(f.t, { name: 'Other Agency' });
  const member = await f.addMember('admin');
  admin = consoleClient(f.t);
  expect((await admin.signIn(member.email, member.password)).status).toBe(303);
});
afterAll(() => f?.close());

async function usersNamed(email: string) {
  const list = await f.tenant.request('GET', `/api/v1/users?search=${encodeURIComponent(email)}`);
  return list.body.data as {
    id: string;
    email: string;
    name: string;
    phone: string | null;
    status: string;
  }[];
}

describe('creating a user', () => {
  it('creates a user with a password, once however often the form is posted', async () => {
    const form = await admin.get('/console/users/new');
    expect(form.status).toBe(200);
    const fields = {
      form_key: formKeyIn(form) ?? '',
      name: 'Grace Hopper',
      email: 'grace@client.example',
      phone: '+14155550100',
      access: 'password',
      password: 'a strong password',
    };
    const first = await admin.post('/console/users', fields);
    expect(first.status).toBe(303);
    const again = await admin.post('/console/users', fields);
    expect(again.status).toBe(303);
    expect(again.headers.location).toBe(first.headers.location);
    const found = await usersNamed('grace@client.example');
    expect(found).toHaveLength(1);
    expect(first.headers.location).toBe(`/console/users/${found[0].id}`);
    // The user signs in with that password through the API.
    const session = await f.t.inject({
      method: 'POST',
      url: '/auth/v1/sessions',
      payload: { tenant_id: f.tenant.id, email: 'grace@client.example', password: 'a strong password' },
    });
    expect(session.status).toBe(201);
    const kinds = (await outboxRows(f.t, f.tenant.id)).filter((row) => row.user_id === found[0].id);
    expect(kinds.map((row) => row.kind)).toEqual(['welcome']);
  });

  it('invites a user: no password, no welcome, an invitation whose link sets the password once', async () => {
    const form = await admin.get('/console/users/new');
    const posted = await admin.post('/console/users', {
      form_key: formKeyIn(form) ?? '',
      name: 'Ada Lovelace',
      email: 'ada.invited@client.example',
      access: 'invite',
    });
    expect(posted.status, posted.body).toBe(303);
    const [user] = await usersNamed('ada.invited@client.example');
    const rows = (await outboxRows(f.t, f.tenant.id)).filter((row) => row.user_id === user.id);
    expect(rows.map((row) => row.kind)).toEqual(['user_invitation']);
    expect(rows[0].subject).toContain('Northwind Voice');
    const link = /reset-password#token=(vpr_[A-Za-z0-9]+)/.exec(rows[0].text_body)?.[1];
    expect(link).toBeDefined();
    const set = await f.t.inject({
      method: 'POST',
      url: '/auth/v1/password-resets/confirm',
      payload: { token: link, password: 'my own password' },
    });
    expect(set.status, set.raw).toBe(200);
    const reused = await f.t.inject({
      method: 'POST',
      url: '/auth/v1/password-resets/confirm',
      payload: { token: link, password: 'another password' },
    });
    expect(reused.status).toBe(422);
    const session = await f.t.inject({
      method: 'POST',
      url: '/auth/v1/sessions',
      payload: { tenant_id: f.tenant.id, email: 'ada.invited@client.example', password: 'my own password' },
    });
    expect(session.status).toBe(201);
  });

  it('refuses what POST /api/v1/users refuses: the same fields, the same conflict; nothing is created', async () => {
    const bad = { name: '', email: 'not an email', phone: '4155550100', password: 'short' };
    const api = await f.tenant.request('POST', '/api/v1/users', bad);
    expect(api.status).toBe(422);
    const apiFields = (api.body.error.details as { field: string }[])
      .map((d) => d.field.split('.')[0])
      .sort();
    const form = await admin.get('/console/users/new');
    const page = await admin.post('/console/users', {
      form_key: formKeyIn(form) ?? '',
      ...bad,
      access: 'password',
    });
    expect(page.status).toBe(422);
    const pageFields = [...page.body.matchAll(/<p class="error" id="([a-z_]+)-error">/g)]
      .map((m) => m[1])
      .sort();
    expect(pageFields).toEqual(apiFields);
    expect(page.body).toContain('like +14155550123');

    await postUser(f.tenant, { email: 'taken@client.example' });
    const taken = await f.tenant.request('POST', '/api/v1/users', {
      name: 'Again',
      email: 'taken@client.example',
      password: 'long enough pw',
    });
    expect(taken.status).toBe(409);
    const again = await admin.post('/console/users', {
      form_key: formKeyIn(await admin.get('/console/users/new')) ?? '',
      name: 'Again',
      email: 'taken@client.example',
      access: 'password',
      password: 'long enough pw',
    });
    expect(again.status).toBe(409);
    expect(again.body).toContain(taken.body.error.message);
    expect(await usersNamed('taken@client.example')).toHaveLength(1);
  });
});

describe('editing, inviting again and deleting', () => {
  it('edits a user as PATCH /api/v1/users/{id} does, with the same refusals', async () => {
    const user = await postUser(f.tenant, { email: 'edit.me@client.example' });
    const page = await admin.get(`/console/users/${user.id}/edit`);
    expect(page.status).toBe(200);
    const saved = await admin.post(`/console/users/${user.id}/edit`, {
      name: 'Edited Name',
      email: 'edited@client.example',
      phone: '+14155550111',
    });
    expect(saved.status).toBe(303);
    const read = await f.tenant.request('GET', `/api/v1/users/${user.id}`);
    expect(read.body.data).toMatchObject({
      name: 'Edited Name',
      email: 'edited@client.example',
      phone: '+14155550111',
    });

    await postUser(f.tenant, { email: 'someone.else@client.example' });
    const api = await f.tenant.request('PATCH', `/api/v1/users/${user.id}`, {
      email: 'someone.else@client.example',
    });
    expect(api.status).toBe(409);
    const refused = await admin.post(`/console/users/${user.id}/edit`, {
      name: 'Edited Name',
      email: 'someone.else@client.example',
    });
    expect(refused.status).toBe(409);
    expect(refused.body).toContain(api.body.error.message);
    const badApi = await f.tenant.request('PATCH', `/api/v1/users/${user.id}`, { phone: '12', email: 'x' });
    expect(badApi.status).toBe(422);
    const badPage = await admin.post(`/console/users/${user.id}/edit`, {
      name: 'Edited Name',
      email: 'x',
      phone: '12',
    });
    expect(badPage.status).toBe(422);
    const fields = [...badPage.body.matchAll(/<p class="error" id="([a-z_]+)-error">/g)]
      .map((m) => m[1])
      .sort();
    expect(fields).toEqual((badApi.body.error.details as { field: string }[]).map((d) => d.field).sort());
    expect((await f.tenant.request('GET', `/api/v1/users/${user.id}`)).body.data.email).toBe(
      'edited@client.example',
    );
  });

  it('emails a new password link once per form', async () => {
    const user = await postUser(f.tenant, { email: 'link.me@client.example' });
    const page = await admin.get(`/console/users/${user.id}`);
    const key = /action="\/console\/users\/[^/]+\/invitation"[\s\S]*?name="form_key" value="([^"]+)"/.exec(
      page.body,
    )?.[1];
    expect(key).toBeDefined();
    expect((await admin.post(`/console/users/${user.id}/invitation`, { form_key: key ?? '' })).status).toBe(
      303,
    );
    expect((await admin.post(`/console/users/${user.id}/invitation`, { form_key: key ?? '' })).status).toBe(
      303,
    );
    const rows = (await outboxRows(f.t, f.tenant.id)).filter(
      (row) => row.user_id === user.id && row.kind === 'user_invitation',
    );
    expect(rows).toHaveLength(1);
  });

  it('asks before deleting, deletes as DELETE /api/v1/users/{id}, and a repeat changes nothing more', async () => {
    const user = await postUser(f.tenant, { email: 'delete.me@client.example' });
    const confirm = await admin.get(`/console/users/${user.id}/delete`);
    expect(confirm.status).toBe(200);
    expect(confirm.body).toContain('This cannot be undone');
    const first = await admin.post(`/console/users/${user.id}/delete`, {});
    expect(first.status).toBe(303);
    const again = await admin.post(`/console/users/${user.id}/delete`, {});
    expect(again.status).toBe(303);
    expect((await f.tenant.request('GET', `/api/v1/users/${user.id}`)).status).toBe(404);
  });

  it("answers the 404 page for another tenant's user on every user page and form", async () => {
    const stranger = await postUser(other, { email: 'stranger@other.example' });
    for (const url of ['', '/edit', '/delete']) {
      const page = await admin.get(`/console/users/${stranger.id}${url}`);
      expect(page.status, url).toBe(404);
    }
    for (const [url, fields] of [
      ['/edit', { name: 'Hijack', email: 'hijack@x.example' }],
      ['/invitation', {}],
      ['/delete', {}],
      ['/block', {}],
    ] as const) {
      const posted = await admin.post(`/console/users/${stranger.id}${url}`, fields);
      expect(posted.status, url).toBe(404);
    }
    const still = await other.request('GET', `/api/v1/users/${stranger.id}`);
    expect(still.body.data).toMatchObject({ name: expect.not.stringMatching('Hijack'), status: 'active' });
  });
});
