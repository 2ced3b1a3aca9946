/**
 * Buying minutes in the portal over HTTP: agency-billed users credited at once (and told the agency
 * invoices them), processor-billed users charged on their card on file through the simulated
 * processor, exactly once per rendered form (double submit, refresh, a lost processor answer), a
 * declined card crediting nothing, CSRF, other users, bounds beside the field, users without a
 * plan — and nothing of the platform's name on any of it.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ProcessorUnavailableError } from '../../src/billing/processor.js';
import { createSimulatedProcessor, type SimulatedProcessor } from '../../src/billing/simulator/adapter.js';
import { systemClock } from '../../src/core/clock.js';
import { createPlan, createUser, type TestApp } from '../support/app.js';
import { addCard, balance, ledgerOf } from '../top-ups/helpers.js';
import {
  type Agency,
  type Client,
  createAgency,
  type PageResponse,
  portalClient,
  startPortalApp,
  USER_PASSWORD,
} from './helpers.js';

let t: TestApp;
let simulated: SimulatedProcessor;
/** Set to make the next charge go through at the processor but its answer get lost. */
let loseNextAnswer = false;
let acme: Agency;
let cardPlan: { id: string };
let invoicePlan: { id: string };

const formKeyIn = (body: string) => /name="form_key" value="([^"]+)"/.exec(body)?.[1];
const charges = () => simulated.calls.chargeCustomer;

function expectUnbranded(page: PageResponse) {
  expect(page.body).not.toMatch(/voiceplane/i);
}

/** A user of Acme on `planId` (a card first when it is the card plan), signed in on a client of their own. */
async function signedInUser(planId: string | null, card?: string) {
  const user = await createUser(acme.tenant, { password: USER_PASSWORD, name: 'Grace Hopper' });
  if (planId === cardPlan.id) await addCard(t, user.id);
  if (planId) {
    const sub = await acme.tenant.request('POST', '/api/v1/subscriptions', {
      user_id: user.id,
      plan_id: planId,
    });
    if (sub.status !== 201) throw new Error(`subscription: ${sub.raw}`);
  }
  if (card) await addCard(t, user.id, card);
  const client = portalClient(t);
  const signedIn = await client.signIn(acme.base, user.email, USER_PASSWORD);
  expect(signedIn.status).toBe(303);
  const account: Client = { id: user.id, email: user.email, password: USER_PASSWORD };
  return { user: account, client };
}

/** Opens the Minutes page and returns its form key. */
async function openForm(client: ReturnType<typeof portalClient>) {
  const page = await client.get(`${acme.base}/top-ups`);
  expect(page.status).toBe(200);
  const key = formKeyIn(page.body);
  expect(key).toBeDefined();
  return { page, key: key! };
}

beforeAll(async () => {
  t = await startPortalApp({
    env: { PASSWORD_HASH_MEMORY_KIB: '1024', PROCESSOR: 'simulated' },
    adapters: ({ database }) => {
      simulated = createSimulatedProcessor({ db: database.db, clock: systemClock });
      const processor = new Proxy(simulated, {
        get(target, name, receiver) {
          if (name !== 'chargeCustomer') return Reflect.get(target, name, receiver);
          return async (...args: Parameters<SimulatedProcessor['chargeCustomer']>) => {
            const charge = await target.chargeCustomer(...args);
            if (loseNextAnswer) {
              loseNextAnswer = false;
              throw new ProcessorUnavailableError('the answer was lost');
            }
            return charge;
          };
        },
      });
      return { processor };
    },
  });
  acme = await createAgency(t, { name: 'Acme Dental Voice', color: '#0f766e' });
  cardPlan = await createPlan(t, acme.tenant.id, {
    name: 'Card Pro',
    provider: 'processor',
    included_minutes: 100,
    topup_rate: 0.1,
  });
  invoicePlan = await createPlan(t, acme.tenant.id, {
    name: 'Invoice Plus',
    provider: 'agency',
    currency: 'eur',
    included_minutes: 50,
    topup_rate: 0.08,
  });
});
afterAll(() => t?.close());

