/**
 * The business pages in a real browser: an owner creates an API key with chosen scopes, reads it
 * once and uses it against the API (a scope it has → 200, one it lacks → 403), then revokes it
 * (401); creates a plan after a refused attempt with the error beside its field, and archives it;
 * finds a user among hundreds by search, grants credits and blocks them; reads subscriptions.
 * Every page passes axe and leaves a screenshot under test-results/console/.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlan, createUser } from '../support/app.js';
import { seedUsers } from './business-seed.js';
import {
  BROWSER_WALK,
  type ConsoleFixture,
  expectAccessible,
  hasChromium,
  launchBrowser,
  OWNER_PASSWORD,
  screenshot,
  signedIn,
  startConsole,
  warnWithoutChromium,
} from './helpers.js';

warnWithoutChromium('console/business');

let f: ConsoleFixture;
let browser: Browser | undefined;

beforeAll(async () => {
  f = await startConsole();
  if (hasChromium) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await f?.close();
});

async function look(page: Page, name: string) {
  await expectAccessible(page);
  await screenshot(page, name);
}

describe.skipIf(!hasChromium)('the business pages, in a browser', BROWSER_WALK, () => {
  it('shows what to do first on every empty list', async () => {
    const tenant = await f.t.admin('POST', '/admin/v1/tenants', { name: 'Fresh Agency' });
    const email = `owner-${Date.now()}@fresh.example`;
    const member = await f.t.admin('POST', `/admin/v1/tenants/${tenant.body.data.id}/members`, {
      email,
      password: OWNER_PASSWORD,
      role: 'owner',
      name: 'Fresh Owner',
    });
    expect(member.status).toBe(201);
    const { context, page } = await signedIn(browser!, f.origin, { email, password: OWNER_PASSWORD });
    for (const [url, heading, name] of [
      ['/console/api-keys', 'No API keys yet', 'api-keys-empty'],
      ['/console/plans', 'No plans yet', 'plans-empty'],
      ['/console/users', 'No users yet', 'users-empty'],
      ['/console/subscriptions', 'No subscriptions yet', 'subscriptions-empty'],
    ]) {
      await page.goto(url);
      await page.getByRole('heading', { name: heading }).waitFor();
      await look(page, name);
    }
    await context.close();
  });

  it('creates an API key with chosen scopes, shows it once, and revokes it', async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner);
    await page.goto('/console/api-keys');
    await page.getByRole('link', { name: 'Create API key' }).click();
    await page.waitForURL('**/console/api-keys/new');
    await look(page, 'api-keys-new');
    await page.getByLabel('Name').fill('CRM sync');
    await page.getByLabel('Environment').selectOption('live');
    await page.getByLabel('users:read').check();
    await page.getByLabel('plans:read').check();
    await page.getByRole('button', { name: 'Create API key' }).click();
    await page.getByRole('heading', { name: 'Your new API key' }).waitFor();
    await look(page, 'api-keys-created');
    const key = (await page.locator('#new-api-key').textContent())?.trim() ?? '';
    expect(key).toMatch(/_live_[0-9A-Za-z]{32}$/);

    const call = (path: string, secret = key) =>
      fetch(`${f.origin}${path}`, { headers: { authorization: `Bearer ${secret}` } });
    expect((await call('/api/v1/users')).status).toBe(200);
    expect((await call('/api/v1/plans')).status).toBe(200);
    expect((await call('/api/v1/calls')).status).toBe(403);

    await page.getByRole('link', { name: /back to API keys/ }).click();
    await page.waitForURL('**/console/api-keys');
    const row = page.getByRole('row').filter({ hasText: 'CRM sync' });
    await expect.poll(async () => (await page.content()).includes(key)).toBe(false);
    await expect
      .poll(async () => {
        await page.reload();
        return row.getByText('Never').count();
      })
      .toBe(0);
    await look(page, 'api-keys-list');

    page.once('dialog', (dialog) => dialog.accept());
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByText(/is revoked\./).waitFor();
    await expect(row.getByText('revoked').count()).resolves.toBe(1);
    expect((await call('/api/v1/users')).status).toBe(401);
    await screenshot(page, 'api-keys-revoked');
    await context.close();
  });

  it('creates a plan after a refusal shown beside the field, then archives it', async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner);
    await page.goto('/console/plans/new');
    await look(page, 'plans-new');
    await page.getByLabel('Name').fill('Growth');
    await page.getByLabel('Billed by').selectOption('agency');
    await page.getByLabel('Currency').fill('US dollars');
    await page.getByLabel('Included minutes').fill('500');
    await page.getByLabel('Monthly price').fill('79.00');
    await page.getByLabel('Annual price').fill('790');
    await page.getByLabel('Overage rate').fill('0.09');
    await page.getByLabel('Top-up rate').fill('0.08');
    await page.getByRole('button', { name: 'Create plan' }).click();
    const error = page.locator('#currency-error');
    await error.waitFor();
    expect(await error.textContent()).toBe('Currency must be three lowercase letters (ISO 4217), e.g. usd.');
    expect(await page.getByLabel('Currency').getAttribute('aria-invalid')).toBe('true');
    // What was typed is kept.
    expect(await page.getByLabel('Name').inputValue()).toBe('Growth');
    await look(page, 'plans-new-error');

    await page.getByLabel('Currency').fill('usd');
    await page.getByRole('button', { name: 'Create plan' }).click();
    await page.getByText('The plan “Growth” was created.').waitFor();
    await page.getByText('$79.00').first().waitFor();
    await look(page, 'plans-detail');
    const planId = new URL(page.url()).pathname.split('/').pop()!;
    const fromApi = await f.tenant.request('GET', `/api/v1/plans/${planId}`);
    expect(fromApi.body.data).toMatchObject({
      monthly_price: 7900,
      annual_price: 79000,
      included_minutes: 500,
    });

    await page.goto('/console/plans');
    await page.getByRole('row').filter({ hasText: 'Growth' }).waitFor();
    await look(page, 'plans-list');

    await page.getByRole('link', { name: 'Growth' }).click();
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Archive plan' }).click();
    await page.getByText('The plan “Growth” is archived.').waitFor();
    expect((await f.tenant.request('GET', `/api/v1/plans/${planId}`)).status).toBe(404);
    await context.close();
  });

  it('finds a user among hundreds, grants credits and blocks them; lists their subscription', async () => {
    await seedUsers(f.t.services.database.db, f.tenant.id, 300);
    const ada = await createUser(f.tenant, {
      name: 'Zephyrine Quockenbush',
      email: 'zephyrine@quockenbush.example',
    });
    const plan = await createPlan(f.t, f.tenant.id, { name: 'Concierge', provider: 'agency' });
    const subscribed = await f.tenant.request('POST', '/api/v1/subscriptions', {
      user_id: ada.id,
      plan_id: plan.id,
    });
    expect(subscribed.status).toBe(201);

    const { context, page } = await signedIn(browser!, f.origin, f.owner);
    await page.goto('/console/users');
    await page.getByText(/Showing 1–25 of 30[01]/).waitFor();
    await look(page, 'users-list');
    await page.getByLabel('Search').fill('quocken');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.getByText('Showing 1–1 of 1').waitFor();
    await screenshot(page, 'users-search');
    await page.getByRole('link', { name: 'Zephyrine Quockenbush' }).click();
    await page.getByRole('heading', { name: 'Zephyrine Quockenbush', level: 1 }).waitFor();
    await look(page, 'users-detail');

    const balanceBefore = Number(
      (await page.locator('.stat').filter({ hasText: 'Credit balance' }).locator('.stat-value').textContent())
        ?.replace(/,/g, '')
        .trim(),
    );
    await page.getByLabel('Minutes', { exact: true }).fill('120');
    await page.getByLabel('Reason').fill('Welcome bonus');
    await page.getByRole('button', { name: 'Grant credits' }).click();
    await page.getByText(`120 minutes granted; the balance is ${balanceBefore + 120} minutes.`).waitFor();
    const credits = await f.t.admin('GET', `/admin/v1/users/${ada.id}/credits`);
    expect(credits.body.data.balance_minutes).toBe(balanceBefore + 120);

    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Block' }).click();
    await page.getByText('Zephyrine Quockenbush is blocked.').waitFor();
    await page.getByRole('button', { name: 'Unblock' }).waitFor();
    await look(page, 'users-detail-blocked');
    expect((await f.tenant.request('GET', `/api/v1/users/${ada.id}`)).body.data.status).toBe('blocked');

    await page.goto('/console/subscriptions?status=active');
    const row = page.getByRole('row').filter({ hasText: 'Zephyrine Quockenbush' });
    await row.waitFor();
    expect(await row.textContent()).toContain('Concierge');
    await look(page, 'subscriptions-list');
    await row.getByRole('link', { name: 'Concierge' }).click();
    await page.getByRole('heading', { name: 'Subscription to Concierge' }).waitFor();
    await look(page, 'subscriptions-detail');
    await context.close();
  });

  it('reads well on a narrow screen', async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner, { width: 390, height: 844 });
    await page.goto('/console/users');
    await look(page, 'users-list-narrow');
    await page.goto('/console/api-keys');
    await look(page, 'api-keys-list-narrow');
    await context.close();
  });
});
