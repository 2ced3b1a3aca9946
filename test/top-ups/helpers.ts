/**
 * A test app with the top-up routes on the chosen processor adapter (the Stripe-protocol server
 * when it is `stripe`), a tenant with one plan of each billing, and the counters of executed
 * charges where the processor lives. The routes are added as the partner surface's extra routes
 * unless the app already has them; `topUps` is a service over the app's database and processor,
 * whose `reconcile` the tests run in place of the job.
 */
import type { FastifyPluginAsync } from 'fastify';
import { createProcessorAccounts } from '../../src/billing/accounts.js';
import type { PaymentProcessor } from '../../src/billing/processor.js';
import { createSimulatedProcessor, type SimulatedProcessor } from '../../src/billing/simulator/adapter.js';
import { createStripeProcessor } from '../../src/billing/stripe/adapter.js';
import { type Clock, systemClock } from '../../src/core/clock.js';
import { createIdempotencyStore } from '../../src/core/idempotency/store.js';
import { topUpRoutes } from '../../src/top-ups/routes.js';
import { createTopUpService, type TopUpService } from '../../src/top-ups/service.js';
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

export interface TopUpApp {
  t: TestApp;
  stripe?: StripeTestServer;
  topUps: TopUpService;
  /** Charges the processor executed (not replayed). */
  charges(): number;
  close(): Promise<void>;
}

export async function startTopUpApp(
  adapter: Adapter,
  options: { clock?: Clock; wrap?: (processor: PaymentProcessor) => PaymentProcessor } = {},
): Promise<TopUpApp> {
  const clock = options.clock ?? systemClock;
  const stripe = adapter === 'stripe' ? await startStripeServer({ now: () => clock.now() }) : undefined;
  let simulated: SimulatedProcessor | undefined;
  let topUps: TopUpService | undefined;
  const routes: FastifyPluginAsync = async (partner) => {
    if (partner.hasRoute({ method: 'POST', url: `${partner.prefix}/users/:id/top-ups` })) return;
    await partner.register(topUpRoutes, { topUps: topUps!, publicBaseUrl: 'http://voiceplane.test' });
  };
  const t = await startTestApp({
    clock: options.clock,
    env: stripe
      ? { PROCESSOR: 'stripe', STRIPE_SECRET_KEY: stripe.secretKey, STRIPE_API_BASE: stripe.url }
      : { PROCESSOR: 'simulated' },
    extraRoutes: { partner: [routes] },
    adapters: ({ database }) => {
      let processor: PaymentProcessor;
      if (stripe) {
        // A cut connection must reach the service as a lost answer, not be retried away by the SDK.
        processor = createStripeProcessor({
          secretKey: stripe.secretKey,
          apiBase: stripe.url,
          maxNetworkRetries: 0,
        });
      } else {
        simulated = createSimulatedProcessor({ db: database.db, clock });
        processor = simulated;
      }
      if (options.wrap) processor = options.wrap(processor);
      topUps = createTopUpService({
        db: database.db,
        clock,
        processor,
        accounts: createProcessorAccounts({ db: database.db, processorName: processor.name }),
        idempotency: createIdempotencyStore({ db: database.db, clock }),
      });
      return { processor };
    },
  });
  return {
    t,
    stripe,
    topUps: topUps!,
    charges: () =>
      stripe ? stripe.executed('POST', /^\/v1\/payment_intents$/) : simulated!.calls.chargeCustomer,
    async close() {
      await t.close();
      await stripe?.close();
    },
  };
}

export interface World {
  tenant: TestTenant;
  /** processor-billed, topup_rate 0.1 usd: 100 minutes included. */
  cardPlan: any;
  /** agency-billed, topup_rate 0.08 eur: 50 minutes included. */
  agencyPlan: any;
}

export async function createWorld(t: TestApp): Promise<World> {
  const tenant = await createTenant(t);
  return {
    tenant,
    cardPlan: await createPlan(t, tenant.id, {
      name: 'Card',
      provider: 'processor',
      included_minutes: 100,
      topup_rate: 0.1,
    }),
    agencyPlan: await createPlan(t, tenant.id, {
      name: 'Agency',
      provider: 'agency',
      currency: 'eur',
      included_minutes: 50,
      topup_rate: 0.08,
    }),
  };
}

export async function addCard(t: TestApp, userId: string, token = 'pm_card_visa') {
  const response = await t.admin('PUT', `/admin/v1/users/${userId}/payment-method`, { token });
  if (response.status !== 200) throw new Error(`card: ${response.raw}`);
}

export async function balance(t: TestApp, userId: string): Promise<number> {
  return (await t.admin('GET', `/admin/v1/users/${userId}/credits`)).body.data.balance_minutes;
}

/** A user subscribed to `planId` (with a card when the plan is processor-billed). */
export async function subscribedUser(t: TestApp, world: World, planId: string, card = 'pm_card_visa') {
  const user = await createUser(world.tenant);
  if (planId === world.cardPlan.id) await addCard(t, user.id);
  const sub = await world.tenant.request('POST', '/api/v1/subscriptions', {
    user_id: user.id,
    plan_id: planId,
  });
  if (sub.status !== 201) throw new Error(`subscription: ${sub.raw}`);
  if (card !== 'pm_card_visa') await addCard(t, user.id, card);
  return user;
}

export function topUp(tenant: TestTenant, userId: string, body: unknown, key?: string) {
  return tenant.request(
    'POST',
    `/api/v1/users/${userId}/top-ups`,
    body,
    key ? { 'idempotency-key': key } : {},
  );
}

/** The user's ledger: the sum of its entries and the top-up entries. */
export async function ledgerOf(t: TestApp, userId: string) {
  const rows = await t.services.database.db
    .selectFrom('credit_ledger')
    .select(['minutes', 'reference'])
    .where('user_id', '=', userId)
    .execute();
  return {
    sum: rows.reduce((total, row) => total + row.minutes, 0),
    topUps: rows.filter((row) => row.reference?.startsWith('top_up:')),
  };
}

export { createUser };
