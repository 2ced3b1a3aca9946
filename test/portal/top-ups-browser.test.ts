/**
 * Buying minutes in a real browser (Debian's chromium through playwright-core): a client on a
 * card plan goes from the overview's "Buy minutes" to the Minutes page, is told what is wrong with
 * an amount beside the field, buys a preset and sees the new balance and the purchase listed.
 * Every page passes axe-core (no serious or critical violation) and is photographed under
 * test-results/portal/.
 */
import { type Browser, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  BROWSER_WALK,
  CHROMIUM,
  expectAccessible,
  hasChromium,
  warnWithoutChromium,
} from '../console/helpers.js';
import { createPlan, createUser, type TestApp } from '../support/app.js';
import { addCard, ledgerOf } from '../top-ups/helpers.js';
import { type Agency, createAgency, screenshot, startPortalApp, USER_PASSWORD } from './helpers.js';

warnWithoutChromium('portal top-ups');

let t: TestApp;
let origin: string;
let browser: Browser | undefined;
let brightsmile: Agency;
let user: { id: string; email: string };

beforeAll(async () => {
  t = await startPortalApp({ env: { PASSWORD_HASH_MEMORY_KIB: '1024', PROCESSOR: 'simulated' } });
  brightsmile = await createAgency(t, {
    name: 'BrightSmile Voice',
    color: '#0e7490',
    supportEmail: 'care@brightsmile.example',
    slug: 'brightsmile-minutes',
  });
  const plan = await createPlan(t, brightsmile.tenant.id, {
    name: 'Practice Pro',
    provider: 'processor',
    included_minutes: 500,
    monthly_price: 4900,
    topup_rate: 0.12,
  });
  user = await createUser(brightsmile.tenant, { name: 'Grace Hopper', password: USER_PASSWORD });
  await addCard(t, user.id);
  const sub = await brightsmile.tenant.request('POST', '/api/v1/subscriptions', {
    user_id: user.id,
    plan_id: plan.id,
  });
  if (sub.status !== 201) throw new Error(`subscription: ${sub.raw}`);
  await t.app.listen({ host: '127.0.0.1', port: 0 });
  const address = t.app.server.address();
  origin = `http://127.0.0.1:${typeof address === 'object' && address ? address.port : 0}`;
  if (hasChromium) {
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--no-sandbox',
        '--headless',
        '--disable-gpu',
        '--no-first-run',
        '--disable-background-networking',
      ],
    });
  }
});
afterAll(async () => {
  await browser?.close();
  await t?.close();
});

async function check(page: Page, name: string) {
  await expectAccessible(page);
  await screenshot(page, name);
  expect(await page.content()).not.toMatch(/voiceplane/i);
}

describe.skipIf(!hasChromium)('buying minutes in a browser', BROWSER_WALK, () => {
  it('buys a preset from the overview’s button and shows the new balance', async () => {
    // bypassCSP lets axe-core be injected (the portal allows scripts from its own origin only).
    const context = await browser!.newContext({
      viewport: { width: 1280, height: 860 },
      baseURL: origin,
      bypassCSP: true,
    });
    const page = await context.newPage();
    await page.goto(`${brightsmile.base}/sign-in`);
    await page.getByLabel('Email').fill(user.email);
    await page.getByLabel('Password').fill(USER_PASSWORD);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await page.getByRole('heading', { name: 'Welcome, Grace Hopper' }).waitFor();

    await page.getByRole('link', { name: 'Buy minutes' }).click();
    await page.getByRole('heading', { name: 'Buy minutes' }).waitFor();
    await expect(page.getByText('charged to your card on file').isVisible()).resolves.toBe(true);
    // Nothing is chosen for the client.
    await expect(page.locator('input[name="minutes"]:checked').count()).resolves.toBe(0);
    await check(page, 'top-ups');

    await page.getByRole('radio', { name: /Another amount/ }).check();
    await page.getByLabel('Another amount, in minutes').fill('0');
    await page.getByRole('button', { name: 'Review the purchase' }).click();
    await page.getByText('Enter a whole number from 1 to 100,000.').waitFor();
    await check(page, 'top-ups-refused');

    await page.getByLabel('Another amount, in minutes').fill('');
    await page.getByRole('radio', { name: /1,000 minutes/ }).check();
    await page.getByRole('button', { name: 'Review the purchase' }).click();
    // The amount and its price, before anything is charged.
    await page.getByRole('heading', { name: 'Confirm your purchase' }).waitFor();
    await expect(page.getByText('$120.00').first().isVisible()).resolves.toBe(true);
    await expect((await ledgerOf(t, user.id)).topUps).toHaveLength(0);
    await check(page, 'top-ups-confirm');
    await page.getByRole('button', { name: 'Pay $120.00' }).click();
    await page
      .getByText('1,000 minutes added ($120.00 charged to your card on file). You now have 1,500 minutes.')
      .waitFor();
    const minutesCard = page.locator('section', { has: page.getByRole('heading', { name: 'Minutes left' }) });
    await expect(minutesCard.locator('.stat-value').textContent()).resolves.toBe('1,500');
    await expect(page.getByRole('cell', { name: '$120.00' }).isVisible()).resolves.toBe(true);
    await check(page, 'top-ups-bought');

    // A refresh of the result page does not buy again (the POST answered with a redirect).
    await page.reload();
    await expect((await ledgerOf(t, user.id)).topUps).toHaveLength(1);

    const narrow = await context.newPage();
    await narrow.setViewportSize({ width: 390, height: 844 });
    await narrow.goto(`${brightsmile.base}/top-ups`);
    await check(narrow, 'top-ups-narrow');
    await context.close();
  });
});
