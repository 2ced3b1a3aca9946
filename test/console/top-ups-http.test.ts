/**
 * Top-ups from the console's user page over plain HTTP (docs/wallets.md): an admin tops up an
 * agency-billed user (credited, listed, recorded for invoicing) and a processor-billed user (the
 * card charged once even when the same form is posted twice, in a row or at once); a declined card
 * says so and credits nothing; the users who cannot be topped up say why; a viewer sees the list
 * without the form and a forged POST is 403; no CSRF token is 403; another tenant's user is the 404
 * page; minutes out of range are refused beside the field. Nothing changes on any refusal.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedProcessor } from '../../src/billing/simulator/adapter.js';
import { createPlan, createTenant, type TestTenant } from '../support/app.js';
import { addCard, balance, createUser, ledgerOf, subscribedUser, type World } from '../top-ups/helpers.js';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { type ConsoleClient, consoleClient, type PageResponse } from './http.js';

let f: ConsoleFixture;
let world: World;
let admin: ConsoleClient;

async function worldOf(tenant: TestTenant): Promise<World> {
  return {
    tenant,
    cardPlan: await createPlan(f.t, tenant.id, {
      name: 'Card',
      provider: 'processor',
      included_minutes: 100,
      topup_rate: 0.1,
    }),
    agencyPlan: await createPlan(f.t, tenant.id, {
      name: 'Agency',
      provider: 'agency',
      currency: 'eur',
      included_minutes: 50,
      topup_rate: 0.08,
    }),
  };
}

beforeAll(async () => {
  f = await startConsole();
  world = await worldOf(f.tenant);
  const member = await f.addMember('admin');
  admin = consoleClient(f.t);
  expect((await admin.signIn(member.email, member.password)).status).toBe(303);
});
afterAll(() => f?.close());

const charges = () => (f.t.services.processor as SimulatedProcessor).calls.chargeCustomer;
/** The form key of the "Top up" form (the user page holds other forms too). */
const formKeyIn = (page: PageResponse) =>
  /top-ups#top-up"[^>]*>[^<]*<input[^>]*>\s*<input type="hidden" name="form_key" value="([^"]+)"/.exec(
    page.body,
  )?.[1];

/** The user's page, and the one-time key of its Top up form. */
async function openUser(client: ConsoleClient, userId: string) {
  const page = await client.get(`/console/users/${userId}`);
  expect(page.status).toBe(200);
  return { page, formKey: formKeyIn(page) };
}

async function topUpsOf(tenant: TestTenant, userId: string) {
  const list = await tenant.request('GET', `/api/v1/users/${userId}/top-ups`);
  expect(list.status).toBe(200);
  return list.body.data as any[];
}

/** Balance, ledger, top-ups and charges: what a refusal must leave as it was. */
async function stateOf(tenant: TestTenant, userId: string) {
  return {
    balance: await balance(f.t, userId),
    ledger: (await ledgerOf(f.t, userId)).sum,
    topUps: (await topUpsOf(tenant, userId)).length,
    charges: charges(),
  };
}

