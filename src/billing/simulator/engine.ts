/**
 * A small card processor with Stripe test-mode semantics, behind the `simulated` adapter
 * (src/billing/simulator/adapter.ts) and the Stripe-protocol test server (test/support/stripe-server.ts). It
 * takes Stripe's request parameters and returns Stripe's JSON objects (times in Unix seconds), for
 * the calls billing makes: customers, card test tokens, monthly prices, subscriptions (trials,
 * proration, cancellation).
 *
 * Test tokens: `pm_card_visa` (every charge succeeds, visa 4242) and `pm_card_chargeDeclined`
 * (attaches, every charge declines, visa 0341). Time comes from the injected clock: every call
 * first brings the subscriptions it touches up to date (trial ends, renewals, cancellations at
 * period end), each renewal invoice charged to the default card.
 */
import { addMonths, DAY_MS } from '../periods.js';
import {
  bringUpToDate,
  chargeInvoice,
  fromSeconds,
  type Ledger,
  objectId,
  toSeconds,
} from './billing-cycle.js';
import { createInvoices } from './invoices.js';
import type {
  Customer,
  EngineObject,
  EngineStore,
  ObjectKind,
  ObjectOfKind,
  PaymentMethod,
  Price,
  Subscription,
} from './objects.js';
import {
  EngineError,
  integerParam,
  invalid,
  listParam,
  metadataOf,
  missing,
  objectParam,
  type StripeParams,
  stringOrNull,
} from './params.js';

const TEST_TOKENS: Record<string, { behavior: 'succeed' | 'decline'; brand: string; last4: string }> = {
  pm_card_visa: { behavior: 'succeed', brand: 'visa', last4: '4242' },
  pm_card_chargeDeclined: { behavior: 'decline', brand: 'visa', last4: '0341' },
};

export interface EngineOptions {
  store: EngineStore;
  now: () => Date;
}

export interface SubscriptionList {
  object: 'list';
  data: Subscription[];
  has_more: false;
  url: string;
}

/** The processor. Calls run one at a time (a simulator favours determinism over throughput). */
export class ProcessorEngine {
  private readonly store: EngineStore;
  private readonly now: () => Date;
  private readonly ledger: Ledger;
  private queue: Promise<unknown> = Promise.resolve();
  /** Invoices (one-off and subscription ones), in the same serial order as the rest. */
  readonly invoices = createInvoices((work) => this.serial(() => work(this.ledger)));

