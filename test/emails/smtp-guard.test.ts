/**
 * A tenant names its SMTP server and this process connects to it: the server must not be an
 * address of the platform's own network (SMTP_ALLOW_PRIVATE=false, the production default).
 * Checked when the settings are saved (422 on email.smtp_url, nothing stored) and again before
 * every send (a name that resolved to a public address may resolve elsewhere later), and the
 * send connects to the address that was checked.
 */
import type { SendMailOptions } from 'nodemailer';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createSmtpSender, type SmtpSender, transportOptions } from '../../src/emails/transports.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { createEmailTenant, operatorEmails, postUser } from './helpers.js';
import { createSmtpServer } from './smtp.js';

const PUBLIC_ADDRESS = '203.0.113.25';
/** Host name → addresses; a test may point a name elsewhere, as DNS may. */
const dns = new Map<string, string[]>([
  ['smtp.public.test', [PUBLIC_ADDRESS]],
  ['smtp.internal.test', ['10.1.2.3']],
  ['smtp.metadata.test', [PUBLIC_ADDRESS, '169.254.169.254']],
  ['smtp.moving.test', [PUBLIC_ADDRESS]],
]);
const resolveHost = async (host: string) => {
  const addresses = dns.get(host);
  if (!addresses) throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${host}`), { code: 'ENOTFOUND' });
  return addresses.map((address) => ({ address, family: 4 }));
};

const sent: {
  poolKey: string;
  smtpUrl: string;
  addresses: readonly string[] | undefined;
  message: SendMailOptions;
}[] = [];
const recordingSender: SmtpSender = {
  async send(poolKey, smtpUrl, message, addresses) {
    sent.push({ poolKey, smtpUrl, addresses, message });
  },
  async close() {},
};

const clock = new ManualClock('2026-11-24T10:00:00.000Z');
let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({
    clock,
    env: { SMTP_ALLOW_PRIVATE: 'false' },
    adapters: () => ({ resolveHost, mailSender: recordingSender }),
  });
});
afterAll(() => t.close());

const FROM = 'Acme <hello@acme.example>';

describe('saving a tenant SMTP server', () => {
  it.each([
    ['a loopback address', 'smtp://127.0.0.1:2525'],
    ['IPv6 loopback', 'smtp://[::1]:25'],
    ['an IPv4-mapped loopback', 'smtp://[::ffff:127.0.0.1]:25'],
    ['the cloud metadata address', 'smtps://169.254.169.254:465'],
    ['a name resolving to a private address', 'smtp://smtp.internal.test:587'],
    ['a name with one metadata address among public ones', 'smtp://smtp.metadata.test'],
  ])('refuses %s with 422 on email.smtp_url, storing nothing', async (_what, smtpUrl) => {
    const tenant = await createEmailTenant(t, null);
    const response = await t.admin('PATCH', `/admin/v1/tenants/${tenant.id}`, {
      email: { smtp_url: smtpUrl, from: FROM },
    });
    expect(response.status, response.raw).toBe(422);
    expect(response.body.error.code).toBe('validation_failed');
    expect(response.body.error.details).toEqual([
      { field: 'email.smtp_url', issue: expect.stringContaining('must not point at a loopback, private') },
    ]);
    const stored = await t.admin('GET', `/admin/v1/tenants/${tenant.id}`);
    expect(stored.body.data.email).toBeNull();
  });

  it('refuses a private server when a tenant is created with it', async () => {
    const response = await t.admin('POST', '/admin/v1/tenants', {
      name: 'Sneaky',
      email: { smtp_url: 'smtp://10.0.0.7', from: FROM },
    });
    expect(response.status, response.raw).toBe(422);
    const listed = await t.admin('GET', '/admin/v1/tenants?limit=100');
    expect(listed.body.data.map((tenant: { name: string }) => tenant.name)).not.toContain('Sneaky');
  });

  it('accepts a public server, and a name that does not resolve yet', async () => {
    for (const smtpUrl of ['smtp://smtp.public.test:587', 'smtp://smtp.not-yet-in-dns.test:587']) {
      const tenant = await createEmailTenant(t, null);
      const response = await t.admin('PATCH', `/admin/v1/tenants/${tenant.id}`, {
        email: { smtp_url: smtpUrl, from: FROM },
      });
      expect(response.status, response.raw).toBe(200);
    }
  });
});

describe('sending through a tenant SMTP server', () => {
  it('connects to the address that was checked', async () => {
    const tenant = await createEmailTenant(t, { smtp_url: 'smtp://smtp.public.test:587', from: FROM });
    const user = await postUser(tenant);
    await t.services.jobRunner.drain();
    const mine = sent.filter((s) => s.poolKey === tenant.id);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({ smtpUrl: 'smtp://smtp.public.test:587', addresses: [PUBLIC_ADDRESS] });
    expect(mine[0].message.to).toMatchObject({ address: user.email });
    const emails = await operatorEmails(t, tenant.id);
    expect(emails.data[0]).toMatchObject({ status: 'sent', last_error: null });
  });

  it('fails the email without connecting when the name now resolves to a private address', async () => {
    const tenant = await createEmailTenant(t, { smtp_url: 'smtp://smtp.moving.test', from: FROM });
    dns.set('smtp.moving.test', ['127.0.0.1']);
    try {
      await postUser(tenant);
      await t.services.jobRunner.drain();
    } finally {
      dns.set('smtp.moving.test', [PUBLIC_ADDRESS]);
    }
    expect(sent.filter((s) => s.poolKey === tenant.id)).toEqual([]);
    const emails = await operatorEmails(t, tenant.id);
    expect(emails.data[0]).toMatchObject({
      status: 'failed',
      last_error: 'the SMTP server must not point at a loopback, private, link-local or metadata address.',
    });
  });

  it('keeps the email pending while the name does not resolve, and sends it once it does', async () => {
    const tenant = await createEmailTenant(t, { smtp_url: 'smtp://smtp.later.test', from: FROM });
    await postUser(tenant);
    await t.services.jobRunner.drain();
    let emails = await operatorEmails(t, tenant.id);
    expect(emails.data[0]).toMatchObject({
      status: 'pending',
      last_error: 'the host smtp.later.test does not resolve.',
    });
    expect(sent.filter((s) => s.poolKey === tenant.id)).toEqual([]);

    dns.set('smtp.later.test', [PUBLIC_ADDRESS]);
    clock.advance(60 * 60 * 1000);
    await t.services.jobRunner.drain();
    emails = await operatorEmails(t, tenant.id);
    expect(emails.data[0]).toMatchObject({ status: 'sent', last_error: null });
    expect(sent.filter((s) => s.poolKey === tenant.id)).toHaveLength(1);
  });
});

describe('the real sender', () => {
  it('connects to the checked address, not to what the name resolves to now', async () => {
    const smtp = await createSmtpServer();
    await smtp.start();
    const sender = createSmtpSender();
    try {
      // The name resolves nowhere: only the address handed over can deliver the message.
      await sender.send(
        'pinned',
        `smtp://mail.guard-test.invalid:${smtp.port}`,
        { from: 'a@acme.example', to: 'b@client.example', subject: 'Pinned', text: 'hello' },
        ['127.0.0.1'],
      );
      expect(smtp.messages.map((m) => m.headers.subject)).toEqual(['Pinned']);
      // The host's records rotate but still hold the pool's address: the open connection is kept.
      await sender.send(
        'pinned',
        `smtp://mail.guard-test.invalid:${smtp.port}`,
        { from: 'a@acme.example', to: 'b@client.example', subject: 'Again', text: 'hello' },
        ['127.0.0.2', '127.0.0.1'],
      );
      expect(smtp.messages.map((m) => m.headers.subject)).toEqual(['Pinned', 'Again']);
      expect(smtp.connections).toHaveLength(1);
      // The pool's address is gone from the host's records: a new pool connects to the checked one
      // (where the test server does not listen), never to the old address.
      await expect(
        sender.send(
          'pinned',
          `smtp://mail.guard-test.invalid:${smtp.port}`,
          { from: 'a@acme.example', to: 'b@client.example', subject: 'Moved', text: 'hello' },
          ['127.0.0.3'],
        ),
      ).rejects.toThrow(`ECONNREFUSED 127.0.0.3:${smtp.port}`);
      expect(smtp.connections).toHaveLength(1);
    } finally {
      await sender.close();
      await smtp.stop();
    }
  });
});

describe('transport options', () => {
  it('connect to the checked address and verify TLS against the URL host name', () => {
    expect(transportOptions('smtps://mailer:pw@smtp.public.test:465', PUBLIC_ADDRESS)).toMatchObject({
      host: PUBLIC_ADDRESS,
      servername: 'smtp.public.test',
      port: 465,
      secure: true,
      auth: { user: 'mailer', pass: 'pw' },
    });
    // An IP literal (IPv6 in brackets) is its own name: no servername to send.
    const v6 = transportOptions('smtp://[2606:2800:220:1::1]:587', '2606:2800:220:1::1');
    expect(v6).toMatchObject({ host: '2606:2800:220:1::1', port: 587, secure: false });
    expect(v6).not.toHaveProperty('servername');
    // Without a checked address (SMTP_ALLOW_PRIVATE, the platform's server) nodemailer resolves.
    expect(transportOptions('smtp://smtp.public.test')).toMatchObject({
      host: 'smtp.public.test',
      port: 587,
    });
  });
});
