/**
 * Every page of the console and of the client portal on a phone: the walk starts at the overview
 * and follows every link the pages offer (lists, then one of each kind of detail page), so a page
 * added later is walked too. At 390 and 360 px no page is wider than the screen (tables scroll in
 * their own focusable region), and at 390 px axe finds nothing serious; the menu button opens the
 * navigation. Screenshots of each page at 390 px go to test-results/console/narrow-*.png.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Agency, Client } from '../portal/helpers.js';
import { createAgent, createClient, placeCall } from '../portal/helpers.js';
import {
  type ConsoleFixture,
  expectAccessible,
  hasChromium,
  launchBrowser,
  screenshot,
  signedIn,
  startConsole,
  warnWithoutChromium,
} from './helpers.js';

warnWithoutChromium('console/narrow-screens');

let f: ConsoleFixture;
let browser: Browser | undefined;
let agency: Agency;
let client: Client;

const PHONE_WIDTHS = [390, 360];

beforeAll(async () => {
  f = await startConsole({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  f.t.services.jobRunner.start();
  await f.t.services.branding.update(f.tenant.id, {
    slug: 'northwind',
    brand_name: 'Northwind Voice',
    primary_color: '#0f766e',
    support_email: 'help@northwind.example',
    logo_url: null,
  });
  const endpoint = await f.tenant.request('POST', '/api/v1/webhook-endpoints', {
    url: 'http://127.0.0.1:9/hooks/voice-events-with-a-long-path',
    events: ['*'],
  });
  expect(endpoint.status).toBe(201);
  agency = { tenant: f.tenant, slug: 'northwind', base: '/portal/northwind' };
  client = await createClient(f.t, agency, { name: 'Grace Hopper', planName: 'Practice Pro' });
  const agent = await createAgent(f.t, agency, client.id, { name: 'Front desk' });
  await placeCall(f.t, agent, '+14155550123', 'Ada Lovelace');
  await placeCall(f.t, agent, '+14155550188', 'Emmy Noether');
  const blocked = await f.tenant.request('POST', '/api/v1/do-not-call', { phone_number: '+14155550999' });
  expect(blocked.status).toBe(201);
  await f.addMember('viewer', `viewer-with-a-rather-long-address-${Date.now()}@northwind-voice.example`);
  if (hasChromium) browser = await launchBrowser();
}, 300_000);
afterAll(async () => {
  await browser?.close();
  await f?.close();
});

/** `/console/users/usr_abc` → `/console/users/:id`: one visit for each kind of page. */
function kindOf(path: string): string {
  return path
    .split('/')
    .map((segment) =>
      /^[a-z]{2,5}_[A-Za-z0-9]+$/.test(segment) || /^\+\d+$/.test(segment) ? ':id' : segment,
    )
    .join('/');
}

/** Same-origin links under `root` that lead to a page (not a download, not a sign-out). */
async function pageLinks(page: Page, root: string): Promise<string[]> {
  const hrefs = await page.$$eval('a[href]', (links) => links.map((link) => link.getAttribute('href') ?? ''));
  return hrefs
    .map((href) => new URL(href, page.url()))
    .filter((url) => url.origin === new URL(page.url()).origin && url.pathname.startsWith(root))
    .filter(
      (url) =>
        !/\.(csv|json|css|js|svg|png)$/.test(url.pathname) && !/sign-out|\/assets\//.test(url.pathname),
    )
    .map((url) => url.pathname + url.search);
}