  constructor(options: EngineOptions) {
    this.store = options.store;
    this.now = options.now;
    this.ledger = {
      store: this.store,
      nowS: () => this.nowS(),
      save: (doc, tenantId) => this.save(doc, tenantId),
      customer: (id) => this.load(id, 'customer'),
    };
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => {});
    return run;
  }

  private nowS(): number {
    return toSeconds(this.now());
  }

  private async load<K extends ObjectKind>(id: unknown, kind: K, param = 'id'): Promise<ObjectOfKind<K>> {
    const doc = typeof id === 'string' && id ? await this.store.get(id) : undefined;
    if (!doc || doc.object !== kind) throw missing(kind, String(id), param);
    return doc as ObjectOfKind<K>;
  }

  private save(doc: EngineObject, tenantId: string | null = null): Promise<void> {
    return this.store.put(doc, tenantId ?? doc.metadata.tenant_id ?? null);
  }

  // Customers ---------------------------------------------------------------------------------

  createCustomer(params: StripeParams) {
    return this.serial(async () => {
      const customer: Customer = {
        id: objectId('cus'),
        object: 'customer',
        email: stringOrNull(params.email),
        name: stringOrNull(params.name),
        balance: 0,
        created: this.nowS(),
        invoice_settings: { default_payment_method: null },
        livemode: false,
        metadata: metadataOf(params.metadata),
      };
      await this.save(customer);
      return customer;
    });
  }

  updateCustomer(id: string, params: StripeParams) {
    return this.serial(async () => {
      const customer = await this.load(id, 'customer');
      const defaultPm = objectParam(params.invoice_settings)?.default_payment_method;
      if (defaultPm !== undefined) {
        if (defaultPm === '' || defaultPm === null) {
          customer.invoice_settings.default_payment_method = null;
        } else {
          const pm = await this.load(defaultPm, 'payment_method', 'invoice_settings[default_payment_method]');
          if (pm.customer !== customer.id) {
            throw new EngineError(
              400,
              'invalid_request_error',
              'resource_missing',
              `The payment method ${pm.id} is not attached to ${customer.id}.`,
            );
          }
          customer.invoice_settings.default_payment_method = pm.id;
        }
      }
      if (params.metadata) customer.metadata = { ...customer.metadata, ...metadataOf(params.metadata) };
      await this.save(customer);
      return customer;
    });
  }

  // Payment methods ---------------------------------------------------------------------------

  /** Attaching a test token creates a new card object, as Stripe test mode does. */
  attachPaymentMethod(token: string, params: StripeParams) {
    return this.serial(async () => {
      const customer = await this.load(params.customer, 'customer', 'customer');
      const test = TEST_TOKENS[token];
      if (!test) throw missing('payment_method', token);
      const pm: PaymentMethod = {
        id: objectId('pm'),
        object: 'payment_method',
        type: 'card',
        card: {
          brand: test.brand,
          last4: test.last4,
          exp_month: 12,
          exp_year: new Date(this.now()).getUTCFullYear() + 3,
          funding: 'credit',
        },
        customer: customer.id,
        created: this.nowS(),
        livemode: false,
        metadata: {},
        _behavior: test.behavior,
      };
      await this.save(pm, customer.metadata.tenant_id ?? null);
      return pm;
    });
  }

  detachPaymentMethod(id: string) {
    return this.serial(async () => {
      const pm = await this.load(id, 'payment_method');
      if (!pm.customer) {
        throw new EngineError(
          400,
          'invalid_request_error',
          'payment_method_unattached',
          `The payment method ${id} is not attached to a customer.`,
        );
      }
      const customer = await this.store.get(pm.customer);
      if (customer?.object === 'customer' && customer.invoice_settings.default_payment_method === pm.id) {
        customer.invoice_settings.default_payment_method = null;
        await this.save(customer);
      }
      pm.customer = null;
      await this.save(pm);
      return pm;
    });
  }

  // Prices ------------------------------------------------------------------------------------

  createPrice(params: StripeParams) {
    return this.serial(async () => {
      const currency = params.currency;
      if (typeof currency !== 'string' || !/^[a-z]{3}$/.test(currency)) {
        throw invalid('Invalid currency.', 'currency');
      }
      if (objectParam(params.recurring)?.interval !== 'month') {
        throw invalid('Only monthly prices are supported.', 'recurring[interval]');
      }
      const price: Price = {
        id: objectId('price'),
        object: 'price',
        active: true,
        currency,
        unit_amount: integerParam(params.unit_amount, 'unit_amount'),
        recurring: { interval: 'month', interval_count: 1 },
        product: objectId('prod'),
        nickname: stringOrNull(objectParam(params.product_data)?.name),
        type: 'recurring',
        created: this.nowS(),
        livemode: false,
        metadata: metadataOf(params.metadata),
      };
      await this.save(price);
      return price;
    });
  }

  // Subscriptions -----------------------------------------------------------------------------

  createSubscription(params: StripeParams) {
    return this.serial(async () => {
      const customer = await this.load(params.customer, 'customer', 'customer');
      const items = listParam(params.items);
      if (items.length !== 1 || !items[0].price) {
        throw invalid('Exactly one item with a price is supported.', 'items');
      }
      const price = await this.load(items[0].price, 'price', 'items[0][price]');
      const trialDays = integerParam(params.trial_period_days, 'trial_period_days', 0);
      const now = this.nowS();
      const trialEnd = trialDays > 0 ? now + trialDays * (DAY_MS / 1000) : null;
      const periodEnd = trialEnd ?? toSeconds(addMonths(fromSeconds(now), 1));
      const id = objectId('sub');
      const sub: Subscription = {
        id,
        object: 'subscription',
        customer: customer.id,
        status: trialEnd ? 'trialing' : 'incomplete',
        billing_cycle_anchor: trialEnd ?? now,
        cancel_at_period_end: false,
        canceled_at: null,
        ended_at: null,
        collection_method: 'charge_automatically',
        created: now,
        start_date: now,
        currency: price.currency,
        trial_start: trialEnd ? now : null,
        trial_end: trialEnd,
        default_payment_method: stringOrNull(params.default_payment_method),
        latest_invoice: null,
        livemode: false,
        metadata: metadataOf(params.metadata),
        items: {
          object: 'list',
          data: [
            {
              id: objectId('si'),
              object: 'subscription_item',
              created: now,
              price,
              quantity: 1,
              subscription: id,
              current_period_start: now,
              current_period_end: periodEnd,
            },
          ],
          has_more: false,
          url: `/v1/subscription_items?subscription=${id}`,
        },
        _pending_proration: 0,
      };
      const amount = trialEnd ? 0 : price.unit_amount;
      const invoice = await chargeInvoice(this.ledger, sub, customer, amount, 'subscription_create');
      if (!trialEnd) sub.status = invoice.status === 'paid' ? 'active' : 'incomplete';
      await this.save(sub, customer.metadata.tenant_id ?? null);
      return sub;
    });
  }

  retrieveSubscription(id: string) {
    return this.serial(async () => bringUpToDate(this.ledger, await this.load(id, 'subscription')));
  }

  listSubscriptions(params: StripeParams) {
    return this.serial(async (): Promise<SubscriptionList> => {
      const customer = await this.load(params.customer, 'customer', 'customer');
      const subs = await this.store.subscriptionsOf(customer.id);
      const data: Subscription[] = [];
      for (const sub of subs) {
        const current = await bringUpToDate(this.ledger, sub);
        if (
          params.status === 'all' ||
          (params.status ? current.status === params.status : current.status !== 'canceled')
        ) {
          data.push(current);
        }
      }
      data.sort((a, b) => b.created - a.created || (a.id < b.id ? 1 : -1));
      return { object: 'list', data, has_more: false, url: '/v1/subscriptions' };
    });
  }

  updateSubscription(id: string, params: StripeParams) {
    return this.serial(async () => {
      const sub = await bringUpToDate(this.ledger, await this.load(id, 'subscription'));
      if (sub.status === 'canceled' || sub.status === 'incomplete_expired') {
        throw new EngineError(
          400,
          'invalid_request_error',
          'resource_missing',
          `A canceled subscription can only update its cancellation_details and metadata.`,
        );
      }
      if (params.cancel_at_period_end !== undefined) {
        sub.cancel_at_period_end =
          params.cancel_at_period_end === true || params.cancel_at_period_end === 'true';
      }
      if (params.metadata) sub.metadata = { ...sub.metadata, ...metadataOf(params.metadata) };
      const items = listParam(params.items);
      if (items.length > 0) {
        const change = items[0];
        const item = sub.items.data[0];
        if (change.id && change.id !== item.id)
          throw missing('subscription_item', String(change.id), 'items[0][id]');
        const price = await this.load(change.price, 'price', 'items[0][price]');
        const behavior = params.proration_behavior ?? 'create_prorations';
        const now = this.nowS();
        const length = Math.max(1, item.current_period_end - item.current_period_start);
        const remaining = Math.max(0, item.current_period_end - now) / length;
        // In a trial the price charged is zero, so there is nothing to prorate.
        const proration =
          sub.status === 'trialing'
            ? 0
            : Math.round((price.unit_amount - item.price.unit_amount) * remaining);
        item.price = price;
        if (behavior === 'always_invoice') {
          const amount = proration + sub._pending_proration;
          sub._pending_proration = 0;
          const customer = await this.load(sub.customer, 'customer');
          const invoice = await chargeInvoice(this.ledger, sub, customer, amount, 'subscription_update');
          if (invoice.status !== 'paid' && sub.status !== 'trialing') sub.status = 'past_due';
          else if (invoice.status === 'paid' && sub.status === 'past_due') sub.status = 'active';
        } else if (behavior === 'create_prorations') {
          sub._pending_proration += proration;
        }
      }
      await this.save(sub);
      return sub;
    });
  }

  cancelSubscription(id: string) {
    return this.serial(async () => {
      const sub = await bringUpToDate(this.ledger, await this.load(id, 'subscription'));
      if (sub.status === 'canceled') {
        throw new EngineError(
          400,
          'invalid_request_error',
          'resource_missing',
          `No such subscription: '${id}'; it is already canceled.`,
        );
      }
      const now = this.nowS();
      sub.status = 'canceled';
      sub.canceled_at = now;
      sub.ended_at = now;
      await this.save(sub);
      return sub;
    });
  }
}
