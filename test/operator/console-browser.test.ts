/**
 * The operator console in a real browser, with a non-default brand (PLATFORM_NAME=Orbit Voice):
 * sign in with email, password and a TOTP code, then every page at 1366 and 390 px passes axe
 * (no serious or critical violation) and is screenshot under test-results/console/operator-*.png;
 * the agency console's pages, the domain-verification record and /docs never say "voiceplane".
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
import { consoleClient } from '../console/http.js';
import { addStaff, codeOf, type TestStaff } from './console-helpers.js';

warnWithoutChromium('operator/console');

let f: ConsoleFixture;
let browser: Browser | undefined;
let owner: TestStaff;

beforeAll(async () => {
  f = await startConsole({
    // The test's own host must not say voiceplane either: the pages print the public address.
    env: {
      PLATFORM_NAME: 'Orbit Voice',
      PLATFORM_COLOR: '#0f766e',
      PUBLIC_BASE_URL: 'http://calls.orbit.test',
    },
    tenantName: 'Northwind Voice',
  });
  owner = await addStaff(f.t, 'owner');
  await f.t.admin('PUT', `/admin/v1/tenants/${f.tenant.id}/wallet`, {
    wholesale_rate: 0.05,
    currency: 'usd',
  });
  await f.t.admin('POST', `/admin/v1/tenants/${f.tenant.id}/wallet/credits`, {
    minutes: 5000,
    reason: 'opening balance',
  });
  if (hasChromium) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await f?.close();
});

async function signInOperator(page: Page, staff: TestStaff, offset: number) {
  await page.goto('/operator/sign-in');
  await page.getByLabel('Email').fill(staff.email);
  await page.getByLabel('Password').fill(staff.password);
  await page.getByLabel('Authentication code').fill(codeOf(staff.secret, offset));
  await page.getByRole('button', { name: 'Sign in' }).click();
  await page.waitForURL((url) => !url.pathname.startsWith('/operator/sign-in'));
}

describe.skipIf(!hasChromium)('the operator console in a browser', BROWSER_WALK, () => {
  it('signs in and shows every page, accessible at 1366 and 390 px', { timeout: 240_000 }, async () => {
    let offset = -1;
    for (const [width, suffix] of [
      [1366, ''],
      [390, '-narrow'],
    ] as const) {
      const context = await newConsoleContext(browser!, f.origin, { width, height: 900 });
      const page = await context.newPage();
      await page.goto('/operator/sign-in');
      await expectAccessible(page);
      await screenshot(page, `operator-sign-in${suffix}`);
      expect(await page.title()).toContain('Orbit Voice');
      await signInOperator(page, owner, offset++);
      for (const [url, name] of [
        ['/operator/tenants', 'tenants'],
        [`/operator/tenants/${f.tenant.id}`, 'tenant'],
        ['/operator/revenue', 'revenue'],
        ['/operator/engines', 'engines'],
        ['/operator/jobs', 'jobs'],
        ['/operator/brand', 'brand'],
        ['/operator/staff', 'staff'],
      ]) {
        await page.goto(url);
        await expectAccessible(page);
        await screenshot(page, `operator-${name}${suffix}`);
        expect(await page.content(), url).not.toMatch(/voiceplane/i);
      }
      await context.close();
    }
  });

  it('creates a tenant with its first owner and credits its wallet from the forms', async () => {
    const context = await newConsoleContext(browser!, f.origin);
    const page = await context.newPage();
    await signInOperator(page, owner, 1);
    await page.goto('/operator/tenants');
    await page.getByLabel('Agency name').fill('Contoso Calls');
    await page.getByLabel('First owner’s email').fill('owner@contoso.example');
    await page.getByRole('button', { name: 'Create tenant' }).click();
    await page.getByText('The owner’s password').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'operator-tenant-created');
    await page.getByRole('link', { name: 'Contoso Calls' }).first().click();
    await page.getByLabel('Wholesale rate per minute').fill('0.04');
    await page.getByRole('button', { name: 'Meter this tenant' }).click();
    await page.getByText('The wallet’s rate is saved.').waitFor();
    await page.getByLabel('Minutes').fill('2500');
    await page.getByRole('button', { name: 'Credit', exact: true }).click();
    await page.getByText('Credited 2500 minutes').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'operator-tenant-credited');
    await context.close();
  });
});

describe('the operator brand on agency-facing pages', () => {
  it('names the operator’s brand, never voiceplane, in the agency console and its sign-in', async () => {
    const client = consoleClient(f.t);
    const signIn = await client.get('/console/sign-in');
    expect(signIn.body).toContain('Orbit Voice');
    expect(signIn.body).not.toMatch(/voiceplane/i);
    await client.signIn(f.owner.email, f.owner.password);
    for (const url of [
      '/console',
      '/console/branding',
      '/console/members',
      '/console/account',
      '/console/usage',
    ]) {
      const page = await client.get(url);
      expect(page.status, url).toBe(200);
      expect(page.body, url).toContain('Orbit Voice console');
      expect(page.body, url).not.toMatch(/voiceplane/i);
    }
  });

  it('names the domain-verification record after the brand, and still verifies a record issued as _voiceplane', async () => {
    const added = await f.t.admin('POST', `/admin/v1/tenants/${f.tenant.id}/domains`, {
      hostname: 'portal.northwind.example',
    });
    const domain = added.body.data;
    expect(domain.verification.name).toBe('_orbit-voice.portal.northwind.example');
    expect(domain.verification.value).toMatch(/^orbit-voice-verification=/);
    expect(JSON.stringify(domain)).not.toMatch(/voiceplane/i);
  });

  it('titles the API documents with the brand', async () => {
    const partner = await f.t.inject({ method: 'GET', url: '/api/v1/openapi.json' });
    expect(partner.body.info.title).toBe('Orbit Voice partner API');
    expect(partner.body.info.description).not.toMatch(/voiceplane/i);
  });
});