async function expectFitsTheScreen(page: Page, width: number): Promise<void> {
  // Runs in the page: `document` is the browser's.
  const scrollWidth = await page.evaluate(
    () =>
      (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
        .documentElement.scrollWidth,
  );
  expect(scrollWidth, `${page.url()} at ${width} px is ${scrollWidth} px wide`).toBeLessThanOrEqual(width);
}

/** Walks every kind of page reachable from `start`, checking it at each phone width. */
async function walk(page: Page, start: string, root: string, name: string): Promise<Set<string>> {
  const seen = new Set<string>();
  const problems: string[] = [];
  const queue = [start];
  while (queue.length > 0) {
    const next = queue.shift() as string;
    const kind = kindOf(next.split('?')[0]);
    if (seen.has(kind)) continue;
    seen.add(kind);
    const response = await page.goto(next);
    expect(response?.status(), next).toBeLessThan(400);
    // Narrowest first; axe at 390 px only (what it checks does not change between 390 and 360).
    for (const width of [...PHONE_WIDTHS].reverse()) {
      await page.setViewportSize({ width, height: 800 });
      const checks = [() => expectFitsTheScreen(page, width)];
      if (width === PHONE_WIDTHS[0]) checks.push(() => expectAccessible(page));
      for (const check of checks) {
        await check().catch((error: Error) => problems.push(`${width} px: ${error.message.slice(0, 600)}`));
      }
    }
    await screenshot(page, `narrow-${name}${kind.slice(root.length).replace(/[/:]+/g, '-') || '-home'}`);
    queue.push(...(await pageLinks(page, root)));
  }
  expect(problems).toEqual([]);
  return seen;
}

describe.skipIf(!hasChromium)('phones', { timeout: 600_000 }, () => {
  it('walks every console page: none wider than the screen, nothing serious for axe', async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner, { width: 390, height: 800 });
    const seen = await walk(page, '/console', '/console', 'console');
    for (const kind of [
      '/console',
      '/console/users',
      '/console/users/:id',
      '/console/plans/:id',
      '/console/agents/:id',
      '/console/calls/:id',
      '/console/webhooks/:id',
      '/console/api-keys',
      '/console/members',
      '/console/branding',
    ]) {
      expect(seen, `the walk reached ${kind}`).toContain(kind);
    }
    await context.close();
  });

  it('opens the console navigation from its menu button', async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner, { width: 390, height: 800 });
    await page.goto('/console/calls');
    const users = page.getByRole('link', { name: 'Users', exact: true });
    await expect(users.isVisible()).resolves.toBe(false);
    const menu = page.locator('summary', { hasText: 'Menu' });
    await expect(page.locator('details.menu').getAttribute('open')).resolves.toBeNull();
    await menu.click();
    await users.waitFor({ state: 'visible' });
    await expect(page.locator('details.menu').getAttribute('open')).resolves.not.toBeNull();
    await page.keyboard.press('Escape');
    await users.waitFor({ state: 'hidden' });
    await menu.click();
    await expectAccessible(page);
    await screenshot(page, 'narrow-console-menu-open');
    await users.click();
    await page.waitForURL('**/console/users');
    await page.setViewportSize({ width: 1366, height: 900 });
    await expect(page.locator('summary', { hasText: 'Menu' }).isVisible()).resolves.toBe(false);
    await expect(page.getByRole('link', { name: 'Calls', exact: true }).isVisible()).resolves.toBe(true);
    await context.close();
  });

  it('walks every portal page and opens its menu', async () => {
    const context = await browser!.newContext({
      viewport: { width: 390, height: 800 },
      baseURL: f.origin,
      bypassCSP: true,
    });
    const page = await context.newPage();
    await page.goto(`${agency.base}/sign-in`);
    await expectFitsTheScreen(page, 390);
    await expectAccessible(page);
    await page.getByLabel('Email').fill(client.email);
    await page.getByLabel('Password').fill(client.password);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.waitForURL((url) => !url.pathname.endsWith('/sign-in'));
    const seen = await walk(page, agency.base, agency.base, 'portal');
    for (const path of ['', '/agents', '/agents/:id', '/calls', '/calls/:id', '/top-ups']) {
      expect(seen, `the walk reached ${path}`).toContain(`${agency.base}${path}`);
    }

    await page.goto(agency.base);
    const calls = page.getByRole('link', { name: 'Calls', exact: true });
    await expect(calls.isVisible()).resolves.toBe(false);
    await page.locator('summary', { hasText: 'Menu' }).click();
    await calls.waitFor({ state: 'visible' });
    await expectAccessible(page);
    await screenshot(page, 'narrow-portal-menu-open');
    await context.close();
  });
});