describe('an admin tops a user up', () => {
  it('credits an agency-billed user at once, records it for invoicing and lists it', async () => {
    const user = await subscribedUser(f.t, world, world.agencyPlan.id);
    const { page, formKey } = await openUser(admin, user.id);
    expect(page.body).toContain('<h2 id="top-up-title">Top up</h2>');
    expect(page.body).toContain('recorded for your invoicing');
    expect(page.body).toContain('€0.08 a minute');
    expect(page.body).toContain('No top-ups yet');
    expect(formKey).toBeDefined();
    const before = charges();

    const answer = await admin.post(`/console/users/${user.id}/top-ups`, {
      minutes: '120',
      form_key: formKey!,
    });
    expect(answer.status).toBe(303);
    expect(answer.headers.location).toBe(`/console/users/${user.id}#top-ups`);
    expect(await balance(f.t, user.id)).toBe(170);
    expect(charges()).toBe(before);

    const [topUp, ...more] = await topUpsOf(f.tenant, user.id);
    expect(more).toHaveLength(0);
    expect(topUp).toMatchObject({
      minutes: 120,
      amount: 960,
      currency: 'eur',
      billing: 'agency',
      status: 'succeeded',
    });
    expect((await ledgerOf(f.t, user.id)).topUps).toEqual([
      { minutes: 120, reference: `top_up:${topUp.id}` },
    ]);

    const after = await admin.get(`/console/users/${user.id}`);
    expect(after.body).toContain(
      '120 minutes added (€9.60 recorded for your invoicing); the balance is 170 minutes.',
    );
    const row =
      /<section class="panel panel-flush" id="top-ups"[\s\S]*?<\/section>/.exec(after.body)?.[0] ?? '';
    expect(row).toContain('>120<');
    expect(row).toContain('€9.60');
    expect(row).toContain('Your invoicing');
    expect(row).toContain('succeeded');
    // A rendered form is new each time: the next top-up is another key.
    expect(formKeyIn(after)).not.toBe(formKey);
  });

  it("charges a processor-billed user's card once, even when the same form is posted twice", async () => {
    const user = await subscribedUser(f.t, world, world.cardPlan.id);
    const { page, formKey } = await openUser(admin, user.id);
    expect(page.body).toContain('Charged to the client’s card on file');
    expect(page.body).toContain('Top up and charge the card');
    const before = charges();

    const url = `/console/users/${user.id}/top-ups`;
    const first = await admin.post(url, { minutes: '30', form_key: formKey! });
    // A double click or a refresh of the POST: the same form again.
    const again = await admin.post(url, { minutes: '30', form_key: formKey! });
    for (const answer of [first, again]) {
      expect(answer.status).toBe(303);
      expect(answer.headers.location).toBe(`/console/users/${user.id}#top-ups`);
    }
    expect(charges()).toBe(before + 1);
    expect(await balance(f.t, user.id)).toBe(130);
    const list = await topUpsOf(f.tenant, user.id);
    expect(list).toHaveLength(1);
    expect(list[0]).toMatchObject({
      minutes: 30,
      amount: 300,
      currency: 'usd',
      billing: 'processor',
      status: 'succeeded',
    });
    expect(list[0].processor_charge_id).toBeTruthy();
    const flash = await admin.get(`/console/users/${user.id}`);
    expect(flash.body).toContain('30 minutes added ($3.00 charged to the client’s card on file)');

    // Two posts of one form at the same moment: still one charge.
    const next = formKeyIn(flash)!;
    const racing = await Promise.all([
      admin.post(url, { minutes: '10', form_key: next }),
      admin.post(url, { minutes: '10', form_key: next }),
    ]);
    expect(racing.some((answer) => answer.status === 303)).toBe(true);
    for (const answer of racing) expect([303, 409]).toContain(answer.status);
    expect(charges()).toBe(before + 2);
    expect(await balance(f.t, user.id)).toBe(140);
    expect(await topUpsOf(f.tenant, user.id)).toHaveLength(2);

    // The same key with other minutes is refused on the page (never a second top-up).
    const reused = await admin.post(url, { minutes: '11', form_key: next });
    expect(reused.status).toBe(409);
    expect(reused.body).toContain('already sent with another number of minutes');
    expect(charges()).toBe(before + 2);
  });

  it('says a declined card was declined and credits nothing, however often the form is sent', async () => {
    const user = await subscribedUser(f.t, world, world.cardPlan.id, 'pm_card_chargeDeclined');
    const { formKey } = await openUser(admin, user.id);
    const before = await stateOf(f.tenant, user.id);

    const url = `/console/users/${user.id}/top-ups`;
    const declined = await admin.post(url, { minutes: '40', form_key: formKey! });
    expect(declined.status).toBe(422);
    expect(declined.body).toMatch(
      /role="alert">The client’s card was declined \(generic_decline\): nothing was charged and no minutes were added/,
    );
    // The minutes stay in the form, with a new key for another attempt.
    expect(declined.body).toContain('value="40"');
    expect(formKeyIn(declined)).not.toBe(formKey);
    expect(await balance(f.t, user.id)).toBe(before.balance);
    expect((await ledgerOf(f.t, user.id)).topUps).toEqual([]);
    const [listed, ...more] = await topUpsOf(f.tenant, user.id);
    expect(more).toHaveLength(0);
    expect(listed).toMatchObject({ status: 'declined', decline_code: 'generic_decline', minutes: 40 });
    expect(declined.body).toContain('<code>generic_decline</code>');
    const charged = charges();

    // The same form again answers the same decline: no second charge, no second top-up.
    const again = await admin.post(url, { minutes: '40', form_key: formKey! });
    expect(again.status).toBe(422);
    expect(again.body).toContain('card was declined');
    expect(charges()).toBe(charged);
    expect(await topUpsOf(f.tenant, user.id)).toHaveLength(1);
    expect(await balance(f.t, user.id)).toBe(before.balance);
  });

  it('says why a user without a plan, a blocked user or a processor user without a card cannot be topped up', async () => {
    const bareId = (await createUser(f.tenant)).id;
    const barePage = await openUser(admin, bareId);
    expect(barePage.page.body).toContain('The user has no active or trialing subscription');
    expect(barePage.formKey).toBeUndefined();

    const blocked = await subscribedUser(f.t, world, world.agencyPlan.id);
    const { formKey } = await openUser(admin, blocked.id);
    expect((await admin.post(`/console/users/${blocked.id}/block`, {})).status).toBe(303);
    const blockedPage = await openUser(admin, blocked.id);
    expect(blockedPage.page.body).toContain('The user is blocked, so they cannot be topped up');
    expect(blockedPage.formKey).toBeUndefined();
    // A form rendered before the block, sent after it: refused with the reason.
    const before = await stateOf(f.tenant, blocked.id);
    const late = await admin.post(`/console/users/${blocked.id}/top-ups`, {
      minutes: '5',
      form_key: formKey!,
    });
    expect(late.status).toBe(422);
    expect(late.body).toContain('No minutes were added: The user is blocked.');
    expect(await stateOf(f.tenant, blocked.id)).toEqual(before);

    const cardless = await subscribedUser(f.t, world, world.cardPlan.id);
    expect((await f.t.admin('DELETE', `/admin/v1/users/${cardless.id}/payment-method`)).status).toBe(200);
    const cardlessPage = await openUser(admin, cardless.id);
    const beforeCard = await stateOf(f.tenant, cardless.id);
    const noCard = await admin.post(`/console/users/${cardless.id}/top-ups`, {
      minutes: '5',
      form_key: cardlessPage.formKey!,
    });
    expect(noCard.status).toBe(422);
    expect(noCard.body).toContain('The client has no card on file');
    expect(await stateOf(f.tenant, cardless.id)).toEqual(beforeCard);
    // With a card again, the next form tops up.
    await addCard(f.t, cardless.id);
    const retry = await admin.post(`/console/users/${cardless.id}/top-ups`, {
      minutes: '5',
      form_key: formKeyIn(noCard)!,
    });
    expect(retry.status).toBe(303);
    expect(await balance(f.t, cardless.id)).toBe(beforeCard.balance + 5);
  });

  it('refuses minutes out of range beside the field, and a form without its key, changing nothing', async () => {
    const user = await subscribedUser(f.t, world, world.cardPlan.id);
    const { formKey } = await openUser(admin, user.id);
    const before = await stateOf(f.tenant, user.id);
    const url = `/console/users/${user.id}/top-ups`;
    for (const minutes of ['0', '-5', '100001', '1.5', 'ten', '']) {
      const refused = await admin.post(url, { minutes, form_key: formKey! });
      expect(refused.status, minutes).toBe(422);
      expect(refused.body, minutes).toContain(
        '<p class="error" id="top_up_minutes-error">Enter a whole number of minutes from 1 to 100,000.</p>',
      );
      expect(refused.body).toMatch(/id="top_up_minutes"[^>]*aria-invalid="true"/);
      expect(refused.body).toContain('Top up and charge the card');
    }
    const keyless = await admin.post(url, { minutes: '5' });
    expect(keyless.status).toBe(422);
    expect(keyless.body).toContain('This form is out of date and nothing was done');
    expect(await stateOf(f.tenant, user.id)).toEqual(before);
    // The key was never used: the same form with a valid amount still works.
    expect((await admin.post(url, { minutes: '5', form_key: formKey! })).status).toBe(303);
    expect(await balance(f.t, user.id)).toBe(before.balance + 5);
  });
});

