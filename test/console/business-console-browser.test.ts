/**
 * The console's business pages in a real browser, at 1366 and 390 px: the overview with its revenue
 * and recent activity, calls analytics (charts with their tables, the range refused beside its
 * field), the webhooks list with each endpoint's health, an endpoint's page with "Send test event",
 * and a delivery's request and response with "Resend". Every page passes axe, none is wider than
 * the screen, and each leaves a screenshot under test-results/console/.
 */
import type { Browser, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { agentFixture } from '../calls/helpers.js';
import { type Receiver, startReceiver } from '../events/helpers.js';
import { createPlan, createUser } from '../support/app.js';
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

warnWithoutChromium('console/business-console');

const clock = new ManualClock(new Date('2026-11-18T09:00:00Z'));
let f: ConsoleFixture;
let browser: Browser | undefined;
let receiver: Receiver;
let endpointId: string;

async function placeCalls(tenant: ConsoleFixture['tenant'], agentId: string, phones: string[]) {
  for (const phone of phones) {
    const placed = await tenant.request('POST', '/api/v1/calls', { agent_id: agentId, phone });
    expect(placed.status, placed.raw).toBe(202);
  }
  await f.t.services.jobRunner.drain();
  clock.advance(61_000);
  await f.t.services.jobRunner.drain();
}

beforeAll(async () => {
  f = await startConsole({
    clock,
    env: { SIMULATED_CALL_SECONDS: '60', WEBHOOK_ALLOW_PRIVATE: 'true' },
    adapters: () => ({ resolveHost: async () => [{ address: '93.184.215.14', family: 4 }] }),
  });
  if (!hasChromium) return;
  browser = await launchBrowser();
  receiver = await startReceiver();
  receiver.answerBody = JSON.stringify({ received: true, note: 'thanks' });
  const endpoint = await f.tenant.request('POST', '/api/v1/webhook-endpoints', {
    url: receiver.url,
    events: ['*'],
    description: 'CRM sync',
  });
  receiver.secret = endpoint.body.data.secret;
  endpointId = endpoint.body.data.id;
  const failing = await f.tenant.request('POST', '/api/v1/webhook-endpoints', {
    url: 'http://127.0.0.1:1/unreachable-receiver-with-a-long-path/events/voiceplane',
    events: ['call.failed'],
    description: 'Old billing system',
  });
  expect(failing.status).toBe(201);

  const desk = await agentFixture(f.t, { tenant: f.tenant, credits: 2000, agent: { name: 'Front desk' } });
  const renewals = await agentFixture(f.t, { tenant: f.tenant, credits: 2000, agent: { name: 'Renewals' } });
  const numbers = (n: number, offset: number) =>
    Array.from({ length: n }, (_, i) => `+1415555${String(offset + i).padStart(4, '0')}`);
  for (let day = 0; day < 3; day++) {
    await placeCalls(f.tenant, desk.agent.id, [...numbers(3 + day, 1000 + day * 10), '+14155550000']);
    await placeCalls(f.tenant, renewals.agent.id, [...numbers(2, 2000 + day * 10), '+14155559999']);
    clock.advance(24 * 3600_000);
  }
  const plan = await createPlan(f.t, f.tenant.id, { name: 'Growth', monthly_price: 4900, topup_rate: 0.12 });
  const user = await createUser(f.tenant, { name: 'Grace Hopper' });
  await f.tenant.request('POST', '/api/v1/subscriptions', { user_id: user.id, plan_id: plan.id });
  await f.tenant.request('POST', `/api/v1/users/${user.id}/top-ups`, { minutes: 250 });
  await f.t.services.jobRunner.drain();
}, 180_000);
afterAll(async () => {
  await browser?.close();
  await receiver?.close();
  await f?.close();
});

/** No page wider than the screen, axe content, and a screenshot named after the page and width. */
async function check(page: Page, name: string, width: number) {
  await expectAccessible(page);
  const scrollWidth = await page.evaluate(
    () =>
      (globalThis as unknown as { document: { documentElement: { scrollWidth: number } } }).document
        .documentElement.scrollWidth,
  );
  expect(scrollWidth, `${page.url()} at ${width} px is ${scrollWidth} px wide`).toBeLessThanOrEqual(width);
  await screenshot(page, `${name}-${width}`);
}

describe.skipIf(!hasChromium)('the business pages in a browser', BROWSER_WALK, () => {
  for (const width of [1366, 390]) {
    it(`overview, analytics and webhooks at ${width} px`, { timeout: 120_000 }, async () => {
      const { context, page } = await signedIn(browser!, f.origin, f.owner, { width, height: 900 });
      await page.goto('/console');
      await page.getByRole('heading', { name: 'Recent activity' }).waitFor();
      expect(await page.getByText('Billed this month').count()).toBe(1);
      await check(page, 'business-overview', width);

      await page.goto('/console/analytics');
      await page.getByRole('heading', { name: 'Outcomes per day' }).waitFor();
      await check(page, 'business-analytics', width);
      // The numbers of each chart are a table away.
      await page.locator('details.chart-table summary').first().click();
      await expect
        .poll(() => page.locator('.table-wrap[aria-label="Outcomes per day"]').isVisible())
        .toBe(true);

      await page.getByLabel('From (UTC)').fill('2026-11-30');
      await page.getByLabel('To (UTC), included').fill('2026-11-01');
      await page.getByRole('button', { name: 'Show' }).click();
      await page.getByText('From (UTC) must be on or before the end date.').waitFor();
      await check(page, 'business-analytics-refused', width);

      await page.goto('/console/webhooks');
      await page
        .getByText('Failing since')
        .first()
        .waitFor()
        .catch(() => undefined);
      await check(page, 'business-webhooks', width);

      await page.goto(`/console/webhooks/${endpointId}`);
      await page.getByRole('button', { name: 'Send test event' }).click();
      await page.waitForURL(/\/deliveries\/del_/);
      await f.t.services.jobRunner.drain();
      await page.reload();
      await page.getByText('HTTP 200').waitFor();
      await check(page, 'business-delivery', width);

      await page.getByRole('button', { name: 'Resend' }).click();
      await page.getByText('Delivery resent').waitFor();
      await f.t.services.jobRunner.drain();
      await page.reload();
      await page.getByText('HTTP 200').waitFor();
      expect(await page.getByRole('link', { name: /^del_/ }).count()).toBe(1); // the delivery it resends

      await page.goto(`/console/webhooks/${endpointId}`);
      await check(page, 'business-endpoint', width);
      await context.close();
    });
  }
});
