/**
 * Who sets an agency's processor account and when: the operator (PATCH /admin/v1/tenants/{id})
 * and the tenant's owner in the console (a form on the Plans page; admins and viewers may not),
 * through the same service. The account can change only while the tenant has no processor
 * objects (409 after, nothing changed); the fee at any time; malformed values are 422.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ConsoleFixture, startConsole } from '../console/helpers.js';
import { type ConsoleClient, consoleClient } from '../console/http.js';
import { createTenant, createUser, type TestTenant } from '../support/app.js';
import { setProcessorAccount } from './helpers.js';

let f: ConsoleFixture;

beforeAll(async () => {
  f = await startConsole();
});
afterAll(() => f?.close());

const tenantOf = async (id: string) => (await f.t.admin('GET', `/admin/v1/tenants/${id}`)).body.data;

/** A user of the tenant with a card on file: the tenant now has a customer at the processor. */
async function clientWithCard(tenant: TestTenant) {
  const user = await createUser(tenant);
  const card = await f.t.admin('PUT', `/admin/v1/users/${user.id}/payment-method`, { token: 'pm_card_visa' });
  expect(card.status, card.raw).toBe(200);
  return user;
}

/** The account the simulator made the user's customer in (null: the platform's). */
async function customerAccount(userId: string): Promise<string | null> {
  const db = f.t.services.database.db;
  const customer = await db
    .selectFrom('billing_customers')
    .select('customer_id')
    .where('user_id', '=', userId)
    .executeTakeFirstOrThrow();
  const doc = await db
    .selectFrom('simulated_processor_objects')
    .select('doc')
    .where('id', '=', customer.customer_id)
    .executeTakeFirstOrThrow();
  return (doc.doc as { _account?: string })._account ?? null;
}

describe('the operator', () => {
  it('sets, shows and clears the account and the fee', async () => {
    const tenant = await createTenant(f.t, { name: 'Operator set' });
    expect(await tenantOf(tenant.id)).toMatchObject({
      processor_account_id: null,
      application_fee_percent: null,
    });
    const set = await setProcessorAccount(f.t, tenant.id, {
      processor_account_id: 'acct_1Nv0FGQ9RKHgCVdK',
      application_fee_percent: 2.75,
    });
    expect(set.status).toBe(200);
    expect(set.body.data).toMatchObject({
      processor_account_id: 'acct_1Nv0FGQ9RKHgCVdK',
      application_fee_percent: 2.75,
    });
    expect(await tenantOf(tenant.id)).toMatchObject({ application_fee_percent: 2.75 });
    expect((await setProcessorAccount(f.t, tenant.id, { application_fee_percent: 100 })).status).toBe(200);
    const cleared = await setProcessorAccount(f.t, tenant.id, {
      processor_account_id: null,
      application_fee_percent: null,
    });
    expect(cleared.body.data).toMatchObject({ processor_account_id: null, application_fee_percent: null });
  });

  it.each([
    [{ processor_account_id: 'acct_' }, 'processor_account_id'],
    [{ processor_account_id: 'acct_ab-c' }, 'processor_account_id'],
    [{ processor_account_id: 'cus_123' }, 'processor_account_id'],
    [{ processor_account_id: `acct_${'a'.repeat(256)}` }, 'processor_account_id'],
    [{ processor_account_id: 42 }, 'processor_account_id'],
    [{ application_fee_percent: 0 }, 'application_fee_percent'],
    [{ application_fee_percent: -1 }, 'application_fee_percent'],
    [{ application_fee_percent: 100.01 }, 'application_fee_percent'],
    [{ application_fee_percent: 2.555 }, 'application_fee_percent'],
    [{ application_fee_percent: 1e-300 }, 'application_fee_percent'],
    [{ application_fee_percent: '2.5' }, 'application_fee_percent'],
  ])('refuses %j with 422 naming the field, changing nothing', async (body, field) => {
    const tenant = await createTenant(f.t, { name: 'Invalid' });
    const answer = await setProcessorAccount(f.t, tenant.id, body as never);
    expect(answer.status).toBe(422);
    expect(answer.body.error.code).toBe('validation_failed');
    expect(JSON.stringify(answer.body.error.details)).toContain(field);
    expect(await tenantOf(tenant.id)).toMatchObject({
      processor_account_id: null,
      application_fee_percent: null,
    });
  });

  it('refuses an account another agency already uses (409), nothing changed', async () => {
    const first = await createTenant(f.t, { name: 'First on the account' });
    const second = await createTenant(f.t, { name: 'Second on the account' });
    expect((await setProcessorAccount(f.t, first.id, { processor_account_id: 'acct_Shared9' })).status).toBe(
      200,
    );
    const refused = await setProcessorAccount(f.t, second.id, { processor_account_id: 'acct_Shared9' });
    expect(refused.status).toBe(409);
    expect(refused.body.error.message).toContain('already connected to another agency');
    expect(await tenantOf(second.id)).toMatchObject({ processor_account_id: null });
    // Freed by the first agency, it may be connected by the second.
    expect((await setProcessorAccount(f.t, first.id, { processor_account_id: null })).status).toBe(200);
    expect((await setProcessorAccount(f.t, second.id, { processor_account_id: 'acct_Shared9' })).status).toBe(
      200,
    );
  });

  it('refuses to move the account once the tenant has processor objects (409), the fee still changes', async () => {
    const tenant = await createTenant(f.t, { name: 'Has customers' });
    expect(
      (
        await setProcessorAccount(f.t, tenant.id, {
          processor_account_id: 'acct_Before1',
          application_fee_percent: 1,
        })
      ).status,
    ).toBe(200);
    const user = await clientWithCard(tenant);
    expect(await customerAccount(user.id)).toBe('acct_Before1');

    for (const processor_account_id of ['acct_After2', null]) {
      const refused = await setProcessorAccount(f.t, tenant.id, {
        processor_account_id,
        application_fee_percent: 5,
      });
      expect(refused.status).toBe(409);
      expect(refused.body.error.code).toBe('conflict');
      expect(refused.body.error.message).toContain('cannot move between Stripe accounts');
      expect(await tenantOf(tenant.id)).toMatchObject({
        processor_account_id: 'acct_Before1',
        application_fee_percent: 1,
      });
    }
    const same = await setProcessorAccount(f.t, tenant.id, {
      processor_account_id: 'acct_Before1',
      application_fee_percent: 4.5,
    });
    expect(same.status).toBe(200);
    expect(same.body.data.application_fee_percent).toBe(4.5);
  });

  it('answers 404 for an unknown tenant', async () => {
    const answer = await setProcessorAccount(f.t, 'ten_missing', { processor_account_id: 'acct_X1' });
    expect(answer.status).toBe(404);
  });
});

