/**
 * The Phone numbers page in a real browser: the list (empty, then with a number), the number's
 * page where the owner picks the agent that answers and labels it, and the simulator's inbound
 * call, which lands on the call's page; the calls list filtered to inbound calls. axe at 1366 and
 * 390 px, nothing scrolling sideways on a phone, screenshots.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentFixture } from '../calls/helpers.js';
import {
  BROWSER_WALK,
  type ConsoleFixture,
  expectAccessible,
  hasChromium,
  launchBrowser,
  screenshot,
  signedIn,
  startConsole,
  warnWithoutChromium,
} from './helpers.js';

warnWithoutChromium('console/phone-numbers');

const NUMBER = '+14155550610';
let f: ConsoleFixture;
let browser: Browser | undefined;

beforeAll(async () => {
  f = await startConsole({ env: { SIMULATED_CALL_SECONDS: '61' } });
  if (hasChromium) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await f?.close();
});

const WIDE = { width: 1366, height: 900 };
const NARROW = { width: 390, height: 844 };

/** The page fits a phone: nothing scrolls sideways. */
async function expectNoSidewaysScroll(page: Page) {
  const overflow = await page.evaluate(() => {
    const root = (
      globalThis as unknown as { document: { documentElement: { scrollWidth: number; clientWidth: number } } }
    ).document.documentElement;
    return root.scrollWidth - root.clientWidth;
  });
  expect(overflow).toBeLessThanOrEqual(0);
}

describe.skipIf(!hasChromium)('the Phone numbers page', BROWSER_WALK, () => {
  it('from no number to a number that answers, and a simulated inbound call', {
    timeout: 120_000,
  }, async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner, WIDE);
    await page.getByRole('link', { name: 'Phone numbers' }).click();
    await page.getByRole('heading', { name: 'No phone numbers yet' }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'phone-numbers-empty');

    const imported = await f.t.admin('POST', '/admin/v1/phone-numbers', {
      phone_number: NUMBER,
      tenant_id: f.tenant.id,
    });
    expect(imported.status, imported.raw).toBe(201);
    await agentFixture(f.t, {
      tenant: f.tenant,
      agent: { name: 'Night receptionist', phone_number: NUMBER },
    });
    await page.reload();
    await page.getByRole('link', { name: NUMBER, exact: true }).click();
    await page.getByLabel('Answered by').selectOption({ label: 'Night receptionist' });
    await page.getByLabel('Label (optional)').fill('After hours');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('its calls are answered by the agent you chose').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'phone-numbers-detail');

    await page.getByRole('button', { name: 'Simulate an inbound call' }).click();
    await page.waitForURL(/\/console\/calls\/call_/);
    await page.getByText(`${NUMBER} rang from +14155550123.`).waitFor();
    await page.goto('/console/phone-numbers');
    await page.getByRole('cell', { name: 'Night receptionist' }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'phone-numbers-list');
    await page.getByRole('link', { name: `1 inbound call to ${NUMBER}` }).click();
    await page.waitForURL(/direction=inbound/);
    expect(await page.getByLabel('Direction').inputValue()).toBe('inbound');
    await page.getByRole('link', { name: '+14155550123' }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'phone-numbers-calls');
    await context.close();
  });

  it('fits a phone: list, number and calls at 390 px', { timeout: 90_000 }, async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner, NARROW);
    for (const [path, name] of [
      ['/console/phone-numbers', 'phone-numbers-list-narrow'],
      [`/console/phone-numbers/${encodeURIComponent(NUMBER)}`, 'phone-numbers-detail-narrow'],
      ['/console/calls?direction=inbound', 'phone-numbers-calls-narrow'],
    ] as const) {
      await page.goto(path);
      await expectNoSidewaysScroll(page);
      await expectAccessible(page);
      await screenshot(page, name);
    }
    await context.close();
  });
});
