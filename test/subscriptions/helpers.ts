/** A test app on the chosen processor adapter, with the Stripe-protocol server when it is `stripe`. */
import type { PaymentProcessor } from '../../src/billing/processor.js';
import { createSimulatedProcessor, type SimulatedProcessor } from '../../src/billing/simulator/adapter.js';
import { createStripeProcessor } from '../../src/billing/stripe/adapter.js';
import { type Clock, systemClock } from '../../src/core/clock.js';
import {
  createPlan,
  createTenant,
  createUser,
  startTestApp,
  type TestApp,
  type TestTenant,
} from '../support/app.js';
import { type StripeTestServer, startStripeServer } from '../support/stripe-server.js';

export type Adapter = 'simulated' | 'stripe';
export const ADAPTERS: Adapter[] = ['simulated', 'stripe'];

export interface BillingApp {
  t: TestApp;
  adapter: Adapter;
  stripe?: StripeTestServer;
  /** Executed processor plan changes (subscription updates), counted where the processor lives. */
  planChanges(): number;
  /** Executed processor subscription creations. */
  creations(): number;
  close(): Promise<void>;
}

export async function startBillingApp(
  adapter: Adapter,
  options: {
    clock?: Clock;
    wrap?: (processor: PaymentProcessor) => PaymentProcessor;
    /** Network retries of the Stripe SDK (the adapter's default unless given). */
    stripeNetworkRetries?: number;
    /** More environment for the app (e.g. WEBHOOK_ALLOW_PRIVATE for a local event receiver). */
    env?: Record<string, string>;
  } = {},
): Promise<BillingApp> {
  const now = () => (options.clock ?? { now: () => new Date() }).now();
  const stripe = adapter === 'stripe' ? await startStripeServer({ now }) : undefined;
  const env: Record<string, string> = {
    ...options.env,
    ...(stripe
      ? { PROCESSOR: 'stripe', STRIPE_SECRET_KEY: stripe.secretKey, STRIPE_API_BASE: stripe.url }
      : { PROCESSOR: 'simulated' }),
  };
  let simulated: SimulatedProcessor | undefined;
  const t = await startTestApp({
    clock: options.clock,
    env,
    adapters: ({ database }) => {
      let processor: PaymentProcessor;
      if (stripe) {
        processor = createStripeProcessor({
          secretKey: stripe.secretKey,
          apiBase: stripe.url,
          ...(options.stripeNetworkRetries !== undefined
            ? { maxNetworkRetries: options.stripeNetworkRetries }
            : {}),
        });
      } else {
        simulated = createSimulatedProcessor({ db: database.db, clock: options.clock ?? systemClock });
        processor = simulated;
      }
      return { processor: options.wrap ? options.wrap(processor) : processor };
    },
  });
  return {
    t,
    adapter,
    stripe,
    planChanges: () =>
      stripe ? stripe.executed('POST', /^\/v1\/subscriptions\/[^/]+$/) : simulated!.calls.changePrice,
    creations: () =>
      stripe ? stripe.executed('POST', /^\/v1\/subscriptions$/) : simulated!.calls.createSubscription,
    async close() {
      await t.close();
      await stripe?.close();
    },
  };
}

export interface World {
  tenant: TestTenant;
  plans: {
    cardBasic: any;
    cardPro: any;
    cardTrial: any;
    cardEur: any;
    agencyBasic: any;
    agencyPro: any;
    agencyTrial: any;
    inactive: any;
  };
}

/** A tenant with processor and agency plans at two prices each, plus odd ones for the 422 cases. */
export async function createWorld(t: TestApp): Promise<World> {
  const tenant = await createTenant(t);
  const plan = (overrides: Record<string, unknown>) => createPlan(t, tenant.id, overrides);
  return {
    tenant,
    plans: {
      cardBasic: await plan({
        name: 'Card Basic',
        provider: 'processor',
        monthly_price: 1000,
        included_minutes: 100,
      }),
      cardPro: await plan({
        name: 'Card Pro',
        provider: 'processor',
        monthly_price: 3000,
        included_minutes: 400,
      }),
      cardTrial: await plan({
        name: 'Card Trial',
        provider: 'processor',
        monthly_price: 2000,
        included_minutes: 200,
        trial_period_days: 14,
      }),
      cardEur: await plan({
        name: 'Card EUR',
        provider: 'processor',
        currency: 'eur',
        monthly_price: 5000,
        included_minutes: 600,
      }),
      agencyBasic: await plan({
        name: 'Agency Basic',
        provider: 'agency',
        monthly_price: 2500,
        included_minutes: 100,
      }),
      agencyPro: await plan({
        name: 'Agency Pro',
        provider: 'agency',
        monthly_price: 8900,
        included_minutes: 500,
      }),
      agencyTrial: await plan({
        name: 'Agency Trial',
        provider: 'agency',
        monthly_price: 1500,
        included_minutes: 50,
        trial_period_days: 14,
      }),
      inactive: await plan({
        name: 'Old',
        provider: 'agency',
        monthly_price: 100,
        included_minutes: 1,
        active: false,
      }),
    },
  };
}

export async function addCard(t: TestApp, userId: string, token = 'pm_card_visa') {
  const response = await t.admin('PUT', `/admin/v1/users/${userId}/payment-method`, { token });
  if (response.status !== 200) throw new Error(`card: ${response.raw}`);
  return response.body.data;
}

export async function balance(t: TestApp, userId: string): Promise<number> {
  const response = await t.admin('GET', `/admin/v1/users/${userId}/credits`);
  return response.body.data.balance_minutes;
}

export async function subscribe(tenant: TestTenant, userId: string, planId: string, key?: string) {
  return tenant.request(
    'POST',
    '/api/v1/subscriptions',
    { user_id: userId, plan_id: planId },
    key ? { 'idempotency-key': key } : {},
  );
}

export async function changePlan(tenant: TestTenant, subscriptionId: string, planId: string, key?: string) {
  return tenant.request(
    'PATCH',
    `/api/v1/subscriptions/${subscriptionId}/plan`,
    { plan_id: planId },
    key ? { 'idempotency-key': key } : {},
  );
}

export { createUser };
