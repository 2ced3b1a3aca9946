/**
 * A forgotten password in a real browser (Debian's chromium through playwright-core): "Forgot your
 * password?" on the sign-in page, the request form, the emailed link opened on the portal (its
 * script moves the token from the fragment into the form, under the portal's real Content Security
 * Policy), the new password set, signed in with it, the old one refused, the link refused a second
 * time; the custom-domain portal; the page without scripts and without a token. Every page passes
 * axe-core (no serious or critical violation), names nothing of the platform, and is photographed
 * under test-results/portal/.
 */
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BROWSER_WALK,
  CHROMIUM,
  expectAccessible,
  hasChromium,
  warnWithoutChromium,
} from '../console/helpers.js';
import { createSmtpServer, type TestSmtpServer } from '../emails/smtp.js';
import type { TestApp } from '../support/app.js';
import {
  type Agency,
  addDomain,
  type Client,
  createAgency,
  createClient,
  screenshot,
  startPortalApp,
} from './helpers.js';
import { resetEmailsTo, resetLinkIn, withEmail } from './password-reset-helpers.js';

warnWithoutChromium('portal password reset');

const LOGO_URL = 'https://cdn.brightsmile.example/logo.svg';
const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="168" height="40" viewBox="0 0 168 40">
<rect x="0" y="4" width="32" height="32" rx="9" fill="#0e7490"/><path d="M9 21c3 6 11 6 14 0" stroke="#fff" stroke-width="3" fill="none" stroke-linecap="round"/>
<text x="42" y="27" font-family="Helvetica, Arial, sans-serif" font-size="19" font-weight="700" fill="#0f172a">BrightSmile</text></svg>`;
const CUSTOM_HOST = 'portal.sunbeam.example';
const NEW_PASSWORD = 'a brand new passphrase';

let t: TestApp;
let smtp: TestSmtpServer;
let origin: string;
let port: number;
let browser: Browser | undefined;
let brightsmile: Agency;
let sunbeam: Agency;
let grace: Client;
let hedy: Client;

beforeAll(async () => {
  t = await startPortalApp({ env: { PASSWORD_HASH_MEMORY_KIB: '1024' } });
  smtp = await createSmtpServer();
  await smtp.start();
  brightsmile = await createAgency(t, {
    name: 'BrightSmile Voice',
    color: '#0e7490',
    logoUrl: LOGO_URL,
    supportEmail: 'care@brightsmile.example',
    slug: 'brightsmile',
  });
  sunbeam = await createAgency(t, {
    name: 'Sunbeam Calls',
    color: '#facc15',
    supportEmail: null,
    slug: 'sunbeam',
  });
  await withEmail(t, brightsmile, smtp, 'BrightSmile Voice <hello@brightsmile.example>');
  await withEmail(t, sunbeam, smtp, 'Sunbeam Calls <hello@sunbeam.example>');
  await addDomain(t, sunbeam.tenant.id, CUSTOM_HOST, true);
  grace = await createClient(t, brightsmile, {
    name: 'Grace Hopper',
    includedMinutes: 500,
    planName: 'Practice Pro',
  });
  hedy = await createClient(t, sunbeam, { name: 'Hedy Lamarr', includedMinutes: 0 });
  await t.services.jobRunner.drain();
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  port = typeof address === 'object' && address ? address.port : 0;
  origin = `http://127.0.0.1:${port}`;
  if (hasChromium) {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--headless',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
        `--host-resolver-rules=MAP ${CUSTOM_HOST} 127.0.0.1`,
      ],
    });
  }
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
  await smtp?.stop();
});

/** A context of its own; the logo's CDN answered locally. bypassCSP lets axe-core be injected. */
async function newContext(
  baseURL: string,
  options: {
    viewport?: { width: number; height: number };
    bypassCSP?: boolean;
    javaScriptEnabled?: boolean;
  } = {},
): Promise<BrowserContext> {
  const context = await browser!.newContext({
    viewport: options.viewport ?? { width: 1280, height: 860 },
    baseURL,
    bypassCSP: options.bypassCSP ?? true,
    javaScriptEnabled: options.javaScriptEnabled ?? true,
  });
  await context.route(`${LOGO_URL}*`, (route) =>
    route.fulfill({ status: 200, contentType: 'image/svg+xml', body: LOGO_SVG }),
  );
  return context;
}

async function check(page: Page, name: string) {
  await expectAccessible(page);
  await screenshot(page, name);
  expect(await page.content()).not.toMatch(/voiceplane/i);
  expect(await page.title()).not.toMatch(/voiceplane/i);
}

/** Lets the worker send what is queued, and answers the newest reset link to `email`. */
async function emailedLink(email: string): Promise<URL> {
  await t.services.jobRunner.drain();
  const received = resetEmailsTo(smtp, email);
  expect(received.length).toBeGreaterThan(0);
  return resetLinkIn(received[received.length - 1]);
}

/** The emailed link as this test's server answers it: the same path and fragment on `serverOrigin`. */
const opened = (link: URL, serverOrigin: string) => `${serverOrigin}${link.pathname}${link.hash}`;

async function signIn(page: Page, base: string, email: string, password: string) {
  await page.goto(`${base}/sign-in`);
  await page.getByLabel('Email').fill(email);
  await page.getByLabel('Password').fill(password);
  await page.getByRole('button', { name: 'Sign in' }).click();
}

