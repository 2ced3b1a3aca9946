/**
 * Top-ups on the console's user page in a real browser: the price follows the minutes typed, the
 * card on file is charged and the top-up is listed beside an earlier declined one; minutes out of
 * range are refused beside the field. Each state passes axe and leaves a screenshot under
 * test-results/console/.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createPlan } from '../support/app.js';
import { addCard, balance, subscribedUser, topUp } from '../top-ups/helpers.js';
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

warnWithoutChromium('console/top-ups');

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

describe.skipIf(!hasChromium)('top-ups on the user page, in a browser', BROWSER_WALK, () => {
  it('prices the minutes as they are typed, charges the card, lists the top-up, and refuses 0 beside the field', async () => {
    const world = {
      tenant: f.tenant,
      cardPlan: await createPlan(f.t, f.tenant.id, {
        name: 'Growth',
        provider: 'processor',
        included_minutes: 100,
        topup_rate: 0.1,
      }),
      agencyPlan: await createPlan(f.t, f.tenant.id, { name: 'Agency', provider: 'agency' }),
    };
    const user = await subscribedUser(f.t, world, world.cardPlan.id);
    // An earlier attempt with a card that was declined, then a working card again.
    await addCard(f.t, user.id, 'pm_card_chargeDeclined');
    expect((await topUp(f.tenant, user.id, { minutes: 60 })).status).toBe(422);
    await addCard(f.t, user.id);

    const { context, page } = await signedIn(browser!, f.origin, f.owner);
    await page.goto(`/console/users/${user.id}`);
    const minutes = page.getByLabel('Minutes to top up');
    await expect(minutes.getAttribute('id')).resolves.toBe('top_up_minutes');
    await minutes.fill('250');
    await page.getByText('250 minutes cost $25.00 at $0.10 a minute').waitFor();
    await page.getByRole('button', { name: 'Top up and charge the card' }).click();
    await page.getByText('250 minutes added ($25.00 charged to the client’s card on file)').waitFor();
    expect(await balance(f.t, user.id)).toBe(350);
    const rows = page.locator('#top-ups tbody tr');
    await expect(rows.count()).resolves.toBe(2);
    await expect(rows.first().innerText()).resolves.toMatch(/250\s+\$25\.00\s+Card on file\s+succeeded/);
    await expect(rows.nth(1).innerText()).resolves.toMatch(
      /60\s+\$6\.00\s+Card on file\s+declined\s+generic_decline/,
    );
    await expectAccessible(page);
    await screenshot(page, 'user-top-up');

    await page.locator('#top_up_minutes').fill('0');
    await page.getByRole('button', { name: 'Top up and charge the card' }).click();
    await page.locator('#top_up_minutes-error').waitFor();
    await expect(page.locator('#top_up_minutes-error').innerText()).resolves.toBe(
      'Enter a whole number of minutes from 1 to 100,000.',
    );
    expect(await balance(f.t, user.id)).toBe(350);
    await expectAccessible(page);
    await screenshot(page, 'user-top-up-refused');

    // The narrow screen: the form and the list stack.
    await page.setViewportSize({ width: 390, height: 844 });
    await page.goto(`/console/users/${user.id}`);
    await expectAccessible(page);
    await screenshot(page, 'user-top-up-narrow');
    await context.close();
  });
});