describe('the Minutes page', () => {
  it('offers the overview’s "Buy minutes" button and prices the presets in the plan’s currency', async () => {
    const { client } = await signedInUser(invoicePlan.id);
    const overview = await client.get(acme.base);
    expect(overview.body).toContain(`href="${acme.base}/top-ups">Buy minutes</a>`);
    expect(overview.body).not.toContain('To buy more minutes, contact');
    expect(overview.body).toContain(`mailto:help@${acme.slug}.example`); // still in the footer

    const { page } = await openForm(client);
    expect(page.body).toContain('€0.08');
    expect(page.body).toMatch(/100 minutes<\/span>\s*<span class="choice-price">€8\.00/);
    expect(page.body).toMatch(/2,500 minutes<\/span>\s*<span class="choice-price">€200\.00/);
    expect(page.body).toContain('Acme Dental Voice will invoice you for them');
    expect(page.body).toContain('No purchases yet');
    expectUnbranded(page);
  });

  it('tells a user without a plan why they cannot buy, and a forged purchase buys nothing', async () => {
    const { user, client } = await signedInUser(null);
    const page = await client.get(`${acme.base}/top-ups`);
    const key = 'k'.repeat(24);
    expect(page.status).toBe(200);
    expect(page.body).toContain('You cannot buy minutes right now');
    expect(page.body).toContain('you have no plan at the moment');
    expect(formKeyIn(page.body)).toBeUndefined();
    expect((await client.get(acme.base)).body).toContain('To buy more minutes, contact');

    const forged = await client.post(`${acme.base}/top-ups`, {
      confirm: 'yes',
      minutes: '100',
      form_key: key,
    });
    expect(forged.status).toBe(422);
    expect(forged.body).toContain('This purchase could not be made, and nothing was charged.');
    expect(await balance(t, user.id)).toBe(0);
  });
});

