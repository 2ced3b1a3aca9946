/**
 * The client portal in a real browser (Debian's chromium through playwright-core): a client signs
 * in on /portal/{slug}, sees their minutes and plan, edits and publishes their agent, filters
 * their calls and opens one with its transcript; another agency's portal on its own verified
 * domain, with a light brand colour and no logo. Every page passes axe-core (no serious or
 * critical violation) and is photographed under test-results/portal/.
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
import type { TestApp } from '../support/app.js';
import {
  type Agency,
  addDomain,
  type Client,
  createAgency,
  createAgent,
  createClient,
  placeCall,
  screenshot,
  startPortalApp,
} from './helpers.js';

warnWithoutChromium('portal');

const LOGO_URL = 'https://cdn.brightsmile.example/logo.svg';
const LOGO_SVG = `<svg xmlns="http://www.w3.org/2000/svg" width="168" height="40" viewBox="0 0 168 40">
<rect x="0" y="4" width="32" height="32" rx="9" fill="#0e7490"/><path d="M9 21c3 6 11 6 14 0" stroke="#fff" stroke-width="3" fill="none" stroke-linecap="round"/>
<text x="42" y="27" font-family="Helvetica, Arial, sans-serif" font-size="19" font-weight="700" fill="#0f172a">BrightSmile</text></svg>`;
const CUSTOM_HOST = 'portal.sunbeam.example';

let t: TestApp;
let origin: string;
let port: number;
let browser: Browser | undefined;
let brightsmile: Agency;
let sunbeam: Agency;
let grace: Client;
let hedy: Client;
let agent: { id: string; webhook_id: string };
let answeredCall: string;

beforeAll(async () => {
  t = await startPortalApp({ env: { PASSWORD_HASH_MEMORY_KIB: '1024' } });
  t.services.jobRunner.start();
  brightsmile = await createAgency(t, {
    name: 'BrightSmile Voice',
    color: '#0e7490',
    logoUrl: LOGO_URL,
    supportEmail: 'care@brightsmile.example',
    slug: 'brightsmile',
  });
  // A light brand colour: text on it and links in it must still read.
  sunbeam = await createAgency(t, {
    name: 'Sunbeam Calls',
    color: '#facc15',
    supportEmail: null,
    slug: 'sunbeam',
  });
  await addDomain(t, sunbeam.tenant.id, CUSTOM_HOST, true);
  grace = await createClient(t, brightsmile, {
    name: 'Grace Hopper',
    includedMinutes: 500,
    planName: 'Practice Pro',
  });
  hedy = await createClient(t, sunbeam, { name: 'Hedy Lamarr', includedMinutes: 0 });
  agent = await createAgent(t, brightsmile, grace.id, { name: 'Front desk' });
  await createAgent(t, brightsmile, grace.id, { name: 'Recall reminders', publish: false });
  answeredCall = await placeCall(t, agent, '+14155550123', 'Ada Lovelace');
  await placeCall(t, agent, '+14155550000', 'Charles Babbage');
  await placeCall(t, agent, '+14155559999', 'Mary Somerville');
  await placeCall(t, agent, '+14155550188', 'Emmy Noether');
  // What a voice engine reports for an answered call (the simulated carrier has no words).
  await t.services.database.db
    .updateTable('calls')
    .set({
      transcript:
        'Agent: Hello Ada, this is the front desk at BrightSmile Dental.\nAda: Hi! I wanted to book a check-up.\nAgent: Of course. Does Tuesday at 10 work for you?\nAda: Perfect, thank you.',
      recording_url: 'https://recordings.brightsmile.example/call-1.mp3',
    })
    .where('id', '=', answeredCall)
    .execute();
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
        // The agency's custom domain, pointed at this test's server as its DNS would.
        `--host-resolver-rules=MAP ${CUSTOM_HOST} 127.0.0.1`,
      ],
    });
  }
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

/** A context of its own; the logo's CDN answered locally. bypassCSP lets axe-core be injected. */
async function newContext(
  baseURL: string,
  options: { viewport?: { width: number; height: number }; bypassCSP?: boolean } = {},
): Promise<BrowserContext> {
  const context = await browser!.newContext({
    viewport: options.viewport ?? { width: 1280, height: 860 },
    baseURL,
    bypassCSP: options.bypassCSP ?? true,
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

async function signIn(page: Page, base: string, client: Client) {
  await page.goto(base);
  await page.waitForURL(/\/sign-in/);
  await page.getByLabel('Email').fill(client.email);
  await page.getByLabel('Password').fill(client.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.endsWith('/sign-in'));
}

describe.skipIf(!hasChromium)('the portal in a browser', BROWSER_WALK, () => {
  it('signs in on /portal/{slug} and shows the minutes, the plan and the latest calls', async () => {
    const context = await newContext(origin);
    const page = await context.newPage();
    await page.goto(`${brightsmile.base}/sign-in`);
    await expect(page.title()).resolves.toBe('Sign in · BrightSmile Voice');
    await check(page, 'sign-in');

    await page.getByLabel('Email').fill(grace.email);
    await page.getByLabel('Password').fill('wrong password');
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByText('The email or password is incorrect.').waitFor();
    await check(page, 'sign-in-refused');

    await signIn(page, brightsmile.base, grace);
    await page.getByRole('heading', { name: 'Welcome, Grace Hopper' }).waitFor();
    const minutesCard = page.locator('section', { has: page.getByRole('heading', { name: 'Minutes left' }) });
    await expect(minutesCard.locator('.stat-value').textContent()).resolves.toBe('498');
    await expect(page.getByText('Practice Pro').first().isVisible()).resolves.toBe(true);
    await expect(
      page.getByRole('link', { name: 'care@brightsmile.example' }).first().isVisible(),
    ).resolves.toBe(true);
    await check(page, 'overview');

    const narrow = await context.newPage();
    await narrow.setViewportSize({ width: 390, height: 844 });
    await narrow.goto(brightsmile.base);
    await check(narrow, 'overview-narrow');
    await context.close();
  });

  it('shows the logo through the Content Security Policy the portal sends', async () => {
    const context = await newContext(origin, { bypassCSP: false });
    const page = await context.newPage();
    await page.goto(`${brightsmile.base}/sign-in`);
    const logo = page.locator('img.brand-logo');
    await logo.waitFor();
    await expect
      .poll(() => logo.evaluate((image) => (image as unknown as { naturalWidth: number }).naturalWidth))
      .toBeGreaterThan(0);
    await context.close();
  });

  it('edits the agent’s draft, is told what is wrong, and publishes it', async () => {
    const context = await newContext(origin);
    const page = await context.newPage();
    await signIn(page, brightsmile.base, grace);
    await page.getByRole('link', { name: 'Agents', exact: true }).click();
    await page.getByRole('heading', { name: 'Agents' }).waitFor();
    await check(page, 'agents');

    await page.getByRole('link', { name: 'Front desk' }).click();
    await page.getByRole('heading', { name: 'Edit the draft' }).waitFor();
    await check(page, 'agent');

    await page.getByLabel('Caller ID').fill('415 555 0111');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByText('The draft was not saved').waitFor();
    await check(page, 'agent-refused');

    await page.getByLabel('Caller ID').fill('+14155550111');
    await page.getByLabel('Welcome message').fill('Good morning {name}, BrightSmile Dental here.');
    await page
      .getByLabel('Prompt')
      .fill(
        'You are the friendly front desk of BrightSmile Dental. Offer {name} the next free check-up slot and confirm it.',
      );
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByText('Draft saved. Publish it to use it for calls.').waitFor();
    await expect(page.getByText('unpublished changes').isVisible()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Publish version 2' }).click();
    await page.getByText('Published version 2: calls use it from now on.').waitFor();
    await expect(page.getByRole('cell', { name: /Version 1/ }).isVisible()).resolves.toBe(true);
    await check(page, 'agent-published');
    // On a phone: one column, the row editors scroll in their own labelled regions.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await check(page, 'agent-narrow');
    const wide = await page.evaluate(() => {
      const root = (
        globalThis as unknown as {
          document: { documentElement: { scrollWidth: number; clientWidth: number } };
        }
      ).document.documentElement;
      return root.scrollWidth - root.clientWidth;
    });
    expect(wide).toBeLessThanOrEqual(0);

    const published = await brightsmile.tenant.request('GET', `/api/v1/agents/${agent.id}`);
    expect(published.body.data).toMatchObject({ published_version: 2, phone_number: '+14155550111' });
    await context.close();
  });

  it('filters the calls by outcome and opens one with its timeline and transcript', async () => {
    const context = await newContext(origin);
    const page = await context.newPage();
    await signIn(page, brightsmile.base, grace);
    await page.getByRole('link', { name: 'Calls', exact: true }).click();
    await page.getByRole('heading', { name: 'Calls' }).waitFor();
    await check(page, 'calls');

    await page.getByLabel('Outcome').selectOption('no_answer');
    await page.getByRole('button', { name: 'Show calls' }).click();
    await page.waitForURL(/status=no_answer/);
    await expect(page.getByText('+14155550000').isVisible()).resolves.toBe(true);
    await expect(page.getByText('+14155550123').count()).resolves.toBe(0);
    await check(page, 'calls-filtered');

    await page.getByRole('link', { name: 'Clear' }).click();
    await page.getByRole('link', { name: '+14155550123' }).click();
    await page.getByRole('heading', { name: 'Timeline' }).waitFor();
    await expect(page.getByText('I wanted to book a check-up').isVisible()).resolves.toBe(true);
    await expect(page.locator('audio[controls]').isVisible()).resolves.toBe(true);
    await expect(page.getByRole('link', { name: 'Download the recording' }).isVisible()).resolves.toBe(true);
    await check(page, 'call');
    await page.setViewportSize({ width: 390, height: 844 });
    await page.reload();
    await check(page, 'call-narrow');
    await context.close();
  });

  it('serves another agency on its own verified domain, readable in a light colour, without a logo', async () => {
    const context = await newContext(`http://${CUSTOM_HOST}:${port}`);
    const page = await context.newPage();
    await page.goto('/portal/sign-in');
    await expect(page.title()).resolves.toBe('Sign in · Sunbeam Calls');
    await check(page, 'custom-domain-sign-in');
    await signIn(page, '/portal', hedy);
    await page.getByRole('heading', { name: 'Welcome, Hedy Lamarr' }).waitFor();
    await expect(page.getByText('To buy more minutes, contact Sunbeam Calls.').isVisible()).resolves.toBe(
      true,
    );
    await check(page, 'custom-domain-overview');
    await page.goto('/portal/agents');
    await check(page, 'custom-domain-agents-empty');
    await page.goto('/portal/calls/call_nope');
    await page.getByRole('heading', { name: 'Page not found' }).waitFor();
    await check(page, 'custom-domain-not-found');
    await context.close();
  });

  it('answers an unknown portal with a page that names nobody', async () => {
    const context = await newContext(origin);
    const page = await context.newPage();
    const response = await page.goto('/portal/nobody-here');
    expect(response?.status()).toBe(404);
    await check(page, 'unknown-portal');
    await context.close();
  });
});
