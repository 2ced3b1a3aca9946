/**
 * The money pages of the console in a real browser, as an agency owner sees them: the wholesale
 * wallet on the overview (balance, rate, and the warning once it is spent), the month's usage of
 * every client with the agency's margin, and the card-processor account on the plans page. Each
 * passes axe and leaves a screenshot under test-results/console/.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentFixture, grantCredits, trigger } from '../calls/helpers.js';
import { createPlan } from '../support/app.js';
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

warnWithoutChromium('console/money');

let f: ConsoleFixture;
let browser: Browser | undefined;

beforeAll(async () => {
  f = await startConsole({ env: { SIMULATED_CALL_SECONDS: '95' } });
  if (hasChromium) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await f?.close();
});

describe.skipIf(!hasChromium)('money pages, in a browser', BROWSER_WALK, () => {
  it('shows the wallet, the month’s usage with the margin, and the processor account', async () => {
    const wallet = `/admin/v1/tenants/${f.tenant.id}/wallet`;
    expect((await f.t.admin('PUT', wallet, { wholesale_rate: 0.04, currency: 'usd' })).status).toBe(201);
    expect((await f.t.admin('POST', `${wallet}/credits`, { minutes: 5 })).status).toBe(201);
    const plan = await createPlan(f.t, f.tenant.id, {
      name: 'Agency',
      provider: 'agency',
      included_minutes: 100,
      topup_rate: 0.12,
    });
    const { agent, userId } = await agentFixture(f.t, { tenant: f.tenant, credits: 0 });
    expect(
      (await f.tenant.request('POST', '/api/v1/subscriptions', { user_id: userId, plan_id: plan.id })).status,
    ).toBe(201);
    await grantCredits(f.t, userId, 10);
    expect((await f.tenant.request('POST', `/api/v1/users/${userId}/top-ups`, { minutes: 30 })).status).toBe(
      201,
    );
    // Three calls of 95 s: 2 minutes each, 6 wholesale minutes from a wallet of 5.
    for (const phone of ['+14155550701', '+14155550702', '+14155550703']) {
      expect((await trigger(f.t, agent.webhook_id, { phone, name: 'Grace' })).status).toBe(202);
    }
    await f.t.services.jobRunner.drain();

    const { page } = await signedIn(browser!, f.origin, f.owner);
    await page.goto('/console');
    const walletPanel = page.locator('#wallet');
    await expect(walletPanel.innerText()).resolves.toMatch(/-1 min\b/);
    await expect(walletPanel.innerText()).resolves.toMatch(/calls are refused/);
    await expectAccessible(page);
    await screenshot(page, 'overview-wallet-spent');

    await page
      .getByRole('navigation', { name: 'Console', exact: true })
      .getByRole('link', { name: 'Usage' })
      .click();
    await page.getByRole('heading', { name: 'Usage', level: 1 }).waitFor();
    const table = await page.locator('main').innerText();
    expect(table).toMatch(/Margin/i);
    // Retail: the $3.60 top-up; wholesale: 6 minutes × $0.04 = $0.24; margin $3.36.
    expect(table).toContain('$3.60');
    expect(table).toContain('$0.24');
    expect(table).toContain('$3.36');
    await expectAccessible(page);
    await screenshot(page, 'usage-month');

    await page.goto('/console/plans');
    await page.getByLabel('Connected Stripe account').fill('acct_1Northwind42');
    await page.getByRole('button', { name: 'Save account' }).click();
    await page.getByText('acct_1Northwind42').first().waitFor();
    const tenant = await f.t.admin('GET', `/admin/v1/tenants/${f.tenant.id}`);
    expect(tenant.body.data.processor_account_id).toBe('acct_1Northwind42');
    await expectAccessible(page);
    await screenshot(page, 'plans-processor-account');
  });
});
