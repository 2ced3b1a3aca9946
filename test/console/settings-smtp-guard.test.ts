/**
 * The console's email settings with the outbound guard on (SMTP_ALLOW_PRIVATE=false, the
 * production default): an owner cannot point the tenant's SMTP server into the platform's own
 * network; the page answers 422 with the reason beside the URL field and stores nothing.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { consoleClient } from './http.js';

let f: ConsoleFixture;
beforeAll(async () => {
  f = await startConsole({
    env: { SMTP_ALLOW_PRIVATE: 'false' },
    adapters: () => ({ resolveHost: async () => [{ address: '192.168.1.20', family: 4 }] }),
  });
});
afterAll(async () => {
  await f?.close();
});

it('refuses a loopback or private SMTP server beside the URL field, storing nothing', async () => {
  const owner = consoleClient(f.t);
  expect((await owner.signIn(f.owner.email, f.owner.password)).status).toBe(303);
  for (const smtpUrl of ['smtp://mailer@127.0.0.1:2525', 'smtps://mailer@smtp.office.lan:465']) {
    const saved = await owner.post('/console/emails/settings', {
      smtp_url: smtpUrl,
      smtp_password: 'pass-word',
      from: 'Northwind <no-reply@northwind.example>',
    });
    expect(saved.status, smtpUrl).toBe(422);
    expect(saved.body).toContain('must not point at a loopback, private, link-local or metadata address.');
    expect(saved.body).toContain(smtpUrl);
  }
  expect(await f.t.services.tenants.emailSettings(f.tenant.id)).toBeNull();
});
