/**
 * Invitations of a tenant without email settings go through the platform's own SMTP server
 * (PLATFORM_SMTP_URL, PLATFORM_EMAIL_FROM), through the outbox, and the link leaves the database
 * once the email is sent.
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config/config.js';
import { createSmtpServer, type TestSmtpServer } from '../emails/smtp.js';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { consoleClient } from './http.js';

let f: ConsoleFixture;
let smtp: TestSmtpServer;

beforeAll(async () => {
  smtp = await createSmtpServer();
  await smtp.start();
  f = await startConsole({
    env: { PLATFORM_SMTP_URL: smtp.url(), PLATFORM_EMAIL_FROM: 'voiceplane <no-reply@voiceplane.test>' },
  });
  f.t.services.jobRunner.start();
});
afterAll(async () => {
  await f?.close();
  await smtp?.stop();
});

it('sends the invitation through the platform server when the tenant has no settings', async () => {
  const owner = consoleClient(f.t);
  await owner.signIn(f.owner.email, f.owner.password);
  const sent = await owner.post('/console/members/invitations', {
    email: 'pat@client.example',
    role: 'admin',
  });
  expect(sent.status).toBe(303);
  let message = smtp.messages.find((m) => m.envelope.to.includes('pat@client.example'));
  for (let i = 0; i < 100 && !message; i++) {
    await f.t.services.jobRunner.drain();
    await new Promise((resolve) => setTimeout(resolve, 100));
    message = smtp.messages.find((m) => m.envelope.to.includes('pat@client.example'));
  }
  expect(message?.envelope.from).toBe('no-reply@voiceplane.test');
  expect(message?.text).toMatch(/http:\/\/voiceplane\.test\/console\/invitations\/vpi_/);
  const emails = await f.t.services.emails.list(f.tenant.id, { page: 1, limit: 10 });
  expect(emails.data[0]).toMatchObject({
    kind: 'member_invitation',
    user_id: null,
    to: 'pat@client.example',
  });
  const row = await f.t.services.database.db
    .selectFrom('email_outbox')
    .select(['status', 'text_body', 'html_body', 'sender'])
    .where('tenant_id', '=', f.tenant.id)
    .executeTakeFirstOrThrow();
  expect(row).toEqual({ status: 'sent', text_body: '', html_body: '', sender: 'platform' });
});

it('needs both platform variables, or neither', () => {
  expect(() => loadConfig({ PLATFORM_EMAIL_FROM: 'a@b.example' })).toThrow('PLATFORM_SMTP_URL');
  expect(() => loadConfig({ PLATFORM_SMTP_URL: 'smtp://127.0.0.1:25' })).toThrow('PLATFORM_EMAIL_FROM');
  expect(() => loadConfig({ PLATFORM_SMTP_URL: 'http://x' })).toThrow('PLATFORM_SMTP_URL');
});
