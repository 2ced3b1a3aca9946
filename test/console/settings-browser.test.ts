/**
 * The settings pages in a real browser: email settings and a test email that reaches a real SMTP
 * server; an owner inviting a viewer who joins through the emailed link and sees no controls; the
 * TOTP second factor turned on and then asked at sign-in; a webhook endpoint whose secret is shown
 * once and whose deliveries appear after an event. axe and a screenshot on every page.
 */
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { TOTP } from 'otpauth';
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createSmtpServer, type TestSmtpServer } from '../emails/smtp.js';
import { createUser } from '../support/app.js';
import {
  BROWSER_WALK,
  type ConsoleFixture,
  expectAccessible,
  hasChromium,
  launchBrowser,
  newConsoleContext,
  screenshot,
  signedIn,
  startConsole,
  warnWithoutChromium,
} from './helpers.js';

warnWithoutChromium('console/settings');

let f: ConsoleFixture;
let browser: Browser | undefined;
let smtp: TestSmtpServer;
let receiver: http.Server;
const received: string[] = [];

async function until<T>(what: string, probe: () => Promise<T | undefined> | T | undefined): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`timed out waiting for ${what}`);
}

beforeAll(async () => {
  f = await startConsole({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  // Emails and webhook deliveries are jobs: run them as a server process would.
  f.t.services.jobRunner.start();
  smtp = await createSmtpServer();
  await smtp.start();
  receiver = http.createServer((request, response) => {
    let body = '';
    request.on('data', (chunk) => {
      body += chunk;
    });
    request.on('end', () => {
      received.push(body);
      response.writeHead(200).end('ok');
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
  if (hasChromium) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await f?.close();
  await smtp?.stop();
  await new Promise((resolve) => receiver?.close(resolve));
});

async function visit(page: Page, url: string, name: string) {
  await page.goto(url);
  await expectAccessible(page);
  await screenshot(page, name);
}

describe.skipIf(!hasChromium)('settings pages in a browser', BROWSER_WALK, () => {
  it('saves the email settings, and the test email arrives at the SMTP server', async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner);
    await visit(page, '/console/emails', 'emails-empty');
    await page.getByLabel('SMTP URL').fill(smtp.url());
    await page.getByLabel('Sender').fill('Northwind Voice <no-reply@northwind.example>');
    await page.getByRole('button', { name: 'Save settings' }).click();
    await page.getByText('Email settings saved.').waitFor();
    await page.getByRole('button', { name: 'Send test email' }).click();
    await page.getByText(`Test email queued to ${f.owner.email}`).waitFor();
    const message = await until('the test email', () =>
      smtp.messages.find(
        (m) => m.envelope.to.includes(f.owner.email.toLowerCase()) || m.envelope.to.includes(f.owner.email),
      ),
    );
    expect(message.headers.subject).toBe('Test email from Northwind Voice');
    await until('the sent state', async () => {
      await page.reload();
      return (await page.locator('.badge', { hasText: /^sent$/ }).count()) > 0;
    });
    await expectAccessible(page);
    await screenshot(page, 'emails-settings');
    // The password is never shown back; a viewer sees the settings read-only.
    expect(await page.content()).not.toContain('smtp_password" value');
    await context.close();
  });

  it('lets the owner invite a viewer, who joins by the emailed link and sees no controls', async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner);
    await visit(page, '/console/members', 'members-list');
    const email = `new-viewer-${Date.now()}@northwind.example`;
    await page.getByLabel('Email').fill(email);
    await page.getByLabel('Role', { exact: true }).selectOption('viewer');
    await page.getByRole('button', { name: 'Send invitation' }).click();
    await page.getByText(`Invitation sent to ${email}.`).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'members-invited');
    const message = await until('the invitation email', () =>
      smtp.messages.find((m) => m.envelope.to.includes(email)),
    );
    expect(message.headers.subject).toContain('invited you to the Northwind Voice console');
    const link = /http:\/\/voiceplane\.test(\/console\/invitations\/vpi_[A-Za-z0-9]+)/.exec(
      message.text,
    )?.[1];
    expect(link).toBeDefined();
    await context.close();

    const invitee = await newConsoleContext(browser!, f.origin);
    const join = await invitee.newPage();
    await visit(join, link!, 'members-invitation');
    await join.getByLabel('Your name').fill('Vera Viewer');
    await join.getByLabel('Password').fill('viewer password 1');
    await join.getByRole('button', { name: 'Join and sign in' }).click();
    await join.waitForURL((url) => url.pathname === '/console');
    await join.getByText('Welcome! You are signed in to the console.').waitFor();

    for (const [url, forbidden] of [
      ['/console/members', ['Send invitation', 'Change role', 'Remove', 'Revoke']],
      ['/console/webhooks', ['New endpoint']],
      ['/console/emails', ['Save settings', 'Send test email']],
    ] as const) {
      await join.goto(url);
      for (const label of forbidden)
        expect(await join.getByRole('button', { name: label }).count(), `${label} on ${url}`).toBe(0);
      expect(await join.getByRole('link', { name: 'New endpoint' }).count()).toBe(0);
    }
    await join.goto('/console/emails');
    await join.getByText('no-reply@northwind.example').waitFor();
    await screenshot(join, 'emails-viewer');

    // A forged POST with the viewer's own valid CSRF token: 403, nothing changes.
    await join.goto('/console/members');
    const csrf = await join.locator('input[name="_csrf"]').first().getAttribute('value');
    const forged = await join.request.post('/console/members/invitations', {
      form: { _csrf: csrf!, email: 'intruder@evil.example', role: 'owner' },
      maxRedirects: 0,
    });
    expect(forged.status()).toBe(403);
    const pending = await f.t.services.members.listInvitations(f.tenant.id);
    expect(pending.map((i) => i.email)).not.toContain('intruder@evil.example');

    // The link worked once.
    const reuse = await (await newConsoleContext(browser!, f.origin)).newPage();
    await reuse.goto(link!);
    await reuse.getByText('not valid any more').waitFor();
    await invitee.close();
  });

  it('turns TOTP on, and sign-in then asks for the code', async () => {
    const member = await f.addMember('admin');
    const { context, page } = await signedIn(browser!, f.origin, member);
    await visit(page, '/console/account', 'account');
    await page.getByRole('link', { name: 'Turn on two-factor' }).click();
    await expectAccessible(page);
    await screenshot(page, 'account-two-factor');
    const secret = (await page.locator('#totp-secret').textContent())!.trim();
    const totp = new TOTP({ secret, digits: 6, period: 30 });
    await page.getByLabel('Code from your authenticator app').fill(totp.generate());
    await page.getByRole('button', { name: 'Confirm and turn on' }).click();
    await page.getByText('Two-factor authentication is on.').waitFor();
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByText('You are signed out.').waitFor();

    await page.getByLabel('Email').fill(member.email);
    await page.getByLabel('Password').fill(member.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL('**/console/sign-in/two-factor**');
    const right = totp.generate();
    const wrong = String((Number(right) + 500_000) % 1_000_000).padStart(6, '0');
    await page.getByLabel('Authentication code').fill(wrong);
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.getByText('That code is not valid.').waitFor();
    await page.getByLabel('Authentication code').fill(totp.generate());
    await page.getByRole('button', { name: 'Verify' }).click();
    await page.waitForURL((url) => url.pathname === '/console');
    await page.goto('/console/members');
    const row = page.locator('tr', { hasText: member.email });
    await row.getByText('On').waitFor();
    await context.close();
  });

  it('creates a webhook endpoint, shows its secret once, and lists a delivery after an event', {
    timeout: 90_000,
  }, async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner);
    await visit(page, '/console/webhooks', 'webhooks-empty');
    await page.getByRole('link', { name: 'New endpoint' }).first().click();
    await expectAccessible(page);
    await screenshot(page, 'webhooks-new');
    const port = (receiver.address() as AddressInfo).port;
    await page.getByLabel('URL').fill(`http://127.0.0.1:${port}/hooks`);
    await page.getByLabel('Description').fill('CRM sync');
    await page.getByRole('button', { name: 'Create endpoint' }).click();
    const secret = (await page.locator('#signing-secret').textContent())!.trim();
    expect(secret).toMatch(/^whsec_/);
    await expectAccessible(page);
    await screenshot(page, 'webhooks-created');
    await page.getByRole('link', { name: 'I have copied it: continue' }).click();
    await page.waitForURL(/\/console\/webhooks\/we_/);
    expect(await page.content()).not.toContain(secret);

    const user = await createUser(f.tenant);
    await until('the delivery', async () => {
      await page.reload();
      return (
        (await page
          .locator('tbody tr', { hasText: 'user.created' })
          .locator('.badge', { hasText: 'succeeded' })
          .count()) > 0
      );
    });
    expect(received.some((body) => body.includes(user.id))).toBe(true);
    const row = page.locator('tbody tr', { hasText: 'user.created' });
    await row.getByText('200').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'webhooks-detail');
    await page.goto('/console/webhooks');
    await page.getByText('CRM sync').waitFor();
    await screenshot(page, 'webhooks-list');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'webhooks-list-narrow');
    await context.close();
  });
});