describe('buying minutes', () => {
  it('credits an agency-billed user at once, records it for the agency’s invoice, and shows the new balance', async () => {
    const { user, client } = await signedInUser(invoicePlan.id);
    const before = charges();
    const { key } = await openForm(client);
    const bought = await client.post(`${acme.base}/top-ups`, {
      confirm: 'yes',
      minutes: '100',
      form_key: key,
    });
    expect(bought.status).toBe(303);
    expect(bought.headers.location).toBe(`${acme.base}/top-ups`);

    const after = await client.get(`${acme.base}/top-ups`);
    expect(after.body).toContain(
      '100 minutes added (€8.00 to be invoiced by Acme Dental Voice). You now have 150 minutes.',
    );
    expect(after.body).toMatch(/Minutes left<\/h2>\s*<p class="stat-value">150</);
    expect(after.body).toContain('Invoice from Acme Dental Voice');
    expectUnbranded(after);
    expect(charges()).toBe(before);

    const listed = await acme.tenant.request('GET', `/api/v1/users/${user.id}/top-ups`);
    expect(listed.body.data).toHaveLength(1);
    expect(listed.body.data[0]).toMatchObject({
      minutes: 100,
      amount: 800,
      currency: 'eur',
      billing: 'agency',
    });
  });

  it('charges a processor-billed user’s card on file, once, for another amount', async () => {
    const { user, client } = await signedInUser(cardPlan.id);
    const { page, key } = await openForm(client);
    expect(page.body).toContain('charged to your card on file');
    const before = charges();
    const bought = await client.post(`${acme.base}/top-ups`, {
      confirm: 'yes',
      minutes: 'other',
      other_minutes: '250',
      form_key: key,
    });
    expect(bought.status).toBe(303);
    const after = await client.get(`${acme.base}/top-ups`);
    expect(after.body).toContain(
      '250 minutes added ($25.00 charged to your card on file). You now have 350 minutes.',
    );
    expect(after.body).toContain('Card on file');
    expect(charges()).toBe(before + 1);
    expect(await balance(t, user.id)).toBe(350);
    expect((await ledgerOf(t, user.id)).topUps).toHaveLength(1);
  });

  it('pre-selects no amount, and shows the minutes and the price before charging anything', async () => {
    const { user, client } = await signedInUser(cardPlan.id);
    const { page, key } = await openForm(client);
    expect(page.body).not.toMatch(/name="minutes" value="\d+" checked/);
    const before = charges();
    const review = await client.post(`${acme.base}/top-ups`, { minutes: '500', form_key: key });
    expect(review.status).toBe(200);
    expect(review.body).toContain('Confirm your purchase');
    expect(review.body).toMatch(/500 minutes<\/strong>/);
    expect(review.body).toMatch(/Pay \$\d/);
    expect(review.body).toContain(`name="form_key" value="${key}"`);
    expect(charges()).toBe(before);
    expect((await ledgerOf(t, user.id)).topUps).toHaveLength(0);
  });

  it('charges once when the same form is sent twice at once and again after (double click, refresh)', async () => {
    const { user, client } = await signedInUser(cardPlan.id);
    const { key } = await openForm(client);
    const before = charges();
    const fields = { minutes: '500', form_key: key, confirm: 'yes' };
    const [first, second] = await Promise.all([
      client.post(`${acme.base}/top-ups`, fields),
      client.post(`${acme.base}/top-ups`, fields),
    ]);
    const refresh = await client.post(`${acme.base}/top-ups`, fields);
    for (const answer of [first, second, refresh]) expect(answer.status).toBe(303);
    expect(charges()).toBe(before + 1);
    const ledger = await ledgerOf(t, user.id);
    expect(ledger.topUps).toHaveLength(1);
    expect(await balance(t, user.id)).toBe(600);
    const listed = await acme.tenant.request('GET', `/api/v1/users/${user.id}/top-ups`);
    expect(listed.body.data).toHaveLength(1);

    // The same key with another amount buys nothing more and says why.
    const changed = await client.post(`${acme.base}/top-ups`, {
      confirm: 'yes',
      minutes: '100',
      form_key: key,
    });
    expect(changed.status).toBe(409);
    expect(changed.body).toContain('This form was already used to buy another amount.');
    expect(charges()).toBe(before + 1);
  });

  it('finishes a purchase whose processor answer was lost with the same form, without a second charge', async () => {
    const { user, client } = await signedInUser(cardPlan.id);
    const { key } = await openForm(client);
    const before = charges();
    loseNextAnswer = true;
    const lost = await client.post(`${acme.base}/top-ups`, { confirm: 'yes', minutes: '100', form_key: key });
    expect(lost.status).toBe(503);
    expect(lost.body).toContain('you will not be charged twice');
    expect(formKeyIn(lost.body)).toBe(key);
    expect(await balance(t, user.id)).toBe(100);

    const retried = await client.post(`${acme.base}/top-ups`, {
      confirm: 'yes',
      minutes: '100',
      form_key: key,
    });
    expect(retried.status).toBe(303);
    expect(charges()).toBe(before + 1);
    expect(await balance(t, user.id)).toBe(200);
  });

  it('says a declined card was declined, credits nothing, and a resend does not try the card again', async () => {
    const { user, client } = await signedInUser(cardPlan.id, 'pm_card_chargeDeclined');
    const { key } = await openForm(client);
    const before = charges();
    const declined = await client.post(`${acme.base}/top-ups`, {
      confirm: 'yes',
      minutes: '100',
      form_key: key,
    });
    expect(declined.status).toBe(422);
    expect(declined.body).toContain(
      'Your card was declined, so nothing was charged and no minutes were added.',
    );
    expect(declined.body).toContain(`mailto:help@${acme.slug}.example`);
    expect(declined.body).toContain('card declined');
    expectUnbranded(declined);
    // A new purchase needs a new key; the declined one answers declined again without a charge.
    expect(formKeyIn(declined.body)).not.toBe(key);
    const resent = await client.post(`${acme.base}/top-ups`, {
      confirm: 'yes',
      minutes: '100',
      form_key: key,
    });
    expect(resent.status).toBe(422);
    expect(charges()).toBe(before + 1);
    expect(await balance(t, user.id)).toBe(100);
    expect((await ledgerOf(t, user.id)).topUps).toHaveLength(0);
  });
});

