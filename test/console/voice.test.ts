/**
 * The voice pages in a browser: an agent created, edited and published twice (both versions
 * listed, the first unchanged); a test call watched from queued to completed on its page without a
 * reload (the job runner and the simulated carrier really run it); the do-not-call list refusing a
 * test call with the API's message. Every page passes axe and is photographed.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createUser } from '../support/app.js';
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

warnWithoutChromium('console/voice');

let f: ConsoleFixture;
let browser: Browser | undefined;
let owner: { id: string; email: string; name: string };

async function grantCredits(userId: string, minutes: number) {
  const response = await f.t.admin('POST', `/admin/v1/users/${userId}/credits`, { minutes });
  expect(response.status).toBe(201);
}

beforeAll(async () => {
  // Calls really last five seconds (SIMULATED_REALTIME), and this app's job runner places them.
  f = await startConsole({ env: { SIMULATED_REALTIME: 'true', SIMULATED_CALL_SECONDS: '5' } });
  f.t.services.jobRunner.start();
  owner = await createUser(f.tenant, { name: 'Ada Lovelace', email: `ada-${Date.now()}@example.com` });
  await grantCredits(owner.id, 100);
  if (hasChromium) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await f?.close();
});

/** Creates an agent for Ada through the console's form; lands on its page. */
async function createAgentInBrowser(page: Page, name: string) {
  await page.goto('/console/agents/new');
  await page.getByLabel('Find a user').fill('ada');
  await page.getByRole('button', { name: 'Search' }).click();
  await page.getByLabel(/^Owner/).selectOption(owner.id);
  await page.getByLabel('Name', { exact: true }).fill(name);
  await page.getByLabel('Phone number (caller ID)').fill('+14155550100');
  await page.getByLabel('Prompt').fill('You call {name} about their {product} order.');
  await page.getByLabel('Welcome message').fill('Hello {name}, this is Northwind.');
  await page.getByRole('button', { name: 'Create agent' }).click();
  await page.waitForURL(/\/console\/agents\/agt_/);
}

async function publish(page: Page, label: string) {
  page.once('dialog', (dialog) => dialog.accept());
  await page.getByRole('button', { name: label }).click();
  await page.getByText(/^Published version \d+\.$/).waitFor();
}