describe('the console form on the Plans page', () => {
  async function signedIn(role: 'owner' | 'admin' | 'viewer'): Promise<ConsoleClient> {
    const member = role === 'owner' ? f.owner : await f.addMember(role);
    const client = consoleClient(f.t);
    expect((await client.signIn(member.email, member.password)).status).toBe(303);
    return client;
  }

  it('refuses admins and viewers (403) and shows them no form', async () => {
    for (const role of ['admin', 'viewer'] as const) {
      const client = await signedIn(role);
      const page = await client.get('/console/plans');
      expect(page.status).toBe(200);
      expect(page.body).toContain('Card processor account');
      expect(page.body).toContain('Only owners change the processor account.');
      expect(page.body).not.toContain('action="/console/plans/processor-account"');
      const post = await client.post('/console/plans/processor-account', {
        processor_account_id: 'acct_ByAdmin1',
      });
      expect(post.status).toBe(403);
    }
    expect((await tenantOf(f.tenant.id)).processor_account_id).toBeNull();
  });

  it('lets the owner set the account, and the next processor call uses it', async () => {
    const user = await createUser(f.tenant);
    // A processor lookup for the tenant before the change (no object made): the cache must forget it.
    expect((await f.t.admin('DELETE', `/admin/v1/users/${user.id}/payment-method`)).status).toBe(200);

    const owner = await signedIn('owner');
    const form = await owner.get('/console/plans');
    expect(form.body).toContain('action="/console/plans/processor-account"');
    const bad = await owner.post('/console/plans/processor-account', {
      processor_account_id: 'acct_no-dash',
    });
    expect(bad.status).toBe(422);
    expect(bad.body).toContain('must be a Stripe account id');
    expect((await tenantOf(f.tenant.id)).processor_account_id).toBeNull();

    const saved = await owner.post('/console/plans/processor-account', {
      processor_account_id: 'acct_Owner01',
    });
    expect(saved.status).toBe(303);
    expect((await tenantOf(f.tenant.id)).processor_account_id).toBe('acct_Owner01');

    const card = await f.t.admin('PUT', `/admin/v1/users/${user.id}/payment-method`, {
      token: 'pm_card_visa',
    });
    expect(card.status).toBe(200);
    expect(await customerAccount(user.id)).toBe('acct_Owner01');

    // Now the tenant has a customer: the owner cannot move it either.
    const moved = await owner.post('/console/plans/processor-account', { processor_account_id: '' });
    expect(moved.status).toBe(409);
    expect(moved.body).toContain('cannot move between Stripe accounts');
    expect((await tenantOf(f.tenant.id)).processor_account_id).toBe('acct_Owner01');
  });
});
