import { sql } from 'kysely';
import type { Executor } from '../core/db/database.js';

export interface BillingCustomersTable {
  tenant_id: string;
  user_id: string;
  processor: string;
  customer_id: string;
  payment_method_id: string | null;
  card_brand: string | null;
  card_last4: string | null;
  created_at: Date;
  updated_at: Date;
}

export interface BillingPricesTable {
  tenant_id: string;
  plan_id: string;
  processor: string;
  currency: string;
  unit_amount: number;
  price_id: string;
  created_at: Date;
}

declare module '../core/db/database.js' {
  interface Tables {
    billing_customers: BillingCustomersTable;
    billing_prices: BillingPricesTable;
  }
}

export async function findCustomer(db: Executor, tenantId: string, userId: string, processor: string) {
  return db
    .selectFrom('billing_customers')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('processor', '=', processor)
    .executeTakeFirst();
}

/** Records the customer; keeps the first one when two requests created it at once. */
export async function insertCustomer(db: Executor, row: BillingCustomersTable) {
  await db
    .insertInto('billing_customers')
    .values(row)
    .onConflict((oc) => oc.columns(['tenant_id', 'user_id', 'processor']).doNothing())
    .execute();
  return (await findCustomer(db, row.tenant_id, row.user_id, row.processor))!;
}

export async function setCard(
  db: Executor,
  tenantId: string,
  userId: string,
  processor: string,
  card: { id: string; brand: string; last4: string } | null,
  at: Date,
) {
  await db
    .updateTable('billing_customers')
    .set({
      payment_method_id: card?.id ?? null,
      card_brand: card?.brand ?? null,
      card_last4: card?.last4 ?? null,
      updated_at: at,
    })
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .where('processor', '=', processor)
    .execute();
}

export async function findPrice(
  db: Executor,
  tenantId: string,
  key: { planId: string; processor: string; currency: string; unitAmount: number },
) {
  const row = await db
    .selectFrom('billing_prices')
    .select('price_id')
    .where('tenant_id', '=', tenantId)
    .where('plan_id', '=', key.planId)
    .where('processor', '=', key.processor)
    .where('currency', '=', key.currency)
    .where('unit_amount', '=', key.unitAmount)
    .executeTakeFirst();
  return row?.price_id;
}

export async function insertPrice(db: Executor, row: BillingPricesTable) {
  await db
    .insertInto('billing_prices')
    .values(row)
    .onConflict((oc) =>
      oc.columns(['tenant_id', 'plan_id', 'processor', 'currency', 'unit_amount']).doNothing(),
    )
    .execute();
}

/** The plan a processor price stands for (to adopt a change made at the processor). */
export async function findPlanOfPrice(db: Executor, tenantId: string, processor: string, priceId: string) {
  const row = await db
    .selectFrom('billing_prices')
    .select('plan_id')
    .where('tenant_id', '=', tenantId)
    .where('processor', '=', processor)
    .where('price_id', '=', priceId)
    .executeTakeFirst();
  return row?.plan_id;
}

/** The tenant's processor account and application fee (null: the platform's own, no fee). */
export async function findProcessorAccount(
  db: Executor,
  tenantId: string,
  options: { forUpdate?: boolean } = {},
) {
  let query = db
    .selectFrom('tenants')
    .select(['processor_account_id', 'application_fee_percent'])
    .where('id', '=', tenantId);
  if (options.forUpdate) query = query.forUpdate();
  return query.executeTakeFirst();
}

/** Whether another tenant already names this connected account. */
export async function accountConnectedElsewhere(
  db: Executor,
  accountId: string,
  tenantId: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('tenants')
    .select('id')
    .where('processor_account_id', '=', accountId)
    .where('id', '<>', tenantId)
    .executeTakeFirst();
  return row !== undefined;
}

/**
 * Whether the tenant has objects at the processor `processor` (a customer, a price, or a
 * subscription): they live in the account they were made in, so the account may no longer change.
 */
export async function hasProcessorObjects(
  db: Executor,
  tenantId: string,
  processor: string,
): Promise<boolean> {
  const customer = db
    .selectFrom('billing_customers')
    .select(sql.lit(1).as('one'))
    .where('tenant_id', '=', tenantId)
    .where('processor', '=', processor);
  const price = db
    .selectFrom('billing_prices')
    .select(sql.lit(1).as('one'))
    .where('tenant_id', '=', tenantId)
    .where('processor', '=', processor);
  const subscription = db
    .selectFrom('subscriptions')
    .select(sql.lit(1).as('one'))
    .where('tenant_id', '=', tenantId)
    .where('provider_subscription_id', 'is not', null);
  const row = await db
    .selectNoFrom((eb) => [
      eb.or([eb.exists(customer), eb.exists(price), eb.exists(subscription)]).as('found'),
    ])
    .executeTakeFirstOrThrow();
  return Boolean(row.found);
}