describe.skipIf(!hasChromium)('agents in a browser', BROWSER_WALK, () => {
  it('shows the empty list, creates an agent, publishes version 1 then version 2, each kept', async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner);
    await page.goto('/console/agents');
    await page.getByText('No agents yet').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'agents-empty');

    // A refused form keeps what was typed and says why beside each field.
    await page.goto('/console/agents/new');
    await expectAccessible(page);
    await screenshot(page, 'agents-new');
    await page.getByLabel('Name', { exact: true }).fill('Reception');
    await page.getByLabel('Phone number (caller ID)').fill('4155550100');
    await page.getByLabel('Prompt').fill('Hello');
    await page.getByRole('button', { name: 'Create agent' }).click();
    await page.locator('#phone_number-error').waitFor();
    expect(await page.getByLabel('Name', { exact: true }).inputValue()).toBe('Reception');
    await expectAccessible(page);
    await screenshot(page, 'agents-new-errors');

    await createAgentInBrowser(page, 'Reception');
    await page.getByText('not published: it cannot place calls yet').waitFor();
    await page.getByText('Not published yet').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'agents-detail-draft');

    // Settings refused beside their fields, by the API's own rules.
    await page.getByLabel('Max concurrent calls').fill('0');
    await page.getByLabel('Time zone').fill('Mars/Olympus');
    await page.getByLabel('Mon').check();
    await page.getByLabel('Opens at').fill('09:00');
    await page.getByLabel('Closes at').fill('17:00');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.locator('#max_concurrent_calls-error').waitFor();
    await page.locator('#calling_hours_timezone-error').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'agents-detail-errors');

    await page.getByLabel('Max concurrent calls').fill('2');
    await page.getByLabel('Time zone').fill('');
    await page.getByLabel('Mon').uncheck();
    await page.getByLabel('Opens at').fill('');
    await page.getByLabel('Closes at').fill('');
    await page.getByLabel('Attempts in all').fill('3');
    await page.getByLabel('Minutes between attempts').fill('30');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByText('Draft saved.').waitFor();
    expect(await page.getByLabel('Max concurrent calls').inputValue()).toBe('2');

    await publish(page, 'Publish version 1');
    const versions = page.locator('table.versions tbody tr');
    await expect.poll(() => versions.count()).toBe(1);
    expect(await versions.first().innerText()).toContain('version 1');

    await page.getByLabel('Prompt').fill('Second prompt for {name}.');
    await page.getByRole('button', { name: 'Save draft' }).click();
    await page.getByText('Draft saved.').waitFor();
    await publish(page, 'Publish version 2');
    await expect.poll(() => versions.count()).toBe(2);
    expect(await versions.nth(0).innerText()).toContain('version 2');
    expect(await versions.nth(0).innerText()).toContain('Second prompt for {name}.');
    expect(await versions.nth(1).innerText()).toContain('version 1');
    expect(await versions.nth(1).innerText()).toContain('You call {name} about their {product} order.');
    await expectAccessible(page);
    await screenshot(page, 'agents-detail-published');

    // Rotating the webhook URL: a new URL, the old one answers 404.
    const before = await page.locator('#webhook-url').innerText();
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Rotate URL' }).click();
    await page.getByText('Webhook URL rotated').waitFor();
    const after = await page.locator('#webhook-url').innerText();
    expect(after).not.toBe(before);
    const old = await f.t.inject({
      method: 'POST',
      url: new URL(before).pathname,
      headers: { 'content-type': 'application/json' },
      payload: JSON.stringify({ phone: '+14155550123', name: 'Ada' }),
    });
    expect(old.status).toBe(404);

    await page.goto('/console/agents');
    await page.getByRole('link', { name: 'Reception' }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'agents-list');

    // A narrow screen still reads.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto((await page.getByRole('link', { name: 'Reception' }).getAttribute('href'))!);
    await screenshot(page, 'agents-detail-narrow');
    await context.close();
  }, 180_000);

  it('shows a viewer the agent read-only', async () => {
    const viewer = await f.addMember('viewer');
    const { context, page } = await signedIn(browser!, f.origin, viewer);
    await page.goto('/console/agents');
    await page.getByRole('link', { name: 'Reception' }).click();
    await page.getByRole('heading', { name: 'Versions' }).waitFor();
    expect(await page.getByRole('button', { name: /Publish|Rotate|Save|Delete|Place/ }).count()).toBe(0);
    await expectAccessible(page);
    await screenshot(page, 'agents-detail-viewer');
    await context.close();
  }, 180_000);

  it('deletes an agent after confirming', async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner);
    await createAgentInBrowser(page, 'Short-lived');
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Delete agent' }).click();
    await page.getByText('Agent “Short-lived” deleted.').waitFor();
    expect(await page.getByRole('link', { name: 'Short-lived' }).count()).toBe(0);
    await context.close();
  }, 180_000);
});

