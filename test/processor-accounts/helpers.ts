/**
 * Agencies on their own processor accounts: a tenant with a card plan (1000 a month, top-ups at
 * 0.1 usd a minute), its account and fee set by the operator, and a client who subscribes and tops
 * up 100 minutes (1000 cents) with the card on file; the ids our database keeps for them.
 */
import { expect } from 'vitest';
import { createPlan, createTenant, createUser, type TestApp, type TestTenant } from '../support/app.js';

export interface Agency {
  tenant: TestTenant;
  account: string | null;
  userId: string;
  /** The processor ids stored for the agency's objects. */
  ids: { customer: string; paymentMethod: string; price: string; subscription: string; charge: string };
}

export async function setProcessorAccount(
  t: TestApp,
  tenantId: string,
  body: { processor_account_id?: string | null; application_fee_percent?: number | null },
) {
  return t.admin('PATCH', `/admin/v1/tenants/${tenantId}`, body);
}

/** An agency on `account` (null: the platform's) with `fee`, and one client's subscription and top-up. */
export async function agencyWithClient(
  t: TestApp,
  options: { name: string; account: string | null; fee: number | null },
): Promise<Agency> {
  const tenant = await createTenant(t, { name: options.name });
  const set = await setProcessorAccount(t, tenant.id, {
    processor_account_id: options.account,
    application_fee_percent: options.fee,
  });
  expect(set.status, set.raw).toBe(200);
  const plan = await createPlan(t, tenant.id, {
    name: 'Card',
    provider: 'processor',
    monthly_price: 1000,
    included_minutes: 100,
    topup_rate: 0.1,
  });
  const user = await createUser(tenant);
  const card = await t.admin('PUT', `/admin/v1/users/${user.id}/payment-method`, { token: 'pm_card_visa' });
  expect(card.status, card.raw).toBe(200);
  const sub = await tenant.request('POST', '/api/v1/subscriptions', { user_id: user.id, plan_id: plan.id });
  expect(sub.status, sub.raw).toBe(201);
  const topUp = await tenant.request('POST', `/api/v1/users/${user.id}/top-ups`, { minutes: 100 });
  expect(topUp.status, topUp.raw).toBe(201);
  expect(topUp.body.data.amount).toBe(1000);

  const db = t.services.database.db;
  const customer = await db
    .selectFrom('billing_customers')
    .selectAll()
    .where('user_id', '=', user.id)
    .executeTakeFirstOrThrow();
  const price = await db
    .selectFrom('billing_prices')
    .select('price_id')
    .where('plan_id', '=', plan.id)
    .executeTakeFirstOrThrow();
  const stored = await db
    .selectFrom('subscriptions')
    .select('provider_subscription_id')
    .where('id', '=', sub.body.data.id)
    .executeTakeFirstOrThrow();
  return {
    tenant,
    account: options.account,
    userId: user.id,
    ids: {
      customer: customer.customer_id,
      paymentMethod: customer.payment_method_id ?? '',
      price: price.price_id,
      subscription: stored.provider_subscription_id ?? '',
      charge: topUp.body.data.processor_charge_id,
    },
  };
}
