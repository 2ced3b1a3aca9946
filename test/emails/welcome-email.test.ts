/**
 * Welcome emails, as a partner and an operator see them: the message a real SMTP server receives
 * (envelope, headers, both bodies), no email without settings, the settings' validation and
 * secrecy, the operator's list, and per-tenant templates.
 */
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createTemplateStore } from '../../src/emails/templates.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createEmailTenant, emailJobs, operatorEmails, outboxRows, postUser } from './helpers.js';
import { createSmtpServer, decodeHeader, type TestSmtpServer } from './smtp.js';

const PASSWORD = 'Sm7p-s3cret/pa55';
const USER_PASSWORD = 'correct horse battery';

let t: TestApp;
let smtp: TestSmtpServer;
const clock = new ManualClock('2026-11-21T10:00:00.000Z');

beforeAll(async () => {
  t = await startTestApp({ clock });
  smtp = await createSmtpServer({
    users: { mailer: PASSWORD },
    rejectRecipient: (address) => address.startsWith('bounce'),
  });
  await smtp.start();
});
afterAll(async () => {
  await t?.close();
  await smtp?.stop();
});

describe('welcome email', () => {
  it('is written when the user is created and delivered by the worker, with envelope, headers and both bodies', async () => {
    const tenant = await createEmailTenant(t, {
      smtp_url: smtp.url('mailer', PASSWORD),
      from: 'Acme Voice <hello@acme.example>',
    });
    const created = await tenant.request('POST', '/api/v1/users', {
      email: 'ada@client.example',
      name: 'Ada Lovelace',
      password: USER_PASSWORD,
    });
    expect(created.status).toBe(201);
    const user = created.body.data;

    // POST /users only wrote the outbox row and its job.
    const [row] = await outboxRows(t, tenant.id);
    expect(row).toMatchObject({
      user_id: user.id,
      to_address: 'ada@client.example',
      status: 'pending',
      attempts: 0,
    });
    expect(await emailJobs(t, tenant.id)).toHaveLength(1);
    expect(smtp.messages.filter((m) => m.envelope.to.includes('ada@client.example'))).toHaveLength(0);

    await t.services.jobRunner.drain();

    const received = smtp.messages.filter((m) => m.envelope.to.includes('ada@client.example'));
    expect(received).toHaveLength(1);
    const [message] = received;
    expect(message.user).toBe('mailer');
    expect(message.envelope).toEqual({ from: 'hello@acme.example', to: ['ada@client.example'] });
    expect(message.headers.from).toBe('Acme Voice <hello@acme.example>');
    expect(message.headers.to).toBe('Ada Lovelace <ada@client.example>');
    expect(decodeHeader(message.headers.subject)).toBe('Welcome to Acme Voice, Ada Lovelace');
    expect(message.headers['message-id']).toBe(`<${row.id}@acme.example>`);
    expect(message.headers['auto-submitted']).toBe('auto-generated');
    expect(message.headers['content-type']).toMatch(/^multipart\/alternative/);
    expect(message.text).toContain('Hello Ada Lovelace,');
    expect(message.text).toContain('Welcome to Acme Voice!');
    expect(message.html).toContain('<p>Hello Ada Lovelace,</p>');
    expect(message.html).toContain('<strong>Acme Voice</strong>');
    expect(message.raw).not.toContain(USER_PASSWORD);

    const listed = await operatorEmails(t, tenant.id);
    expect(listed.data).toEqual([
      {
        id: row.id,
        user_id: user.id,
        kind: 'welcome',
        to: 'ada@client.example',
        subject: 'Welcome to Acme Voice, Ada Lovelace',
        status: 'sent',
        attempts: 1,
        last_error: null,
        created_at: '2026-11-21T10:00:00.000Z',
        sent_at: clock.now().toISOString(),
      },
    ]);
    const [job] = await emailJobs(t, tenant.id);
    expect(job.status).toBe('done');
  });

  it('HTML-escapes the tenant and user names in the HTML part and keeps them as written in the text part', async () => {
    const tenant = await createEmailTenant(
      t,
      { smtp_url: smtp.url('mailer', PASSWORD), from: 'studio@tomjerry.example' },
      'Tom & Jerry <Studio>',
    );
    await postUser(tenant, { email: 'eve@client.example', name: '<script>alert("x")</script> Ünal' });
    await t.services.jobRunner.drain();
    const [message] = smtp.messages.filter((m) => m.envelope.to.includes('eve@client.example'));
    expect(message.html).toContain('Hello &lt;script&gt;alert(&quot;x&quot;)&lt;/script&gt; Ünal,');
    expect(message.html).toContain('<strong>Tom &amp; Jerry &lt;Studio&gt;</strong>');
    expect(message.html).not.toContain('<script>');
    expect(message.text).toContain('Hello <script>alert("x")</script> Ünal,');
    expect(message.text).toContain('Welcome to Tom & Jerry <Studio>!');
    expect(decodeHeader(message.headers.subject)).toBe(
      'Welcome to Tom & Jerry <Studio>, <script>alert("x")</script> Ünal',
    );
  });

  it('speaks in the tenant’s brand and links to its portal: the slug on the platform host, then its verified domain', async () => {
    const tenant = await createEmailTenant(
      t,
      { smtp_url: smtp.url('mailer', PASSWORD), from: 'hi@brand.example' },
      'Legal Name Ltd',
    );
    const branded = await t.admin('PATCH', `/admin/v1/tenants/${tenant.id}/branding`, {
      brand_name: 'Brightline Voice',
      slug: 'brightline',
    });
    expect(branded.status).toBe(200);
    await postUser(tenant, { email: 'bo@client.example', name: 'Bo' });
    await t.services.jobRunner.drain();
    const [first] = smtp.messages.filter((m) => m.envelope.to.includes('bo@client.example'));
    expect(decodeHeader(first.headers.subject)).toBe('Welcome to Brightline Voice, Bo');
    expect(first.text).toContain(`${t.config.publicBaseUrl}/portal/brightline`);
    expect(first.html).toContain(`<a href="${t.config.publicBaseUrl}/portal/brightline">`);
    expect(first.raw).not.toContain('Legal Name Ltd');

    await t.services.database.db
      .insertInto('tenant_domains')
      .values({
        id: `dom_${tenant.id}`,
        tenant_id: tenant.id,
        hostname: 'portal.brightline.example',
        verification_token: 'token',
        verified_at: clock.now(),
        checked_at: clock.now(),
        check_problem: null,
        created_at: clock.now(),
      })
      .execute();
    await postUser(tenant, { email: 'cy@client.example', name: 'Cy' });
    await t.services.jobRunner.drain();
    const [second] = smtp.messages.filter((m) => m.envelope.to.includes('cy@client.example'));
    expect(second.text).toContain('https://portal.brightline.example/portal');
    expect(second.raw).not.toMatch(/voiceplane/i);
  });

  it('is not written for a tenant without email settings: no outbox row, no job, nothing sent', async () => {
    const tenant = await createEmailTenant(t, null, 'Quiet Agency');
    const before = smtp.messages.length;
    await postUser(tenant, { email: 'quiet@client.example' });
    expect(await outboxRows(t, tenant.id)).toEqual([]);
    expect(await emailJobs(t, tenant.id)).toEqual([]);
    await t.services.jobRunner.drain();
    expect(smtp.messages.length).toBe(before);
    expect((await operatorEmails(t, tenant.id)).data).toEqual([]);
  });

  it('stops for users created after the settings are removed', async () => {
    const tenant = await createEmailTenant(
      t,
      { smtp_url: smtp.url('mailer', PASSWORD), from: 'x@acme.example' },
      'Leaving',
    );
    await postUser(tenant);
    const removed = await t.admin('PATCH', `/admin/v1/tenants/${tenant.id}`, { email: null });
    expect(removed.body.data.email).toBeNull();
    await postUser(tenant);
    expect(await outboxRows(t, tenant.id)).toHaveLength(1);
  });
  it('is not sent to a user deleted before delivery: the email ends failed with the reason', async () => {
    const tenant = await createEmailTenant(
      t,
      { smtp_url: smtp.url('mailer', PASSWORD), from: 'gone@acme.example' },
      'Gone',
    );
    const user = await postUser(tenant, { email: 'gone@client.example' });
    expect((await tenant.request('DELETE', `/api/v1/users/${user.id}`)).status).toBe(200);
    await t.services.jobRunner.drain();
    expect(smtp.messages.filter((m) => m.envelope.to.includes('gone@client.example'))).toHaveLength(0);
    const [row] = await outboxRows(t, tenant.id);
    expect(row.status).toBe('failed');
    expect(row.last_error).toMatch(/deleted/);
  });

  it('uses the settings of the moment it sends: fixed credentials deliver what is still pending', async () => {
    const tenant = await createEmailTenant(
      t,
      { smtp_url: 'smtp://127.0.0.1:1', from: 'fix@acme.example' },
      'Fixed',
    );
    await postUser(tenant, { email: 'patient@client.example' });
    await t.services.jobRunner.drain();
    expect((await outboxRows(t, tenant.id))[0]).toMatchObject({ status: 'pending', attempts: 1 });
    await t.admin('PATCH', `/admin/v1/tenants/${tenant.id}`, {
      email: { smtp_url: smtp.url('mailer', PASSWORD), from: 'fix@acme.example' },
    });
    clock.advance(60 * 60_000);
    await t.services.jobRunner.drain();
    expect((await outboxRows(t, tenant.id))[0]).toMatchObject({ status: 'sent', attempts: 2 });
    expect(smtp.messages.filter((m) => m.envelope.to.includes('patient@client.example'))).toHaveLength(1);
  });
});