describe.skipIf(!hasChromium)('calls in a browser', BROWSER_WALK, () => {
  it('places a test call and follows it from queued to completed without a reload', async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner);
    await page.goto('/console/calls');
    await page.getByText('No calls yet').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'calls-empty');

    await createAgentInBrowser(page, 'Outbound');
    // Not published yet: the API's refusal, on the form.
    await page.getByLabel('Phone number to call').fill('+14155550123');
    await page.getByRole('button', { name: 'Place call' }).click();
    await page
      .locator('#test-call')
      .getByText('The agent has no published version; publish it before triggering calls.')
      .waitFor();
    await expectAccessible(page);
    await screenshot(page, 'agents-test-call-refused');

    await publish(page, 'Publish version 1');
    await page.getByLabel('Phone number to call').fill('+14155550123');
    await page.getByLabel('Callee’s name').fill('Grace Hopper');
    await page.getByLabel('Context (optional)').fill('{"product": "solar panels"}');
    await page.getByRole('button', { name: 'Place call' }).click();
    await page.waitForURL(/\/console\/calls\/call_/);
    await page.getByText('Call to +14155550123 queued.').waitFor();
    // A marker the page keeps only if it is never reloaded, and each status the region shows.
    await page.evaluate(() => {
      const scope = globalThis as unknown as {
        notReloaded: boolean;
        seen: string[];
        document: { getElementById(id: string): any };
        MutationObserver: new (callback: () => void) => { observe(node: unknown, options: object): void };
      };
      scope.notReloaded = true;
      scope.seen = [];
      const live = scope.document.getElementById('call-live');
      const record = () => {
        const status = live.querySelector('.call-status-badge')?.textContent.trim();
        if (status && scope.seen[scope.seen.length - 1] !== status) scope.seen.push(status);
      };
      record();
      new scope.MutationObserver(record).observe(live, { childList: true, subtree: true });
    });
    const region = page.locator('#call-live');
    expect(await region.getAttribute('data-refresh')).toMatch(/^\/console\/calls\/call_\w+\/live$/);
    await region.locator('.badge', { hasText: 'in progress' }).waitFor({ timeout: 20_000 });
    await screenshot(page, 'calls-detail-live');
    await expectAccessible(page);
    await region.locator('[data-final]').waitFor({ timeout: 20_000 });
    const seen = await page.evaluate(() => (globalThis as unknown as { seen: string[] }).seen);
    expect(['queued', 'dialing', 'in progress']).toContain(seen[0]);
    expect(seen).toContain('in progress');
    expect(seen.at(-1)).toBe('completed');
    expect(await page.evaluate(() => (globalThis as { notReloaded?: boolean }).notReloaded)).toBe(true);
    const timeline = await region.locator('.timeline li').allInnerTexts();
    expect(timeline.map((entry) => entry.split(/\s/)[0])).toEqual([
      'Queued',
      'Dialling',
      'Answered,',
      'Completed',
    ]);
    await page.locator('dd.pre').getByText('You call Grace Hopper about their solar panels order.').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'calls-detail-final');

    // Reloaded (or without scripts), the page shows the final state and stops following.
    await page.reload();
    expect(await page.locator('#call-live').getAttribute('data-refresh')).toBeNull();

    await page.goto('/console/calls');
    await page.getByRole('link', { name: '+14155550123' }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'calls-list');
    await page.getByLabel('Status').selectOption('failed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No calls match').waitFor();
    await page.getByLabel('Status').selectOption('completed');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByRole('link', { name: '+14155550123' }).waitFor();
    await page.getByLabel('Created after (UTC)').fill('2099-01-01T00:00');
    await page.getByRole('button', { name: 'Filter' }).click();
    await page.getByText('No calls match').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'calls-list-filtered-empty');
    await context.close();
  }, 180_000);
});

describe.skipIf(!hasChromium)('the do-not-call list in a browser', BROWSER_WALK, () => {
  it('adds a number, a test call to it is refused on the form, then removes it', async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner);
    await page.goto('/console/do-not-call');
    await page.getByText('The list is empty').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'do-not-call-empty');

    await page.getByLabel('Phone number').fill('555-0199');
    await page.getByRole('button', { name: 'Add to the list' }).click();
    await page.locator('#phone_number-error').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'do-not-call-errors');

    await page.getByLabel('Phone number').fill('+14155550777');
    await page.getByLabel('Reason (optional)').fill('Asked not to be called again');
    await page.getByRole('button', { name: 'Add to the list' }).click();
    await page.getByText('+14155550777 added: calls to it will be refused.').waitFor();
    await expectAccessible(page);
    await screenshot(page, 'do-not-call-list');

    await createAgentInBrowser(page, 'Careful caller');
    await publish(page, 'Publish version 1');
    await page.getByLabel('Phone number to call').fill('+14155550777');
    await page.getByRole('button', { name: 'Place call' }).click();
    await page
      .locator('#test-call')
      .getByText('The number is on the tenant’s do-not-call list; no call was placed.')
      .waitFor();
    expect(new URL(page.url()).pathname).toMatch(/\/console\/agents\/agt_\w+\/calls$/);

    await page.goto('/console/do-not-call?phone=%2B14155550777');
    page.once('dialog', (dialog) => dialog.accept());
    await page.getByRole('button', { name: 'Remove' }).click();
    await page.getByText('+14155550777 removed: calls to it are allowed again.').waitFor();
    await page.getByText('The list is empty').waitFor();
    await context.close();
  }, 180_000);
});