describe.skipIf(!hasChromium)('a forgotten password in the portal', BROWSER_WALK, () => {
  it('asks for a link, opens it, sets a new password, signs in with it; the link works once', async () => {
    const context = await newContext(origin);
    const page = await context.newPage();
    await page.goto(`${brightsmile.base}/sign-in`);
    await check(page, 'reset-1-sign-in');
    await page.getByRole('link', { name: 'Forgot your password?' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await expect(page.title()).resolves.toBe('Reset your password · BrightSmile Voice');
    await check(page, 'reset-2-request');

    await page.getByLabel('Email').fill(grace.email);
    await page.getByRole('button', { name: 'Send the link' }).click();
    await page.getByRole('heading', { name: 'Check your email' }).waitFor();
    await check(page, 'reset-3-sent');

    const link = await emailedLink(grace.email);
    expect(link.href).toMatch(/^http:\/\/voiceplane\.test\/portal\/brightsmile\/reset-password#token=vpr_/);
    await page.goto(opened(link, origin));
    await page.getByLabel('New password', { exact: true }).waitFor();
    // The token left the address bar (and the history) for the form's hidden field.
    expect(page.url()).toBe(`${origin}${brightsmile.base}/reset-password`);
    await expect(page.locator('#token').inputValue()).resolves.toBe(link.hash.slice('#token='.length));
    await check(page, 'reset-4-form');

    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel('Repeat the new password').fill(`${NEW_PASSWORD}?`);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.getByText('The two passwords differ').waitFor();
    await check(page, 'reset-5-mismatch');

    await page.getByLabel('New password', { exact: true }).fill(NEW_PASSWORD);
    await page.getByLabel('Repeat the new password').fill(NEW_PASSWORD);
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.getByText('Your new password is set, and you are signed out everywhere.').waitFor();
    expect(new URL(page.url()).pathname).toBe(`${brightsmile.base}/sign-in`);
    await check(page, 'reset-6-done');

    await signIn(page, brightsmile.base, grace.email, grace.password);
    await page.getByText('The email or password is incorrect.').waitFor();
    await signIn(page, brightsmile.base, grace.email, NEW_PASSWORD);
    await page.getByRole('heading', { name: 'Welcome, Grace Hopper' }).waitFor();

    // The same link again: the form, then the refusal.
    const again = await context.newPage();
    await again.goto(opened(link, origin));
    await again.getByLabel('New password', { exact: true }).fill('yet another passphrase');
    await again.getByLabel('Repeat the new password').fill('yet another passphrase');
    await again.getByRole('button', { name: 'Set the new password' }).click();
    await again.getByRole('heading', { name: 'This link no longer works' }).waitFor();
    await check(again, 'reset-7-used-link');
    await context.close();
  });

  it('works on the agency’s verified domain under the portal’s own Content Security Policy', async () => {
    const serverOrigin = `http://${CUSTOM_HOST}:${port}`;
    const asking = await newContext(serverOrigin, { viewport: { width: 390, height: 844 } });
    const narrow = await asking.newPage();
    await narrow.goto('/portal/forgot-password');
    await narrow.getByLabel('Email').fill(hedy.email);
    await narrow.getByRole('button', { name: 'Send the link' }).click();
    await narrow.getByRole('heading', { name: 'Check your email' }).waitFor();
    const link = await emailedLink(hedy.email);
    expect(link.href).toMatch(
      new RegExp(`^https://${CUSTOM_HOST.replace(/\./g, '\\.')}/portal/reset-password#token=vpr_`),
    );
    await narrow.goto(opened(link, serverOrigin));
    await narrow.getByLabel('New password', { exact: true }).waitFor();
    await check(narrow, 'reset-8-custom-domain-narrow');
    await asking.close();

    // Without bypassing the CSP: the script is allowed (same origin), nothing is refused.
    const context = await newContext(serverOrigin, { bypassCSP: false });
    const page = await context.newPage();
    const refused: string[] = [];
    page.on('console', (message) => {
      if (/Content Security Policy|Refused/i.test(message.text())) refused.push(message.text());
    });
    await page.goto(opened(link, serverOrigin));
    await page.getByLabel('New password', { exact: true }).fill('sunbeam passphrase');
    await page.getByLabel('Repeat the new password').fill('sunbeam passphrase');
    await page.getByRole('button', { name: 'Set the new password' }).click();
    await page.getByText('Your new password is set').waitFor();
    await signIn(page, '/portal', hedy.email, 'sunbeam passphrase');
    await page.getByRole('heading', { name: 'Welcome, Hedy Lamarr' }).waitFor();
    expect(refused).toEqual([]);
    await context.close();
  });

  it('says what to do without a token in the address, and without scripts', async () => {
    const context = await newContext(origin);
    const page = await context.newPage();
    await page.goto(`${brightsmile.base}/reset-password`);
    await page.getByText('This address lacks the code from your reset link.').waitFor();
    await expect(page.getByLabel('New password', { exact: true }).isVisible()).resolves.toBe(false);
    await check(page, 'reset-9-no-token');
    await page.getByRole('link', { name: 'Ask for a new link' }).click();
    await page.getByRole('heading', { name: 'Reset your password' }).waitFor();
    await context.close();

    const noScripts = await newContext(origin, { javaScriptEnabled: false });
    const plain = await noScripts.newPage();
    await plain.goto(`${brightsmile.base}/reset-password#token=vpr_whatever`);
    // Playwright's text and role engines skip <noscript>: its paragraph is found by CSS.
    const advice = plain.locator('noscript > p.flash-error');
    await expect(advice.isVisible()).resolves.toBe(true);
    await expect(advice.innerText()).resolves.toMatch(
      /^This page needs JavaScript .* write to care@brightsmile\.example\.$/s,
    );
    await expect(plain.getByLabel('New password', { exact: true }).isVisible()).resolves.toBe(false);
    await screenshot(plain, 'reset-10-no-scripts');
    expect(await plain.content()).not.toMatch(/voiceplane/i);
    await noScripts.close();
  });
});