describe('tenant email settings', () => {
  it('answers 422 validation_failed for a malformed SMTP URL or sender', async () => {
    const tenant = await createEmailTenant(t, null, 'Settings');
    const cases = [
      [{ smtp_url: 'not a url', from: 'a@b.example' }, 'email.smtp_url'],
      [{ smtp_url: 'https://mail.example.com', from: 'a@b.example' }, 'email.smtp_url'],
      [{ smtp_url: 'smtp://mail.example.com:587', from: 'nobody' }, 'email.from'],
      [{ smtp_url: 'smtp://mail.example.com:587', from: 'Name <not-an-address>' }, 'email.from'],
    ] as const;
    for (const [email, field] of cases) {
      const response = await t.admin('PATCH', `/admin/v1/tenants/${tenant.id}`, { email });
      expect(response.status, JSON.stringify(email)).toBe(422);
      expect(response.body.error.code).toBe('validation_failed');
      expect(response.body.error.details.map((d: { field: string }) => d.field)).toContain(field);
    }
    const created = await t.admin('POST', '/admin/v1/tenants', {
      name: 'X',
      email: { smtp_url: 'ftp://x', from: 'a@b.example' },
    });
    expect(created.status).toBe(422);
  });

  it('stores the password sealed, and never returns or logs it', async () => {
    const url = `smtps://mailer:${encodeURIComponent(PASSWORD)}@smtp.acme.example:465`;
    const created = await t.admin('POST', '/admin/v1/tenants', {
      name: 'Secretive',
      email: { smtp_url: url, from: 'a@acme.example' },
    });
    expect(created.status).toBe(201);
    expect(created.body.data.email).toEqual({
      smtp_url: 'smtps://mailer@smtp.acme.example:465',
      from: 'a@acme.example',
    });
    const fetched = await t.admin('GET', `/admin/v1/tenants/${created.body.data.id}`);
    expect(fetched.raw).not.toContain(encodeURIComponent(PASSWORD));
    expect(fetched.body.data.email.smtp_url).toBe('smtps://mailer@smtp.acme.example:465');
    const stored = await t.services.database.db
      .selectFrom('tenants')
      .select(['email_smtp_url', 'email_smtp_password_sealed'])
      .where('id', '=', created.body.data.id)
      .executeTakeFirstOrThrow();
    expect(stored.email_smtp_url).toBe('smtps://mailer@smtp.acme.example:465');
    expect(stored.email_smtp_password_sealed).toMatch(/^v1:[\w-]{8}:[\w-]+:[\w-]+$/);
    expect(stored.email_smtp_password_sealed).not.toContain(PASSWORD);
    const logs = t.logs.join('\n');
    expect(logs).not.toContain(PASSWORD);
    expect(logs).not.toContain(encodeURIComponent(PASSWORD));
  });
});

