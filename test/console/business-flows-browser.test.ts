/**
 * The console's daily work in a browser (docs/console.md): an admin creates a user with a password,
 * subscribes them to a plan after reading what happens, and creates a campaign from pasted rows and
 * sees its refused rows and its progress. Every page passes axe (no serious or critical violation)
 * and is no wider than the screen, at 1366 and 390 px; screenshots under test-results/console/.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlan } from '../support/app.js';
import { createUser } from '../top-ups/helpers.js';
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

warnWithoutChromium('console/business-flows');

let f: ConsoleFixture;
let browser: Browser | undefined;
let agentId: string;

const VIEWPORTS = [
  { name: 'wide', width: 1366, height: 900 },
  { name: 'narrow', width: 390, height: 844 },
];

beforeAll(async () => {
  f = await startConsole();
  await createPlan(f.t, f.tenant.id, {
    name: 'Starter',
    provider: 'agency',
    included_minutes: 200,
    monthly_price: 2900,
  });
  await createPlan(f.t, f.tenant.id, {
    name: 'Pro',
    provider: 'agency',
    included_minutes: 1000,
    monthly_price: 9900,
  });
  const owner = await createUser(f.tenant, { name: 'Agent Owner' });
  const agent = await f.tenant.request('POST', '/api/v1/agents', {
    user_id: owner.id,
    name: 'Renewals agent',
    phone_number: '+14155550199',
    prompt: 'You call about renewals.',
    welcome_message: 'Hello!',
  });
  agentId = agent.body.data.id;
  if (hasChromium) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await f?.close();
});

/** axe, and no page wider than the screen. */
async function check(page: Page, width: number, name: string) {
  await expectAccessible(page);
  const scrollWidth = await page.evaluate(() => (globalThis as any).document.documentElement.scrollWidth);
  expect(scrollWidth, `${name} at ${width} px`).toBeLessThanOrEqual(width);
  await screenshot(page, name);
}

describe.skipIf(!hasChromium)('the business flows, in a browser', BROWSER_WALK, () => {
  for (const viewport of VIEWPORTS) {
    it(`creates a user, subscribes them, and runs a campaign at ${viewport.width} px`, async () => {
      const { context, page } = await signedIn(browser!, f.origin, f.owner, viewport);
      const email = `flow-${viewport.name}@client.example`;
      await page.goto('/console/users/new');
      await check(page, viewport.width, `user-new-${viewport.name}`);
      await page.getByLabel('Name', { exact: true }).fill(`Flow ${viewport.name}`);
      await page.getByLabel('Email', { exact: true }).fill(email);
      await page.getByRole('radio', { name: /Set a password now/ }).check();
      await page.getByLabel('Password', { exact: true }).fill('a strong password');
      await page.getByRole('button', { name: 'Create user' }).click();
      await page.getByText('was created with the password you set').waitFor();

      await page.getByRole('link', { name: 'Subscribe to a plan' }).click();
      const pro = await page.locator('#plan_id option', { hasText: 'Pro —' }).getAttribute('value');
      await page.getByLabel('Plan', { exact: true }).selectOption(pro ?? '');
      await page.getByRole('button', { name: 'Show what happens' }).click();
      await page.getByRole('heading', { name: 'What happens' }).waitFor();
      await check(page, viewport.width, `subscription-preview-${viewport.name}`);
      await page.getByRole('button', { name: 'Confirm: subscribe to Pro' }).click();
      await page.getByText('is on Pro (active)').waitFor();
      await check(page, viewport.width, `user-page-${viewport.name}`);

      await page.getByRole('link', { name: 'Change plan' }).click();
      await page.getByLabel('Plan', { exact: true }).selectOption({ index: 0 });
      await page.getByRole('button', { name: 'Show what happens' }).click();
      await page.getByText('Downgrade: Starter').waitFor();
      await check(page, viewport.width, `plan-change-preview-${viewport.name}`);

      await page.goto('/console/campaigns/new');
      await check(page, viewport.width, `campaign-new-${viewport.name}`);
      await page.getByLabel('Name', { exact: true }).fill(`Renewals ${viewport.name}`);
      await page.getByLabel('Agent', { exact: true }).selectOption(agentId);
      await page.getByLabel('Or paste the rows').fill('+14155550101,Ada\nnot a number,Bob\n+14155550102,Cy');
      await page.getByRole('button', { name: 'Create campaign' }).click();
      await page.getByText('2 recipients added, 1 row refused').waitFor();
      await check(page, viewport.width, `campaign-created-${viewport.name}`);
      await page.getByRole('link', { name: 'Start now' }).click();
      await check(page, viewport.width, `campaign-confirm-${viewport.name}`);
      await page.getByRole('button', { name: 'Start now' }).click();
      await page.getByText(`Renewals ${viewport.name} is started.`).waitFor();
      await check(page, viewport.width, `campaign-running-${viewport.name}`);
      await page.goto('/console/campaigns');
      await check(page, viewport.width, `campaigns-${viewport.name}`);
      await context.close();
    });
  }
});
