/**
 * The operator console's phone numbers page in a real browser: an admin imports a number, filters
 * the list, reassigns the number and releases it (accepting each confirmation); the page passes axe
 * (no serious or critical violation) at 1366 and 390 px, empty and full, and is screenshot under
 * test-results/console/operator-phone-numbers*.png.
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
  startConsole,
  warnWithoutChromium,
} from '../console/helpers.js';
import { addStaff, codeOf, type TestStaff } from './console-helpers.js';

warnWithoutChromium('operator/phone-numbers');

let f: ConsoleFixture;
let browser: Browser | undefined;
let admin: TestStaff;
let other: string;

beforeAll(async () => {
  f = await startConsole({ tenantName: 'Northwind Voice' });
  admin = await addStaff(f.t, 'admin');
  other = (await f.t.admin('POST', '/admin/v1/tenants', { name: 'Contoso Calls' })).body.data.id;
  if (hasChromium) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await f?.close();
});

async function signIn(page: Page, offset: number) {
  await page.goto('/operator/sign-in');
  await page.getByLabel('Email').fill(admin.email);
  await page.getByLabel('Password').fill(admin.password);
  await page.getByLabel('Authentication code').fill(codeOf(admin.secret, offset));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/operator/sign-in'));
}

describe.skipIf(!hasChromium)('the phone numbers page in a browser', BROWSER_WALK, () => {
  it('imports, filters, reassigns and releases, accessible at 1366 and 390 px', {
    timeout: 240_000,
  }, async () => {
    const context = await newConsoleContext(browser!, f.origin, { width: 1366, height: 900 });
    const page = await context.newPage();
    page.on('dialog', (dialog) => dialog.accept());
    await signIn(page, -1);
    await page.getByRole('link', { name: 'Phone numbers' }).click();
    await page.getByText('No phone numbers yet').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'operator-phone-numbers-empty');

    await page.getByLabel('Phone number', { exact: true }).fill('4155550100');
    await page.getByLabel('Tenant id', { exact: true }).last().fill(f.tenant.id);
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('must match').or(page.getByText('E.164')).first().waitFor();
    await expectAccessible(page);
    await screenshot(page, 'operator-phone-numbers-refused');

    await page.getByLabel('Phone number', { exact: true }).fill('+14155550100');
    await page.getByRole('button', { name: 'Import' }).click();
    await page.getByText('Imported +14155550100 for Northwind Voice.').waitFor();
    await f.t.admin('POST', '/admin/v1/phone-numbers', { phone_number: '+14155550101', tenant_id: other });
    await page.goto(`/operator/phone-numbers?tenant_id=${other}`);
    expect(await page.getByRole('cell', { name: '+14155550101', exact: true }).count()).toBe(1);
    expect(await page.getByRole('cell', { name: '+14155550100', exact: true }).count()).toBe(0);
    await page.goto('/operator/phone-numbers');
    await expectAccessible(page);
    await screenshot(page, 'operator-phone-numbers');

    await page.getByLabel('New tenant for +14155550100').fill(other);
    await page
      .getByRole('row', { name: /\+14155550100/ })
      .getByRole('button', { name: 'Reassign' })
      .click();
    await page.getByText('+14155550100 now belongs to Contoso Calls.').waitFor();
    expect((await f.t.admin('GET', '/admin/v1/phone-numbers/%2B14155550100')).body.data.tenant_id).toBe(
      other,
    );

    await page
      .getByRole('row', { name: /\+14155550101/ })
      .getByRole('button', { name: 'Release' })
      .click();
    await page.getByText('+14155550101 is released').waitFor();
    expect((await f.t.admin('GET', '/admin/v1/phone-numbers/%2B14155550101')).status).toBe(404);
    await context.close();

    const narrow = await newConsoleContext(browser!, f.origin, { width: 390, height: 900 });
    const small = await narrow.newPage();
    await signIn(small, 0);
    await small.goto('/operator/phone-numbers');
    await expectAccessible(small);
    await screenshot(small, 'operator-phone-numbers-narrow');
    const overflow = await small.evaluate(() => {
      const root = (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } })
        .document.documentElement;
      return root.scrollWidth;
    });
    expect(overflow).toBeLessThanOrEqual(390);
    await narrow.close();
  });
});
