/**
 * Branding and domains in a real browser: an owner sets the brand (the native color input
 * included), adds a custom domain, sees verification fail while the TXT record is missing and
 * succeed once it exists (a fake resolver stands in for DNS), and removes a domain after
 * confirming; a viewer sees the same page without controls. axe and a screenshot on each state.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TxtResolver } from '../../src/branding/service.js';
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

warnWithoutChromium('console/branding');

const txt = new Map<string, string[][]>();
const resolveTxt: TxtResolver = async (name) => {
  const records = txt.get(name);
  if (!records) throw Object.assign(new Error(`queryTxt ENOTFOUND ${name}`), { code: 'ENOTFOUND' });
  return records;
};

let f: ConsoleFixture;
let browser: Browser | undefined;

beforeAll(async () => {
  f = await startConsole({ adapters: () => ({ resolveTxt }) });
  if (hasChromium) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await f?.close();
});

describe.skipIf(!hasChromium)('branding and domains in a browser', BROWSER_WALK, () => {
  it('lets an owner set the brand, then add, verify and remove domains', { timeout: 60_000 }, async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner);
    await page.getByRole('link', { name: 'Branding' }).click();
    await page.getByRole('heading', { name: 'Branding and domains' }).waitFor();
    await page.getByText('No custom domains yet').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'branding-empty');

    await page.getByLabel('Brand name').fill('Northwind Calls');
    await page.getByLabel('Support email').fill('help@northwind.example');
    await page.getByLabel('Logo URL').fill('https://cdn.northwind.example/logo.svg');
    await page.getByLabel('Primary color').fill('#0f766e');
    await page.getByLabel('Portal address').fill('northwind');
    await page.getByRole('button', { name: 'Save brand' }).click();
    await page.getByText('Brand saved').waitFor();
    expect(await f.t.services.branding.get(f.tenant.id)).toMatchObject({
      brand_name: 'Northwind Calls',
      support_email: 'help@northwind.example',
      logo_url: 'https://cdn.northwind.example/logo.svg',
      primary_color: '#0f766e',
      slug: 'northwind',
      portal_url: 'http://voiceplane.test/portal/northwind',
    });
    expect(await page.locator('#portal-url').textContent()).toBe('http://voiceplane.test/portal/northwind');
    expect(await page.getByLabel('Primary color').inputValue()).toBe('#0f766e');

    await page.getByLabel('Domain name').fill('portal.northwind.example');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByText('portal.northwind.example added').waitFor();
    const [domain] = await f.t.services.branding.listDomains(f.tenant.id);
    const card = page.getByRole('region', { name: /portal\.northwind\.example/ });
    expect(await card.locator(`#${domain.id}-name`).textContent()).toBe(
      '_voiceplane.portal.northwind.example',
    );
    const value = (await card.locator(`#${domain.id}-value`).textContent())!;
    expect(value).toMatch(/^voiceplane-verification=/);

    // No record yet: the page says what the lookup found.
    await card.getByRole('button', { name: 'Verify now' }).click();
    await page
      .getByRole('alert')
      .getByText('No TXT record was found at _voiceplane.portal.northwind.example')
      .waitFor();
    await expectAccessible(page);
    await screenshot(page, 'branding-verify-failed');

    // The record is created (as the agency would at its DNS provider), split in two strings.
    txt.set('_voiceplane.portal.northwind.example', [[value.slice(0, 20), value.slice(20)]]);
    await page
      .getByRole('region', { name: /portal\.northwind\.example/ })
      .getByRole('button', { name: 'Verify now' })
      .click();
    await page.getByText('portal.northwind.example is verified').waitFor();
    expect(await page.locator('#portal-url').textContent()).toBe('https://portal.northwind.example/portal');
    expect(await page.getByRole('button', { name: 'Verify now' }).count()).toBe(0);

    // A second, pending domain, removed after confirming.
    await page.getByLabel('Domain name').fill('old.northwind.example');
    await page.getByRole('button', { name: 'Add domain' }).click();
    await page.getByText('old.northwind.example added').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'branding');
    page.once('dialog', (dialog) => dialog.accept());
    await page
      .getByRole('region', { name: /old\.northwind\.example/ })
      .getByRole('button', { name: 'Remove' })
      .click();
    await page.getByText('old.northwind.example removed.').waitFor();
    const left = await f.t.services.branding.listDomains(f.tenant.id);
    expect(left.map((d) => [d.hostname, d.status])).toEqual([['portal.northwind.example', 'verified']]);

    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'branding-narrow');
    await context.close();
  });

  it('shows a viewer the brand and domains without any control', async () => {
    const viewer = await f.addMember('viewer');
    const { context, page } = await signedIn(browser!, f.origin, viewer);
    await page.goto('/console/branding');
    await page.getByText('Only admins and owners change the brand and domains.').waitFor();
    for (const name of ['Save brand', 'Add domain', 'Verify now', 'Remove'])
      expect(await page.getByRole('button', { name }).count(), name).toBe(0);
    expect(await page.locator('form[action^="/console/branding"]').count()).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'branding-viewer');
    await context.close();
  });
});
