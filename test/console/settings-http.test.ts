/**
 * The settings pages over plain HTTP: who may change members (owners only), that a tenant keeps
 * an owner, tenant isolation (another tenant's members and endpoints answer 404), a viewer's
 * forged POST, and invitation links that expired (72 h) or were used or superseded.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { smtpUrlOf } from '../../src/tenants/secrets.js';
import { createTenant } from '../support/app.js';
import { type ConsoleFixture, OWNER_PASSWORD, startConsole } from './helpers.js';
import { type ConsoleClient, consoleClient } from './http.js';

let f: ConsoleFixture;
const clock = new ManualClock(new Date());

async function signedInClient(member: { email: string; password: string }): Promise<ConsoleClient> {
  const client = consoleClient(f.t);
  const answer = await client.signIn(member.email, member.password);
  expect(answer.status).toBe(303);
  return client;
}

const linkIn = (body: string) => /\/console\/invitations\/vpi_[A-Za-z0-9]+/.exec(body)?.[0];

beforeAll(async () => {
  f = await startConsole({ clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
});
afterAll(async () => {
  await f?.close();
});

describe('members: owners only, and always one owner', () => {
  it('refuses an admin who invites, changes a role or removes a member (403), and lets the owner', async () => {
    const admin = await f.addMember('admin');
    const viewer = await f.addMember('viewer');
    const client = await signedInClient(admin);
    const page = await client.get('/console/members');
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('Send invitation');
    expect(page.body).not.toContain('>Remove<');
    const invite = await client.post('/console/members/invitations', {
      email: 'someone@northwind.example',
      role: 'viewer',
    });
    expect(invite.status).toBe(403);
    expect((await client.post(`/console/members/${viewer.id}/remove`, {})).status).toBe(403);
    expect((await client.post(`/console/members/${viewer.id}/role`, { role: 'owner' })).status).toBe(403);
    expect(await f.t.services.members.listInvitations(f.tenant.id)).toEqual([]);

    const owner = await signedInClient(f.owner);
    const invited = await owner.post('/console/members/invitations', {
      email: 'someone@northwind.example',
      role: 'viewer',
    });
    // No email settings here: the link is shown once to the owner instead.
    expect(invited.status).toBe(200);
    expect(invited.body).toContain('Invitation link');
    expect(linkIn(invited.body)).toBeDefined();
    const removed = await owner.post(`/console/members/${viewer.id}/remove`, {});
    expect(removed.status).toBe(303);
    await expect(f.t.services.members.get(f.tenant.id, viewer.id)).rejects.toThrow('Member not found');
  });

  it('never removes or demotes the last owner', async () => {
    const owner = await signedInClient(f.owner);
    const demote = await owner.post(`/console/members/${f.owner.id}/role`, { role: 'admin' });
    expect(demote.status).toBe(409);
    expect(demote.body).toContain('An agency needs at least one owner');
    const remove = await owner.post(`/console/members/${f.owner.id}/remove`, {});
    expect(remove.status).toBe(409);
    expect((await f.t.services.members.get(f.tenant.id, f.owner.id)).role).toBe('owner');

    // With a second owner, the first can step down (and is signed out by the role change).
    const second = await f.addMember('owner');
    const other = await signedInClient(second);
    expect((await other.post(`/console/members/${f.owner.id}/role`, { role: 'admin' })).status).toBe(303);
    expect((await f.t.services.members.get(f.tenant.id, f.owner.id)).role).toBe('admin');
    expect((await owner.get('/console/members')).status).toBe(303);
    expect((await other.post(`/console/members/${second.id}/role`, { role: 'viewer' })).status).toBe(409);
    expect((await other.post(`/console/members/${f.owner.id}/role`, { role: 'owner' })).status).toBe(303);
  });

  it('refuses an email that already belongs to a member, and supersedes an earlier invitation', async () => {
    const owner = await signedInClient(f.owner);
    const taken = await owner.post('/console/members/invitations', { email: f.owner.email, role: 'admin' });
    expect(taken.status).toBe(409);
    expect(taken.body).toContain('already belongs to a console member');

    const first = linkIn(
      (await owner.post('/console/members/invitations', { email: 'twice@northwind.example', role: 'viewer' }))
        .body,
    );
    const second = linkIn(
      (await owner.post('/console/members/invitations', { email: 'twice@northwind.example', role: 'admin' }))
        .body,
    );
    expect((await f.t.inject({ method: 'GET', url: first! })).status).toBe(404);
    const open = await f.t.inject({ method: 'GET', url: second! });
    expect(open.status).toBe(200);
    expect(open.raw).toContain('admin');
    const pending = await f.t.services.members.listInvitations(f.tenant.id);
    expect(pending.filter((i) => i.email === 'twice@northwind.example')).toHaveLength(1);
  });
});

describe('invitation links', () => {
  it('are refused after 72 hours, and once used', async () => {
    const owner = await signedInClient(f.owner);
    const late = linkIn(
      (await owner.post('/console/members/invitations', { email: 'late@northwind.example', role: 'viewer' }))
        .body,
    );
    const used = linkIn(
      (await owner.post('/console/members/invitations', { email: 'used@northwind.example', role: 'viewer' }))
        .body,
    );
    clock.advance(71 * 3_600_000);
    const invitee = consoleClient(f.t);
    expect((await invitee.get(used!)).status).toBe(200);
    const accepted = await invitee.post(used!, { name: 'Used Once', password: 'a good password' });
    expect(accepted.status).toBe(303);
    expect(accepted.headers.location).toBe('/console');
    expect((await invitee.get('/console/members')).body).toContain('used@northwind.example');
    const again = await consoleClient(f.t).get(used!);
    expect(again.status).toBe(404);
    expect(again.body).toContain('not valid any more');

    clock.advance(2 * 3_600_000);
    const expired = consoleClient(f.t);
    const page = await expired.get(late!);
    expect(page.status).toBe(404);
    expect(page.body).toContain('expired, was already used, or was revoked');
    // Even a form posted with a token from before is refused.
    const posted = await expired.post(late!, { name: 'Too Late', password: 'a good password' });
    expect(posted.status).toBe(404);
    await expect(f.t.services.members.signIn('late@northwind.example', 'a good password')).resolves.toEqual({
      ok: false,
      reason: 'invalid',
    });
  });
});

describe('tenant isolation and viewers', () => {
  it("answers 404 for another tenant's member or endpoint, and changes nothing", async () => {
    const endpoint = await f.t.services.events.create(f.tenant.id, {
      url: 'http://127.0.0.1:9/a',
      events: ['*'],
    });
    const other = await createTenant(f.t, { name: 'Other Agency' });
    const email = `owner-b-${Date.now()}@other.example`;
    const created = await f.t.admin('POST', `/admin/v1/tenants/${other.id}/members`, {
      email,
      password: OWNER_PASSWORD,
      role: 'owner',
    });
    expect(created.status).toBe(201);
    const b = await signedInClient({ email, password: OWNER_PASSWORD });
    expect((await b.get(`/console/webhooks/${endpoint.id}`)).status).toBe(404);
    expect((await b.post(`/console/webhooks/${endpoint.id}/delete`, {})).status).toBe(404);
    expect((await b.post(`/console/webhooks/${endpoint.id}/disable`, {})).status).toBe(404);
    expect((await b.post(`/console/members/${f.owner.id}/remove`, {})).status).toBe(404);
    expect((await b.post(`/console/members/${f.owner.id}/role`, { role: 'viewer' })).status).toBe(404);
    expect((await b.get('/console/members')).body).not.toContain(f.owner.email);
    expect((await b.get('/console/webhooks')).body).not.toContain('127.0.0.1:9/a');
    expect((await f.t.services.events.get(f.tenant.id, endpoint.id)).enabled).toBe(true);
    expect((await f.t.services.members.get(f.tenant.id, f.owner.id)).role).toBe('owner');
  });

  it("refuses a viewer's forged POST carrying the viewer's own valid CSRF token (403)", async () => {
    const viewer = await f.addMember('viewer');
    const client = await signedInClient(viewer);
    for (const url of ['/console/webhooks', '/console/emails']) {
      const page = await client.get(url);
      expect(page.status).toBe(200);
      expect(page.body).not.toMatch(/New endpoint|Save settings|Send test email/);
    }
    const forged = await client.post('/console/webhooks', { url: 'https://evil.example/x', events: '*' });
    expect(forged.status).toBe(403);
    const settings = await client.post('/console/emails/settings', {
      smtp_url: 'smtp://evil.example:25',
      from: 'x@evil.example',
    });
    expect(settings.status).toBe(403);
    expect(await f.t.services.tenants.emailSettings(f.tenant.id)).toBeNull();
    const list = await f.t.services.events.list(f.tenant.id, { page: 1, limit: 100 });
    expect(list.data.map((e) => e.url)).not.toContain('https://evil.example/x');
    // Their own account is theirs to change.
    const wrong = await client.post('/console/account/password', {
      current_password: 'not it',
      new_password: 'another password',
    });
    expect(wrong.status).toBe(422);
    expect(wrong.body).toContain('is not your current password');
  });

  it('lets only owners change the email settings: admins and viewers read them', async () => {
    const admin = await signedInClient(await f.addMember('admin'));
    const page = await admin.get('/console/emails');
    expect(page.status).toBe(200);
    expect(page.body).not.toContain('Save settings');
    expect(page.body).toContain('Only owners change these settings.');
    const forged = await admin.post('/console/emails/settings', {
      smtp_url: 'smtp://mailer@attacker.example:25',
      from: 'x@attacker.example',
    });
    expect(forged.status).toBe(403);
    expect(await f.t.services.tenants.emailSettings(f.tenant.id)).toBeNull();
  });

  it('stores the SMTP password without ever showing it back, and keeps it when left blank for the same server only', async () => {
    const admin = await signedInClient(f.owner);
    const saved = await admin.post('/console/emails/settings', {
      smtp_url: 'smtp://mailer@127.0.0.1:2525',
      smtp_password: 's3cret-pass-word',
      from: 'Northwind <no-reply@northwind.example>',
    });
    expect(saved.status).toBe(303);
    const page = await admin.get('/console/emails');
    expect(page.body).not.toContain('s3cret-pass-word');
    expect(page.body).toContain('A password is set. Leave blank to keep it');
    const storedUrl = async () => {
      const row = await f.t.services.database.db
        .selectFrom('tenants')
        .selectAll()
        .where('id', '=', f.tenant.id)
        .executeTakeFirstOrThrow();
      return smtpUrlOf(f.t.services.secrets, row);
    };
    // Same server and user, another sender: the stored password stays.
    const kept = await admin.post('/console/emails/settings', {
      smtp_url: 'smtp://mailer@127.0.0.1:2525',
      smtp_password: '',
      from: 'Northwind Voice <no-reply@northwind.example>',
    });
    expect(kept.status).toBe(303);
    expect(await storedUrl()).toBe('smtp://mailer:s3cret-pass-word@127.0.0.1:2525');
    // Another host, port, scheme or user with a blank password: refused, nothing handed over.
    for (const elsewhere of [
      'smtp://mailer@attacker.example:2525',
      'smtp://mailer@127.0.0.1:2526',
      'smtps://mailer@127.0.0.1:2525',
      'smtp://other@127.0.0.1:2525',
    ]) {
      const moved = await admin.post('/console/emails/settings', {
        smtp_url: elsewhere,
        smtp_password: '',
        from: 'Northwind <no-reply@northwind.example>',
      });
      expect(moved.status, elsewhere).toBe(422);
      expect(moved.body).toContain('must be entered again');
      expect(await storedUrl()).toBe('smtp://mailer:s3cret-pass-word@127.0.0.1:2525');
    }
    // With the password typed again, the new server is saved.
    const moved = await admin.post('/console/emails/settings', {
      smtp_url: 'smtp://mailer@127.0.0.1:2526',
      smtp_password: 'another-pass',
      from: 'Northwind <no-reply@northwind.example>',
    });
    expect(moved.status).toBe(303);
    expect(await f.t.services.tenants.emailSettings(f.tenant.id)).toEqual({
      smtp_url: 'smtp://mailer@127.0.0.1:2526',
      from: 'Northwind <no-reply@northwind.example>',
      password_set: true,
    });
    const refused = await admin.post('/console/emails/settings', { smtp_url: 'http://x', from: 'nobody' });
    expect(refused.status).toBe(422);
    expect(refused.body).toContain('must use smtp:// or smtps://.');
    await f.t.admin('PATCH', `/admin/v1/tenants/${f.tenant.id}`, { email: null });
  });
});
