/**
 * The platform's own emails speak with the operator's brand: a member invitation sent through the
 * platform's SMTP server (the tenant has none) comes from the platform's name when
 * PLATFORM_EMAIL_FROM gives only an address, and never says "voiceplane".
 */
import { afterAll, beforeAll, expect, it } from 'vitest';
import { type ConsoleFixture, startConsole } from '../console/helpers.js';
import { consoleClient } from '../console/http.js';
import { createSmtpServer, type TestSmtpServer } from '../emails/smtp.js';

let f: ConsoleFixture;
let smtp: TestSmtpServer;

beforeAll(async () => {
  smtp = await createSmtpServer();
  await smtp.start();
  f = await startConsole({
    env: {
      PLATFORM_NAME: 'Orbit Voice',
      PLATFORM_SMTP_URL: smtp.url(),
      PLATFORM_EMAIL_FROM: 'no-reply@orbit.test',
      PUBLIC_BASE_URL: 'http://calls.orbit.test',
    },
  });
  f.t.services.jobRunner.start();
});
afterAll(async () => {
  await f?.close();
  await smtp?.stop();
});

it('sends a member invitation from the platform’s name', async () => {
  const owner = consoleClient(f.t);
  await owner.signIn(f.owner.email, f.owner.password);
  const sent = await owner.post('/console/members/invitations', {
    email: 'sam@client.example',
    role: 'admin',
  });
  expect(sent.status).toBe(303);
  let message = smtp.messages.find((m) => m.envelope.to.includes('sam@client.example'));
  for (let i = 0; i < 100 && !message; i++) {
    await f.t.services.jobRunner.drain();
    await new Promise((resolve) => setTimeout(resolve, 100));
    message = smtp.messages.find((m) => m.envelope.to.includes('sam@client.example'));
  }
  expect(message?.envelope.from).toBe('no-reply@orbit.test');
  expect(message?.headers.from).toContain('Orbit Voice');
  expect(message?.raw).not.toMatch(/voiceplane/i);
});