describe('GET /admin/v1/tenants/{id}/emails', () => {
  it('lists the tenant’s emails newest first, paged, filtered by status, with the failure reason', async () => {
    const tenant = await createEmailTenant(
      t,
      { smtp_url: smtp.url('mailer', PASSWORD), from: 'list@acme.example' },
      'Listed',
    );
    const first = await postUser(tenant, { email: 'one@client.example' });
    clock.advance(1000);
    const bounced = await postUser(tenant, { email: 'bounce-two@client.example' });
    clock.advance(1000);
    const third = await postUser(tenant, { email: 'three@client.example' });
    await t.services.jobRunner.drain();

    const all = await operatorEmails(t, tenant.id);
    expect(all.data.map((e) => e.user_id)).toEqual([third.id, bounced.id, first.id]);
    expect(all.pagination).toEqual({ page: 1, limit: 20, total: 3, pages: 1, has_more: false });

    const page1 = await operatorEmails(t, tenant.id, '?limit=2');
    expect(page1.data.map((e) => e.user_id)).toEqual([third.id, bounced.id]);
    expect(page1.pagination).toEqual({ page: 1, limit: 2, total: 3, pages: 2, has_more: true });
    const page2 = await operatorEmails(t, tenant.id, '?limit=2&page=2');
    expect(page2.data.map((e) => e.user_id)).toEqual([first.id]);
    const past = await operatorEmails(t, tenant.id, '?limit=2&page=9');
    expect(past).toEqual({
      data: [],
      pagination: { page: 9, limit: 2, total: 3, pages: 2, has_more: false },
    });

    const failed = await operatorEmails(t, tenant.id, '?status=failed');
    expect(failed.data).toHaveLength(1);
    expect(failed.data[0]).toMatchObject({
      user_id: bounced.id,
      status: 'failed',
      attempts: 1,
      sent_at: null,
    });
    expect(failed.data[0].last_error).toMatch(/550/);
    expect((await operatorEmails(t, tenant.id, '?status=sent')).data).toHaveLength(2);
  });

  it('answers 404 for an unknown tenant, 422 for a bad query and 401 without the operator token', async () => {
    const missing = await t.admin('GET', '/admin/v1/tenants/ten_doesnotexist/emails');
    expect(missing.status).toBe(404);
    expect(missing.body.error.code).toBe('not_found');
    const tenant = await createEmailTenant(t, null, 'Q');
    const bad = await t.admin('GET', `/admin/v1/tenants/${tenant.id}/emails?status=bounced&limit=0`);
    expect(bad.status).toBe(422);
    expect(bad.body.error.code).toBe('validation_failed');
    const anonymous = await t.inject({ method: 'GET', url: `/admin/v1/tenants/${tenant.id}/emails` });
    expect(anonymous.status).toBe(401);
    const partner = await tenant.request('GET', `/admin/v1/tenants/${tenant.id}/emails`);
    expect(partner.status).toBe(401);
  });
});

