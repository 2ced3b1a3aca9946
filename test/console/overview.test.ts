/**
 * The overview page: the numbers an agency looks at first agree with what happened (users,
 * active subscriptions, minutes billed this month, calls today, calls per day), a new tenant
 * sees its first steps, and the page passes axe in a browser.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { agentFixture } from '../calls/helpers.js';
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
import { consoleClient } from './http.js';

warnWithoutChromium('console/overview');

const clock = new ManualClock(new Date('2026-11-20T09:00:00Z'));
let f: ConsoleFixture;
let browser: Browser | undefined;

async function placeCalls(fixture: ConsoleFixture, webhookAgent: { id: string }, count: number) {
  for (let i = 0; i < count; i++) {
    const placed = await fixture.tenant.request('POST', '/api/v1/calls', {
      agent_id: webhookAgent.id,
      phone: `+1415555${String(1000 + i).padStart(4, '0')}`,
      context: { name: 'Ada', product: 'solar' },
    });
    expect(placed.status).toBe(202);
  }
  // Dispatch, answer and end every call at this clock's time (simulated calls last 60 s here).
  await fixture.t.services.jobRunner.drain();
  clock.advance(61_000);
  await fixture.t.services.jobRunner.drain();
}

beforeAll(async () => {
  f = await startConsole({ clock, env: { SIMULATED_CALL_SECONDS: '60' } });
  if (hasChromium) browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await f?.close();
});

describe('the overview', () => {
  it('shows the first steps to a new agency', async () => {
    const client = consoleClient(f.t);
    await client.signIn(f.owner.email, f.owner.password);
    const page = await client.get('/console');
    expect(page.status).toBe(200);
    expect(page.body).toContain('Get started');
    expect(page.body).toContain('Create an API key');
  });

  it('counts users, subscriptions, minutes this month and calls per day', async () => {
    const { agent, userId } = await agentFixture(f.t, { tenant: f.tenant, credits: 1000 });
    const plan = await createPlan(f.t, f.tenant.id);
    const subscribed = await f.tenant.request('POST', '/api/v1/subscriptions', {
      user_id: userId,
      plan_id: plan.id,
    });
    expect(subscribed.status).toBe(201);
    await placeCalls(f, agent, 2); // Nov 20
    clock.advance(2 * 24 * 3600_000); // Nov 22
    await placeCalls(f, agent, 3);

    const client = consoleClient(f.t);
    await client.signIn(f.owner.email, f.owner.password);
    const page = (await client.get('/console')).body;
    const stat = (label: string) => new RegExp(`${label}</p><p class="stat-value">([^<]+)<`).exec(page)?.[1];
    expect(stat('Users')).toBe('1');
    expect(stat('Active subscriptions')).toBe('1');
    expect(stat('Calls today')).toBe('3');
    expect(stat('Minutes used')).toBe('5'); // five answered calls of 60 s, one minute each
    expect(page).toContain('aria-label="Calls per day for the last 14 days: 5 in all"');
    expect(page).toContain(
      '<td>2026-11-22</td><td class="numeric">3</td><td class="numeric">3</td><td class="numeric">3</td>',
    );
    expect(page).toContain('<td>2026-11-20</td><td class="numeric">2</td>');
    expect(page).not.toContain('Get started');
  });
});

describe.skipIf(!hasChromium)('the overview in a browser', BROWSER_WALK, () => {
  it('passes axe and looks right, wide and narrow', async () => {
    const { context, page } = await signedIn(browser!, f.origin, f.owner);
    await page.getByRole('heading', { name: 'Overview' }).waitFor();
    await expectAccessible(page);
    await screenshot(page, 'overview');
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, 'overview-narrow');
    await context.close();
  });
});
