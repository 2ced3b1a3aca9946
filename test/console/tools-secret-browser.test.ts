/**
 * The tools secret page in a real browser: an owner creates the secret (shown once, then never
 * again), rotates it (the new one shown once, the previous one's end shown), the secret signs the
 * requests a tool endpoint verifies with `standardwebhooks`; the same form sent twice rotates
 * once; a viewer sees the state without the buttons. axe at 1366 and 390 px, screenshots.
 */
import type { Browser, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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

warnWithoutChromium('console/tools-secret');

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

/** Signs a body with the secret as the tools service does, and checks it the receiver's way. */
function verifies(secret: string): boolean {
  const id = 'tc_test';
  const at = new Date();
  const body = '{"tool":"t"}';
  const signature = new Webhook(secret).sign(id, at, body);
  const headers = {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at.getTime() / 1000)),
    'webhook-signature': signature,
  };
  try {
    new Webhook(secret).verify(body, headers);
    return true;
  } catch {
    return false;
  }
}

describe.skipIf(!hasChromium)('the tools secret page', BROWSER_WALK, () => {
  it('creates the secret, shows it once, rotates it with the previous one’s end shown', {
    timeout: 90_000,
  }, async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner, WIDE);
    await page.goto('/console/tools-secret');
    await page.getByRole('link', { name: 'Tools secret' }).waitFor();
    await page.getByText('Not created').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'tools-secret-empty');

    await page.getByRole('button', { name: 'Create secret' }).click();
    const first = (await page.locator('#tools-secret').textContent())!.trim();
    expect(first).toMatch(/^whsec_/);
    expect(verifies(first)).toBe(true);
    await expectAccessible(page);
    await screenshot(page, 'tools-secret-created');
    await page.getByRole('link', { name: 'I have copied it: continue' }).click();
    await page.getByText('Active').waitFor();
    expect(await page.content()).not.toContain(first);
    await page.reload();
    expect(await page.content()).not.toContain(first);

    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Rotate secret' }).click();
    const second = (await page.locator('#tools-secret').textContent())!.trim();
    expect(second).toMatch(/^whsec_/);
    expect(second).not.toBe(first);
    const row = page.locator('dd', { has: page.locator('time') }).last();
    const until = await row.locator('time').getAttribute('datetime');
    expect(new Date(until!).getTime() - Date.now()).toBeGreaterThan(23 * 3_600_000);
    await expectAccessible(page);
    await screenshot(page, 'tools-secret-rotated');
    await page.getByRole('link', { name: 'I have copied it: continue' }).click();
    expect(await page.content()).not.toContain(second);

    // What the service signs with: the new secret and, for 24 hours, the previous one.
    const status = await f.t.services.tools.secretStatus(f.tenant.id);
    expect(status).toMatchObject({ exists: true, previous_valid_until: until });

    await page.setViewportSize(NARROW);
    await expectAccessible(page);
    await expectNoSidewaysScroll(page);
    await screenshot(page, 'tools-secret-narrow');
    await context.close();
  });

  it('the same form sent twice rotates once', async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner, WIDE);
    await page.goto('/console/tools-secret');
    const before = await f.t.services.tools.secretStatus(f.tenant.id);
    const form = page.locator('form[action="/console/tools-secret/rotate"]');
    const fields = Object.fromEntries(
      await form
        .locator('input[type=hidden]')
        .evaluateAll((inputs) =>
          inputs.map((input) => [
            (input as unknown as { name: string }).name,
            (input as unknown as { value: string }).value,
          ]),
        ),
    );
    const post = () => page.request.post('/console/tools-secret/rotate', { form: fields, maxRedirects: 0 });
    const [once, twice] = [await post(), await post()];
    expect([once.status(), twice.status()]).toEqual([303, 303]);
    const after = await f.t.services.tools.secretStatus(f.tenant.id);
    expect(after.rotated_at).not.toBe(before.rotated_at);
    await page.goto('/console/tools-secret');
    await page.getByText('nothing changed').waitFor();
    // One rotation only: the secret the previous one was rotated from still signs beside it.
    expect(new Date(after.previous_valid_until!).getTime()).toBeGreaterThan(Date.now());
    await expectAccessible(page);
    await context.close();
  });

  it('a viewer sees the state, not the buttons, and cannot rotate', async () => {
    const viewer = await f.addMember('viewer');
    const { context, page } = await signedIn(browser!, f.origin, viewer, NARROW);
    await page.goto('/console/tools-secret');
    await page.getByText('Only an admin or owner can create or rotate the secret.').waitFor();
    expect(await page.getByRole('button', { name: 'Rotate secret' }).count()).toBe(0);
    await expectAccessible(page);
    await expectNoSidewaysScroll(page);
    await screenshot(page, 'tools-secret-viewer-narrow');
    await context.close();
  });
});
