/**
 * Subscribing, changing plan and cancelling at period end from the console over plain HTTP
 * (docs/console.md): the rule and its outcome are shown before anything changes, the confirmation
 * acts once however often it is posted (the card is charged once), a refusal is the API's, and a
 * cancellation keeps the plan to the period's end (as POST /api/v1/subscriptions/{id}/cancel).
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedProcessor } from '../../src/billing/simulator/adapter.js';
import { createPlan, createTenant } from '../support/app.js';
import { addCard, createUser } from '../top-ups/helpers.js';
import { type ConsoleFixture, startConsole } from './helpers.js';
import { type ConsoleClient, consoleClient, type PageResponse } from './http.js';

let f: ConsoleFixture;
let admin: ConsoleClient;
let plans: Record<'small' | 'large' | 'card', { id: string }>;

const formKeyIn = (page: PageResponse) => /name="form_key" value="([^"]+)"/.exec(page.body)?.[1];
const charges = () => (f.t.services.processor as SimulatedProcessor).calls;

beforeAll(async () => {
  f = await startConsole();
  plans = {
    small: await createPlan(f.t, f.tenant.id, {
      name: 'Small',
      provider: 'agency',
      included_minutes: 100,
      monthly_price: 1000,
    }),
    large: await createPlan(f.t, f.tenant.id, {
      name: 'Large',
      provider: 'agency',
      included_minutes: 300,
      monthly_price: 3000,
    }),
    card: await createPlan(f.t, f.tenant.id, {
      name: 'Card',
      provider: 'processor',
      included_minutes: 50,
      monthly_price: 2000,
    }),
  };
  const member = await f.addMember('admin');
  admin = consoleClient(f.t);
  expect((await admin.signIn(member.email, member.password)).status).toBe(303);
});
afterAll(() => f?.close());

async function subscriptionsOf(userId: string) {
  const list = await f.tenant.request('GET', `/api/v1/subscriptions?user_id=${userId}`);
  return list.body.data as { id: string; plan_id: string; status: string; cancel_at_period_end: boolean }[];
}

describe('subscribing and changing plan', () => {
  it('shows the outcome first, then subscribes once however often the confirmation is posted', async () => {
    const user = await createUser(f.tenant);
    const preview = await admin.get(`/console/users/${user.id}/subscription?plan_id=${plans.small.id}`);
    expect(preview.status).toBe(200);
    expect(preview.body).toContain('New subscription, billed by you');
    expect(preview.body).toContain('100 minutes are granted now');
    expect(await subscriptionsOf(user.id)).toHaveLength(0);
    const fields = { form_key: formKeyIn(preview) ?? '', plan_id: plans.small.id };
    expect((await admin.post(`/console/users/${user.id}/subscription`, fields)).status).toBe(303);
    expect((await admin.post(`/console/users/${user.id}/subscription`, fields)).status).toBe(303);
    const subs = await subscriptionsOf(user.id);
    expect(subs).toHaveLength(1);
    expect(subs[0]).toMatchObject({ plan_id: plans.small.id, status: 'active' });

    const upgrade = await admin.get(`/console/users/${user.id}/subscription?plan_id=${plans.large.id}`);
    expect(upgrade.body).toContain('Upgrade: Large');
    expect(upgrade.body).toContain('200 minutes more are granted now');
    const up = { form_key: formKeyIn(upgrade) ?? '', plan_id: plans.large.id };
    expect((await admin.post(`/console/users/${user.id}/subscription`, up)).status).toBe(303);
    expect((await subscriptionsOf(user.id))[0].plan_id).toBe(plans.large.id);

    const downgrade = await admin.get(`/console/users/${user.id}/subscription?plan_id=${plans.small.id}`);
    expect(downgrade.body).toContain('Downgrade: Small');
    expect(downgrade.body).toMatch(/Large stays until \d{4}-\d{2}-\d{2} 23:59 UTC/);
  });

  it('charges the card once for a processor plan confirmed twice', async () => {
    const user = await createUser(f.tenant);
    await addCard(f.t, user.id);
    const before = charges().createSubscription;
    const preview = await admin.get(`/console/users/${user.id}/subscription?plan_id=${plans.card.id}`);
    expect(preview.body).toContain('is charged to the card now');
    const fields = { form_key: formKeyIn(preview) ?? '', plan_id: plans.card.id };
    await Promise.all([
      admin.post(`/console/users/${user.id}/subscription`, fields),
      admin.post(`/console/users/${user.id}/subscription`, fields),
    ]);
    expect(charges().createSubscription - before).toBe(1);
    expect(await subscriptionsOf(user.id)).toHaveLength(1);
  });

  it('refuses what POST /api/v1/subscriptions refuses, with its message, before and at confirmation', async () => {
    const user = await createUser(f.tenant);
    const api = await f.tenant.request('POST', '/api/v1/subscriptions', {
      user_id: user.id,
      plan_id: plans.card.id,
    });
    expect(api.status).toBe(422);
    const preview = await admin.get(`/console/users/${user.id}/subscription?plan_id=${plans.card.id}`);
    expect(preview.status).toBe(422);
    expect(preview.body).toContain(api.body.error.message.replace(/’/g, '’'));
    const posted = await admin.post(`/console/users/${user.id}/subscription`, {
      form_key: formKeyIn(preview) ?? 'k'.repeat(20),
      plan_id: plans.card.id,
    });
    expect(posted.status).toBe(422);
    expect(await subscriptionsOf(user.id)).toHaveLength(0);
  });
});

describe('cancelling at period end', () => {
  it('asks first, then keeps the plan to the period end; a repeat changes nothing; the API agrees', async () => {
    const user = await createUser(f.tenant);
    const created = await f.tenant.request('POST', '/api/v1/subscriptions', {
      user_id: user.id,
      plan_id: plans.small.id,
    });
    const id = created.body.data.id as string;
    const confirm = await admin.get(`/console/subscriptions/${id}/cancel`);
    expect(confirm.status).toBe(200);
    expect(confirm.body).toContain('stays as it is until the end of the current period');
    expect((await subscriptionsOf(user.id))[0].cancel_at_period_end).toBe(false);
    expect((await admin.post(`/console/subscriptions/${id}/cancel`, {})).status).toBe(303);
    expect((await admin.post(`/console/subscriptions/${id}/cancel`, {})).status).toBe(303);
    const [sub] = await subscriptionsOf(user.id);
    expect(sub).toMatchObject({ status: 'active', cancel_at_period_end: true });
    const api = await f.tenant.request('POST', `/api/v1/subscriptions/${id}/cancel`);
    expect(api.status).toBe(200);
    expect(api.body.data).toMatchObject({ id, cancel_at_period_end: true, status: 'active' });
  });

  it('cancels a processor subscription at the processor, at period end', async () => {
    const user = await createUser(f.tenant);
    await addCard(f.t, user.id);
    const created = await f.tenant.request('POST', '/api/v1/subscriptions', {
      user_id: user.id,
      plan_id: plans.card.id,
    });
    const id = created.body.data.id as string;
    expect((await admin.post(`/console/subscriptions/${id}/cancel`, {})).status).toBe(303);
    expect((await subscriptionsOf(user.id))[0]).toMatchObject({
      status: 'active',
      cancel_at_period_end: true,
    });
    expect(charges().cancelAtPeriodEnd).toBeGreaterThanOrEqual(1);
  });

  it("answers the 404 page for another tenant's user or subscription", async () => {
    const other = await createTenant(f.t, { name: 'Other Agency' });
    const plan = await createPlan(f.t, other.id, { name: 'Theirs', provider: 'agency' });
    const user = await createUser(other);
    const sub = await other.request('POST', '/api/v1/subscriptions', { user_id: user.id, plan_id: plan.id });
    expect((await admin.get(`/console/users/${user.id}/subscription`)).status).toBe(404);
    expect((await admin.get(`/console/users/${user.id}/subscription?plan_id=${plans.small.id}`)).status).toBe(
      404,
    );
    expect((await admin.get(`/console/subscriptions/${sub.body.data.id}/cancel`)).status).toBe(404);
    const posted = await admin.post(`/console/users/${user.id}/subscription`, { plan_id: plans.small.id });
    expect(posted.status).toBe(404);
    expect((await admin.post(`/console/subscriptions/${sub.body.data.id}/cancel`, {})).status).toBe(404);
    const theirs = await other.request('GET', `/api/v1/subscriptions/${sub.body.data.id}`);
    expect(theirs.body.data.cancel_at_period_end).toBe(false);
  });
});
