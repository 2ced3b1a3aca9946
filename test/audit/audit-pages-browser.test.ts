/**
 * The audit log pages in a real browser at 1366 and 390 px (axe, a screenshot each, no page wider
 * than the screen): an agency owner sees their tenant's entries and never another tenant's, and
 * narrows them by actor, action, object and date; a viewer has neither the page nor its menu item;
 * operator staff see every tenant's entries and narrow them by tenant.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
} from '../console/helpers.js';
import { addStaff, codeOf, type TestStaff } from '../operator/console-helpers.js';
import { createTenant, createUser, type TestTenant } from '../support/app.js';

warnWithoutChromium('audit pages');

let f: ConsoleFixture;
let globex: TestTenant;
let browser: Browser | undefined;
let staff: TestStaff;
let ours: { id: string };
let theirs: { id: string };
const VIEWPORTS = [
  [1366, ''],
  [390, '-narrow'],
] as const;

beforeAll(async () => {
  f = await startConsole({ tenantName: 'Northwind Voice' });
  globex = await createTenant(f.t, { name: 'Globex' });
  ours = await createUser(f.tenant, { name: 'Ada Northwind' });
  await f.tenant.request('POST', '/api/v1/do-not-call', { phone_number: '+14155550142' });
  theirs = await createUser(globex, { name: 'Hank Globex' });
  staff = await addStaff(f.t, 'support');
  if (hasChromium) browser = await launchBrowser();
}, 120_000);
afterAll(async () => {
  await browser?.close();
  await f?.close();
});

async function notWiderThanTheScreen(page: Page, width: number) {
  const scrollWidth = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth);
  expect(scrollWidth).toBeLessThanOrEqual(width);
}

const rowsText = (page: Page) => page.locator('table tbody').innerText();

describe.skipIf(!hasChromium)('the audit log pages in a browser', BROWSER_WALK, () => {
  it('an owner sees the tenant’s entries, filters them, and never sees another tenant’s', {
    timeout: 240_000,
  }, async () => {
    for (const [width, suffix] of VIEWPORTS) {
      const { context, page } = await signedIn(browser!, f.origin, f.owner, { width, height: 900 });
      await page.goto('/console/audit');
      await expectAccessible(page);
      await notWiderThanTheScreen(page, width);
      await screenshot(page, `audit-console${suffix}`);
      const all = await rowsText(page);
      expect(all).toContain(ours.id);
      expect(all).toContain('do_not_call.added');
      expect(all).not.toContain(theirs.id);
      expect(await page.content()).not.toContain(globex.id);

      await page.getByLabel('Action', { exact: true }).fill('user.created');
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/action=user\.created/);
      const filtered = await rowsText(page);
      expect(filtered).toContain(ours.id);
      expect(filtered).not.toContain('do_not_call.added');

      await page.getByLabel('Object id').fill(ours.id);
      await page.getByLabel('Actor id').fill(f.tenant.keyId);
      await page.getByLabel('Actor kind').selectOption('api_key');
      const today = new Date().toISOString().slice(0, 10);
      await page.getByLabel('From', { exact: true }).fill(today);
      await page.getByLabel('To', { exact: true }).fill(today);
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/object_id=/);
      expect(await page.locator('table tbody tr').count()).toBe(1);

      // Yesterday holds nothing: the empty state says so.
      const yesterday = new Date(Date.now() - 86_400_000).toISOString().slice(0, 10);
      await page.goto(`/console/audit?from=${yesterday}&to=${yesterday}`);
      expect(await page.getByRole('heading', { name: 'No entries match' }).isVisible()).toBe(true);
      await expectAccessible(page);

      // A date that is not one is named beside its field.
      await page.goto('/console/audit?from=31/12/2026');
      expect(await page.getByText('must be a date').isVisible()).toBe(true);
      await context.close();
    }
  });

  it('a viewer has neither the page nor its menu item', async () => {
    const viewer = await f.addMember('viewer');
    const { context, page } = await signedIn(browser!, f.origin, viewer);
    await page.goto('/console');
    expect(await page.getByRole('link', { name: 'Audit log' }).count()).toBe(0);
    const answer = await page.goto('/console/audit');
    expect(answer?.status()).toBe(403);
    await context.close();
  });

  it('operator staff see every tenant’s entries and filter by tenant', { timeout: 240_000 }, async () => {
    let offset = -1;
    for (const [width, suffix] of VIEWPORTS) {
      const context = await newConsoleContext(browser!, f.origin, { width, height: 900 });
      const page = await context.newPage();
      await page.goto('/operator/sign-in');
      await page.getByLabel('Email').fill(staff.email);
      await page.getByLabel('Password').fill(staff.password);
      await page.getByLabel('Authentication code').fill(codeOf(staff.secret, offset++));
      await page.getByRole('button', { name: 'Sign in' }).click();
      await page.waitForURL((url) => !url.pathname.startsWith('/operator/sign-in'));

      await page.goto('/operator/audit');
      await expectAccessible(page);
      await notWiderThanTheScreen(page, width);
      await screenshot(page, `audit-operator${suffix}`);
      const all = await rowsText(page);
      expect(all).toContain(ours.id);
      expect(all).toContain(theirs.id);
      expect(all).toContain('tenant.created');
      // Each entry names its tenant, linked to the tenant's page.
      const globexLink = page
        .locator('table tbody')
        .getByRole('link', { name: 'Globex', exact: true })
        .first();
      expect(await globexLink.getAttribute('href')).toBe(`/operator/tenants/${globex.id}`);
      expect(all).toContain('Northwind Voice');

      await page.getByLabel('Tenant id').fill(globex.id);
      await page.getByRole('button', { name: 'Filter' }).click();
      await page.waitForURL(/tenant_id=/);
      const filtered = await rowsText(page);
      expect(filtered).toContain(theirs.id);
      expect(filtered).not.toContain(ours.id);
      await context.close();
    }
  });
});
