/**
 * The console in a real browser: Debian's chromium through playwright-core (no browser
 * downloads), axe-core injected into each page, screenshots under test-results/console/
 * (git-ignored) for a reviewer to look at. Without chromium the browser suites skip with a message.
 */
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { type Browser, type BrowserContext, chromium, type Page } from 'playwright-core';
import { expect } from 'vitest';
import {
  createTenant,
  startTestApp,
  type TestApp,
  type TestAppOptions,
  type TestTenant,
} from '../support/app.js';
import { ENGINE } from '../support/databases.js';

export const CHROMIUM = '/usr/bin/chromium';
/**
 * The browser flows run once, on the embedded database's pass: pages are the same whatever the
 * database, and the PostgreSQL pass (TEST_DATABASE=postgres) covers the same pages over HTTP, so
 * running them twice only lengthened the suite.
 */
export const browserPass = ENGINE !== 'postgres';
export const hasChromium = browserPass && fs.existsSync(CHROMIUM);
/**
 * A browser test walks several pages, each checked by axe-core and photographed: on a loaded
 * two-core machine (the other test worker running a browser too) one walk has taken over 30 s,
 * the suite's default. The limit guards against a hang; it is not a speed target.
 */
export const BROWSER_WALK = { timeout: 180_000 };
const SCREENSHOTS = path.resolve(import.meta.dirname, '../../test-results/console');
const AXE_PATH = createRequire(import.meta.url).resolve('axe-core');

export function warnWithoutChromium(suite: string): void {
  if (!browserPass) console.warn(`${suite}: the browser tests run on the embedded database's pass only`);
  else if (!hasChromium)
    console.warn(`${suite}: skipping the browser tests, no ${CHROMIUM} (apt-get install chromium)`);
}

export const OWNER_PASSWORD = 'owner password 123';

export interface ConsoleFixture {
  t: TestApp;
  tenant: TestTenant;
  origin: string;
  owner: { id: string; email: string; password: string };
  /** Adds a member with a password through the operator API. */
  addMember(
    role: 'owner' | 'admin' | 'viewer',
    email?: string,
  ): Promise<{ id: string; email: string; password: string }>;
  close(): Promise<void>;
}

let memberCounter = 0;

/** The real app listening on a free port, with a tenant, an API key and an owner who can sign in. */
export async function startConsole(
  options: TestAppOptions & { tenantName?: string } = {},
): Promise<ConsoleFixture> {
  const t = await startTestApp({ ...options, env: { PASSWORD_HASH_MEMORY_KIB: '1024', ...options.env } });
  const tenant = await createTenant(t, { name: options.tenantName ?? 'Northwind Voice' });
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  const origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  const addMember = async (role: 'owner' | 'admin' | 'viewer', email?: string) => {
    memberCounter++;
    const chosen = email ?? `${role}${memberCounter}-${Date.now()}@northwind.example`;
    const created = await t.admin('POST', `/admin/v1/tenants/${tenant.id}/members`, {
      email: chosen,
      password: OWNER_PASSWORD,
      role,
      name: `${role[0].toUpperCase()}${role.slice(1)} ${memberCounter}`,
    });
    if (created.status !== 201) throw new Error(`member: ${created.raw}`);
    return { id: created.body.data.id as string, email: chosen, password: OWNER_PASSWORD };
  };
  const owner = await addMember('owner');
  return { t, tenant, origin, owner, addMember, close: () => t.close() };
}

export async function launchBrowser(): Promise<Browser> {
  fs.mkdirSync(SCREENSHOTS, { recursive: true });
  return chromium.launch({
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
}

/**
 * A browser context of its own (cookies), on the console's origin. bypassCSP lets axe-core be
 * injected; the console's own Content Security Policy is asserted over HTTP instead.
 */
export function newConsoleContext(browser: Browser, origin: string, viewport = { width: 1360, height: 900 }) {
  return browser.newContext({ viewport, baseURL: origin, bypassCSP: true });
}

/** A fresh browser context (its own cookies) signed in as the member. */
export async function signedIn(
  browser: Browser,
  origin: string,
  member: { email: string; password: string },
  viewport = { width: 1360, height: 900 },
): Promise<{ context: BrowserContext; page: Page }> {
  const context = await newConsoleContext(browser, origin, viewport);
  const page = await context.newPage();
  await page.goto('/console/sign-in');
  await page.getByLabel('Email').fill(member.email);
  await page.getByLabel('Password').fill(member.password);
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/console/sign-in'));
  return { context, page };
}

/** axe-core on the current page: no serious or critical violation. */
export async function expectAccessible(page: Page): Promise<void> {
  await page.addScriptTag({ path: AXE_PATH });
  const violations = await page.evaluate(async () => {
    // axe is injected into the page at run time; this function runs there, not in Node.
    const page = globalThis as unknown as {
      axe: { run(context: unknown, options: object): Promise<any> };
      document: unknown;
    };
    const result = await page.axe.run(page.document, { resultTypes: ['violations'] });
    return result.violations
      .filter((v: { impact: string }) => v.impact === 'serious' || v.impact === 'critical')
      .map((v: { id: string; impact: string; help: string; nodes: { target: string[] }[] }) => ({
        id: v.id,
        impact: v.impact,
        help: v.help,
        targets: v.nodes.slice(0, 3).map((n) => n.target.join(' ')),
      }));
  });
  expect(violations, `axe on ${page.url()}`).toEqual([]);
}

/** Writes test-results/console/<name>.png (full page). */
export async function screenshot(page: Page, name: string): Promise<void> {
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}