describe('what cannot buy', () => {
  it('refuses a purchase without the CSRF token (403) and buys nothing', async () => {
    const { user, client } = await signedInUser(cardPlan.id);
    const { key } = await openForm(client);
    const before = charges();
    const refused = await client.post(
      `${acme.base}/top-ups`,
      { minutes: '100', form_key: key },
      { csrf: false },
    );
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('This form has expired');
    expect(charges()).toBe(before);
    expect(await balance(t, user.id)).toBe(100);
  });

  it('never lets another user’s session buy for this user, nor replay their form', async () => {
    const grace = await signedInUser(cardPlan.id);
    const alan = await signedInUser(invoicePlan.id);
    const { key } = await openForm(grace.client);
    const graceToken = grace.client.csrfToken()!;

    // Grace's page's token in Alan's session: the token is bound to her session.
    const lifted = await alan.client.post(
      `${acme.base}/top-ups`,
      { minutes: '100', form_key: key, user_id: grace.user.id },
      { csrf: graceToken },
    );
    expect(lifted.status).toBe(403);

    // Grace buys; Alan sends her form key (and her id) with his own token: it is his own purchase.
    expect(
      (await grace.client.post(`${acme.base}/top-ups`, { confirm: 'yes', minutes: '100', form_key: key }))
        .status,
    ).toBe(303);
    await openForm(alan.client);
    const own = await alan.client.post(`${acme.base}/top-ups`, {
      confirm: 'yes',
      minutes: '100',
      form_key: key,
      user_id: grace.user.id,
    });
    expect(own.status).toBe(303);
    expect(await balance(t, grace.user.id)).toBe(200);
    expect((await ledgerOf(t, grace.user.id)).topUps).toHaveLength(1);
    expect(await balance(t, alan.user.id)).toBe(150);

    // Signed out: nobody to buy for.
    const anonymous = portalClient(t);
    await anonymous.get(`${acme.base}/sign-in`);
    const signedOut = await anonymous.post(`${acme.base}/top-ups`, {
      confirm: 'yes',
      minutes: '100',
      form_key: key,
    });
    expect(signedOut.status).toBe(401);
    expect(await balance(t, grace.user.id)).toBe(200);
  });

  it('refuses amounts out of bounds beside the field, and buys nothing', async () => {
    const { user, client } = await signedInUser(cardPlan.id);
    const { key } = await openForm(client);
    const before = charges();
    for (const other of ['0', '100001', '12.5', 'lots']) {
      const refused = await client.post(`${acme.base}/top-ups`, {
        confirm: 'yes',
        minutes: 'other',
        other_minutes: other,
        form_key: key,
      });
      expect(refused.status, other).toBe(422);
      expect(refused.body).toContain('Nothing was bought: fix the amount marked below.');
      expect(refused.body).toMatch(
        /aria-invalid="true">\s*<p class="hint"[^>]*>[^<]*<\/p>\s*<p class="error" id="other_minutes-error">Enter a whole number from 1 to 100,000\.<\/p>/,
      );
      // What was typed stays in the field, and the form keeps its key.
      expect(refused.body).toContain(`value="${other}"`);
      expect(formKeyIn(refused.body)).toBe(key);
    }
    const empty = await client.post(`${acme.base}/top-ups`, {
      confirm: 'yes',
      minutes: 'other',
      form_key: key,
    });
    expect(empty.body).toContain('Enter how many minutes to buy.');
    const both = await client.post(`${acme.base}/top-ups`, {
      confirm: 'yes',
      minutes: '500',
      other_minutes: '750',
      form_key: key,
    });
    expect(both.status).toBe(422);
    expect(both.body).toContain('To buy 750 minutes choose “Another amount”');
    const unknown = await client.post(`${acme.base}/top-ups`, {
      confirm: 'yes',
      minutes: '7',
      form_key: key,
    });
    expect(unknown.body).toContain('Choose how many minutes to buy.');
    const keyless = await client.post(`${acme.base}/top-ups`, { confirm: 'yes', minutes: '100' });
    expect(keyless.status).toBe(422);
    expect(keyless.body).toContain('This form is out of date and nothing was bought.');
    expect(charges()).toBe(before);
    expect(await balance(t, user.id)).toBe(100);
  });

  it('shows the service’s refusal of an amount that rounds to nothing beside the field', async () => {
    const tiny = await createPlan(t, acme.tenant.id, {
      name: 'Tiny rate',
      provider: 'agency',
      included_minutes: 10,
      topup_rate: 0.000001,
    });
    const { user, client } = await signedInUser(tiny.id);
    const { key } = await openForm(client);
    const refused = await client.post(`${acme.base}/top-ups`, {
      confirm: 'yes',
      minutes: 'other',
      other_minutes: '20',
      form_key: key,
    });
    expect(refused.status).toBe(422);
    expect(refused.body).toMatch(
      /<p class="error" id="other_minutes-error">This amount costs less than the smallest amount in USD: buy more minutes\.<\/p>/,
    );
    expect(await balance(t, user.id)).toBe(10);
  });
});