describe('templates', () => {
  it('takes a tenant’s own template file before the default one, file by file', async () => {
    const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'vp-templates-'));
    try {
      fs.writeFileSync(path.join(dir, 'welcome.subject.txt'), 'Default {{tenant_name}}\n');
      fs.writeFileSync(path.join(dir, 'welcome.txt'), 'Hi {{user_name}} {{unknown}}');
      fs.writeFileSync(path.join(dir, 'welcome.html'), '<p>{{user_name}}</p>');
      fs.mkdirSync(path.join(dir, 'tenants', 'ten_custom'), { recursive: true });
      fs.writeFileSync(
        path.join(dir, 'tenants', 'ten_custom', 'welcome.subject.txt'),
        'Bienvenue chez {{ tenant_name }}',
      );
      const store = createTemplateStore(dir);
      const values = { tenant_name: 'Acme', user_name: 'A & B', user_email: 'a@b.example' };
      expect(await store.render('welcome', 'ten_other', values)).toEqual({
        subject: 'Default Acme',
        text: 'Hi A & B {{unknown}}',
        html: '<p>A &amp; B</p>',
      });
      expect((await store.render('welcome', 'ten_custom', values)).subject).toBe('Bienvenue chez Acme');
      expect((await store.render('welcome', 'ten_custom', values)).text).toBe('Hi A & B {{unknown}}');
    } finally {
      fs.rmSync(dir, { recursive: true, force: true });
    }
  });
});
