/**
 * A test app on the chosen processor adapter (the Stripe-protocol server when it is `stripe`) with
 * a hand-moved clock, calls that last SIMULATED_CALL_SECONDS, and the count of invoice items the
 * processor executed (not replayed); plus the helpers the usage tests share.
 */
import { type PaymentProcessor, ProcessorUnavailableError } from '../../src/billing/processor.js';
import { createSimulatedProcessor, type SimulatedProcessor } from '../../src/billing/simulator/adapter.js';
import type { Invoice } from '../../src/billing/simulator/objects.js';
import { createStripeProcessor } from '../../src/billing/stripe/adapter.js';
import type { ManualClock } from '../../src/core/clock.js';
import type { OVERAGE_INVOICE_QUEUE } from '../../src/overage/service.js';
import type { PERIOD_QUEUE } from '../../src/subscriptions/periods.js';
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

export interface UsageApp {
  t: TestApp;
  stripe?: StripeTestServer;
  simulated?: SimulatedProcessor;
  /** Invoice items the processor created (executed, not replayed). */
  invoiceItems(): number;
  /** One-off invoices the processor created, and invoice payments it ran (executed, not replayed). */
  invoices(): number;
  invoicePayments(): number;
  /**
   * The next call of `method` (every account) runs, then its answer is lost: the caller sees the
   * processor unavailable, as when the process died right after the step.
   */
  loseAnswer(method: keyof PaymentProcessor): void;
  /** The processor's invoice object, in `account` (null: the platform's). */
  invoiceDoc(id: string, account?: string | null): Promise<Invoice>;
  close(): Promise<void>;
}

/** The processor wrapped so that an answer `lost` names is thrown away after the call ran. */
function losing(processor: PaymentProcessor, lost: Set<string>): PaymentProcessor {
  return new Proxy(processor, {
    get(target, prop, receiver) {
      if (prop === 'forAccount') return (id: string | null) => losing(target.forAccount(id), lost);
      const value = Reflect.get(target, prop, receiver);
      if (typeof value !== 'function') return value;
      return async (...args: unknown[]) => {
        const result = await value.apply(target, args);
        if (lost.delete(String(prop)))
          throw new ProcessorUnavailableError(`${String(prop)}: answer lost (injected)`);
        return result;
      };
    },
  });
}

export async function startUsageApp(
  adapter: Adapter,
  clock: ManualClock,
  env: Record<string, string> = {},
): Promise<UsageApp> {
  const stripe = adapter === 'stripe' ? await startStripeServer({ now: () => clock.now() }) : undefined;
  let simulated: SimulatedProcessor | undefined;
  const lost = new Set<string>();
  const t = await startTestApp({
    clock,
    env: {
      ...env,
      ...(stripe
        ? { PROCESSOR: 'stripe', STRIPE_SECRET_KEY: stripe.secretKey, STRIPE_API_BASE: stripe.url }
        : { PROCESSOR: 'simulated' }),
    },
    adapters: ({ database }) => {
      let processor: PaymentProcessor;
      if (stripe) {
        // A cut connection must reach the job as a lost answer, not be retried away by the SDK.
        processor = createStripeProcessor({
          secretKey: stripe.secretKey,
          apiBase: stripe.url,
          maxNetworkRetries: 0,
        });
      } else {
        simulated = createSimulatedProcessor({ db: database.db, clock });
        processor = simulated;
      }
      return { processor: losing(processor, lost) };
    },
  });
  return {
    t,
    stripe,
    simulated,
    invoiceItems: () =>
      stripe ? stripe.executed('POST', /^\/v1\/invoiceitems$/) : simulated!.calls.createInvoiceItem,
    invoices: () => (stripe ? stripe.executed('POST', /^\/v1\/invoices$/) : simulated!.calls.createInvoice),
    invoicePayments: () =>
      stripe ? stripe.executed('POST', /^\/v1\/invoices\/[^/]+\/pay$/) : simulated!.calls.payInvoice,
    loseAnswer: (method) => lost.add(method),
    invoiceDoc(id, account = null) {
      if (stripe) return stripe.inAccount(account, () => stripe.engine.invoices.retrieve(id));
      return (simulated!.forAccount(account) as SimulatedProcessor).engine.invoices.retrieve(id);
    },
    async close() {
      await t.close();
      await stripe?.close();
    },
  };
}

export interface World {
  tenant: TestTenant;
  /** processor-billed, usd, 100 minutes included, overage 0.12, top-ups 0.1. */
  cardPlan: any;
  /** agency-billed, eur, 50 minutes included, overage 0.2, top-ups 0.08. */
  agencyPlan: any;
}

export async function createWorld(t: TestApp): Promise<World> {
  const tenant = await createTenant(t);
  return {
    tenant,
    cardPlan: await createPlan(t, tenant.id, {
      name: 'Card',
      provider: 'processor',
      monthly_price: 1000,
      included_minutes: 100,
      overage_rate: 0.12,
      topup_rate: 0.1,
    }),
    agencyPlan: await createPlan(t, tenant.id, {
      name: 'Agency',
      provider: 'agency',
      currency: 'eur',
      monthly_price: 2500,
      included_minutes: 50,
      overage_rate: 0.2,
      topup_rate: 0.08,
    }),
  };
}

/** A user subscribed to `planId` (with a card when it is processor-billed); returns the user and subscription. */
export async function subscribedUser(t: TestApp, world: World, planId: string) {
  const user = await createUser(world.tenant);
  if (planId === world.cardPlan.id) {
    const card = await t.admin('PUT', `/admin/v1/users/${user.id}/payment-method`, { token: 'pm_card_visa' });
    if (card.status !== 200) throw new Error(`card: ${card.raw}`);
  }
  const sub = await world.tenant.request('POST', '/api/v1/subscriptions', {
    user_id: user.id,
    plan_id: planId,
  });
  if (sub.status !== 201) throw new Error(`subscription: ${sub.raw}`);
  return { user, subscription: sub.body.data };
}

/** Moves the user's balance by `minutes` (an operator adjustment). */
export async function adjust(t: TestApp, userId: string, minutes: number): Promise<number> {
  const response = await t.admin('POST', `/admin/v1/users/${userId}/credits`, { minutes });
  if (response.status !== 201) throw new Error(`credits: ${response.raw}`);
  return response.body.data.balance_minutes;
}

export async function balance(t: TestApp, userId: string): Promise<number> {
  return (await t.admin('GET', `/admin/v1/users/${userId}/credits`)).body.data.balance_minutes;
}

/** The user's ledger: its sum and its entries. */
export async function ledgerOf(t: TestApp, userId: string) {
  const rows = await t.services.database.db
    .selectFrom('credit_ledger')
    .select(['minutes', 'reason', 'reference'])
    .where('user_id', '=', userId)
    .orderBy('created_at')
    .execute();
  return { sum: rows.reduce((total, row) => total + row.minutes, 0), rows };
}

export async function overageOf(t: TestApp, userId: string) {
  return t.services.database.db
    .selectFrom('overage_charges')
    .selectAll()
    .where('user_id', '=', userId)
    .orderBy('period_start')
    .execute();
}

/** Runs a job's handler as the runner would (a repeated or concurrent run). */
export function runJob(
  t: TestApp,
  queue: typeof PERIOD_QUEUE | typeof OVERAGE_INVOICE_QUEUE,
  tenantId: string,
  payload: unknown,
) {
  return t.services.jobHandlers[queue]({ id: 0, tenantId, queue, payload, attempt: 1, maxAttempts: 10 });
}

export { createPlan, createTenant, createUser };
