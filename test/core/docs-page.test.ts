/**
 * /docs in a real browser (Debian's chromium through playwright-core): the reference renders with
 * our name and the getting-started sections, lists every partner operation, fetches nothing from
 * another host, and its "try it" sends a request with a pasted API key that the API answers 200.
 * Screenshots go to test-results/screenshots/ (git-ignored).
 */
import fs from 'node:fs';
import net from 'node:net';
import path from 'node:path';
import { type Browser, chromium } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BROWSER_WALK } from '../console/helpers.js';
import { createTenant, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { ENGINE } from '../support/databases.js';

const CHROMIUM = '/usr/bin/chromium';
// Once, on the embedded database's pass (see test/console/helpers.ts, browserPass).
const hasChromium = ENGINE !== 'postgres' && fs.existsSync(CHROMIUM);
if (!hasChromium)
  console.warn(`core/docs-page: skipping the browser tests (no ${CHROMIUM}, or the PostgreSQL pass)`);
const SCREENSHOTS = path.resolve(import.meta.dirname, '../../test-results/screenshots');

/** A free port, so PUBLIC_BASE_URL (the document's server, where "try it" sends) is this server. */
async function freePort(): Promise<number> {
  const server = net.createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as net.AddressInfo;
  await new Promise((resolve) => server.close(resolve));
  return port;
}

let t: TestApp;
let a: TestTenant;
let browser: Browser;
let origin: string;

beforeAll(async () => {
  if (!hasChromium) return;
  const port = await freePort();
  origin = `http://127.0.0.1:${port}`;
  t = await startTestApp({ env: { PUBLIC_BASE_URL: origin } });
  a = await createTenant(t);
  await t.app.listen({ host: '127.0.0.1', port });
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
    ],
  });
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

describe.skipIf(!hasChromium)('the /docs page in a browser', BROWSER_WALK, () => {
  it('renders our reference offline, lists every operation, and "try it" succeeds with a pasted key', {
    timeout: 120_000,
  }, async () => {
    const page = await browser.newPage({ viewport: { width: 1400, height: 900 } });
    const external: string[] = [];
    // Anything not from this server is refused and recorded: the page must not need it.
    await page.route('**/*', (route) => {
      const url = route.request().url();
      if (url.startsWith(origin) || url.startsWith('data:') || url.startsWith('blob:'))
        return route.continue();
      external.push(url);
      return route.abort();
    });

    await page.goto(`${origin}/docs`);
    await page.getByText('List users').first().waitFor({ timeout: 60_000 });
    expect(await page.title()).toBe('voiceplane API reference');
    await expect.poll(() => page.getByRole('heading', { name: 'voiceplane partner API' }).count()).toBe(1);
    const sections = [
      'Getting started',
      'Authentication',
      'Errors',
      'Idempotency',
      'Pagination',
      'Rate limits',
      'The call-trigger webhook',
    ];
    for (const section of sections)
      expect(
        await page.getByRole('heading', { name: section, exact: true }).count(),
        section,
      ).toBeGreaterThan(0);
    await page.screenshot({ path: path.join(SCREENSHOTS, 'docs-introduction.png') });

    // Every operation of the document is in the sidebar, by its summary.
    const doc = (await t.inject({ method: 'GET', url: '/api/v1/openapi.json' })).body;
    const summaries = Object.values<any>(doc.paths).flatMap((item) =>
      Object.values<any>(item).map((op) => op.summary as string),
    );
    expect(summaries.length).toBeGreaterThanOrEqual(8);
    // One pass over the page's text (a query per summary took minutes with ~150 operations).
    const shown = new Set((await page.locator('body *').allTextContents()).map((text) => text.trim()));
    expect(summaries.filter((summary) => !shown.has(summary))).toEqual([]);

    // A code sample for the operation, and "try it" with the key pasted into the auth field.
    await page.getByPlaceholder('Token').first().fill(a.key);
    await page.getByText('List users', { exact: true }).first().click();
    await expect.poll(() => page.getByText('curl', { exact: false }).count()).toBeGreaterThan(0);
    await page
      .getByRole('button', { name: /Test Request\s*\(get \/api\/v1\/users\)/i })
      .first()
      .click();
    const answered = page.waitForResponse(
      (response) =>
        new URL(response.url()).pathname === '/api/v1/users' && response.request().method() === 'GET',
    );
    // The request panel's button, not a sidebar operation that starts with "Send" too.
    await page
      .getByRole('button', { name: /^Send (Send )?(get request|Request)/i })
      .first()
      .click();
    const response = await answered;
    expect(response.status()).toBe(200);
    expect(response.request().headers().authorization).toBe(`Bearer ${a.key}`);
    expect(await response.json()).toMatchObject({ data: [], pagination: { page: 1, total: 0 } });
    await page.screenshot({ path: path.join(SCREENSHOTS, 'docs-try-it.png') });

    expect(external).toEqual([]);
    await page.close();
  });
});