describe('who may top up', () => {
  it('shows a viewer the top-ups without the form, and refuses a forged POST (403), changing nothing', async () => {
    const user = await subscribedUser(f.t, world, world.agencyPlan.id);
    const { formKey } = await openUser(admin, user.id);
    expect(
      (await admin.post(`/console/users/${user.id}/top-ups`, { minutes: '15', form_key: formKey! })).status,
    ).toBe(303);

    const member = await f.addMember('viewer');
    const viewer = consoleClient(f.t);
    await viewer.signIn(member.email, member.password);
    const page = await viewer.get(`/console/users/${user.id}`);
    expect(page.status).toBe(200);
    expect(page.body).toContain('<h2 id="top-ups-title">Top-ups</h2>');
    expect(page.body).toContain('€1.20');
    expect(page.body).not.toContain('Top up</h2>');
    expect(page.body).not.toContain('/top-ups#top-up');
    expect(formKeyIn(page)).toBeUndefined();

    const before = await stateOf(f.tenant, user.id);
    // The viewer's own valid CSRF token (from the page above): only the role refuses it.
    const forged = await viewer.post(`/console/users/${user.id}/top-ups`, {
      minutes: '500',
      form_key: 'AAAAAAAAAAAAAAAAAAAAAAAA',
    });
    expect(forged.status).toBe(403);
    expect(forged.body).toContain('Your role (viewer) cannot do this');
    expect(await stateOf(f.tenant, user.id)).toEqual(before);
  });

  it('refuses a POST without the CSRF token (403), changing nothing', async () => {
    const user = await subscribedUser(f.t, world, world.cardPlan.id);
    const { formKey } = await openUser(admin, user.id);
    const before = await stateOf(f.tenant, user.id);
    const refused = await admin.post(
      `/console/users/${user.id}/top-ups`,
      { minutes: '50', form_key: formKey! },
      { withCsrf: false },
    );
    expect(refused.status).toBe(403);
    expect(refused.body).toContain('This form has expired or did not come from the console');
    expect(await stateOf(f.tenant, user.id)).toEqual(before);
  });

  it("answers the 404 page for another tenant's user, changing nothing", async () => {
    const otherTenant = await createTenant(f.t, { name: 'Other Agency' });
    const theirs = await worldOf(otherTenant);
    for (const planId of [theirs.agencyPlan.id, theirs.cardPlan.id]) {
      const user = await subscribedUser(f.t, theirs, planId);
      const mine = await subscribedUser(f.t, world, world.agencyPlan.id);
      const { formKey } = await openUser(admin, mine.id);
      const before = await stateOf(otherTenant, user.id);
      expect((await admin.get(`/console/users/${user.id}`)).status).toBe(404);
      const answer = await admin.post(`/console/users/${user.id}/top-ups`, {
        minutes: '25',
        form_key: formKey!,
      });
      expect(answer.status).toBe(404);
      expect(answer.body).toContain('User not found.');
      expect(answer.body).not.toContain(user.email);
      expect(await stateOf(otherTenant, user.id)).toEqual(before);
    }
  });
});
