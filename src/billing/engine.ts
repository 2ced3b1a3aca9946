/**
 * A small card processor with Stripe test-mode semantics, behind the `simulated` adapter and the
 * Stripe-protocol test server (test/support/stripe-server.ts). It takes Stripe's request
 * parameters and returns Stripe's JSON objects (times in Unix seconds), for the calls billing makes:
 * customers, card test tokens, monthly prices, subscriptions (trials, proration, cancellation).
 *
 * Test tokens: `pm_card_visa` (every charge succeeds, visa 4242) and `pm_card_chargeDeclined`
 * (attaches, every charge declines, visa 0341). Time comes from the injected clock: every call
 * first brings the subscriptions it touches up to date (trial ends, renewals, cancellations at
 * period end), each renewal invoice charged to the default card.
 */
import crypto from 'node:crypto';
import { addMonths, DAY_MS } from './periods.js';

/** Where the processor keeps its objects: memory (test server) or the database (simulated adapter). */
export interface EngineStore {
  get(id: string): Promise<any | undefined>;
  put(id: string, kind: string, doc: any, tenantId: string | null): Promise<void>;
  /** Objects of a kind whose `field` equals `value` (customers' subscriptions). */
  find(kind: string, field: string, value: string): Promise<any[]>;
}

export function memoryStore(): EngineStore {
  const objects = new Map<string, { kind: string; doc: any }>();
  return {
    async get(id) {
      const found = objects.get(id);
      return found ? structuredClone(found.doc) : undefined;
    },
    async put(id, kind, doc) {
      objects.set(id, { kind, doc: structuredClone(doc) });
    },
    async find(kind, field, value) {
      return [...objects.values()]
        .filter((o) => o.kind === kind && o.doc[field] === value)
        .map((o) => structuredClone(o.doc));
    },
  };
}

/** A Stripe-shaped error: HTTP status plus the `error` object of Stripe's answer. */
export class EngineError extends Error {
  constructor(
    readonly status: number,
    readonly type: 'invalid_request_error' | 'card_error' | 'api_error' | 'idempotency_error',
    readonly code: string | undefined,
    message: string,
    readonly param?: string,
  ) {
    super(message);
    this.name = 'EngineError';
  }
  toStripe() {
    return {
      error: {
        type: this.type,
        message: this.message,
        ...(this.code ? { code: this.code } : {}),
        ...(this.param ? { param: this.param } : {}),
      },
    };
  }
}

const TEST_TOKENS: Record<string, { behavior: 'succeed' | 'decline'; brand: string; last4: string }> = {
  pm_card_visa: { behavior: 'succeed', brand: 'visa', last4: '4242' },
  pm_card_chargeDeclined: { behavior: 'decline', brand: 'visa', last4: '0341' },
};

// Stripe lets an incomplete subscription's first invoice be paid for 23 hours.
const INCOMPLETE_WINDOW_S = 23 * 60 * 60;
const LIVE_STATUSES = new Set(['trialing', 'active', 'past_due', 'unpaid']);

function objectId(prefix: string): string {
  return `${prefix}_${crypto.randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
}

const toSeconds = (d: Date) => Math.floor(d.getTime() / 1000);
const fromSeconds = (s: number) => new Date(s * 1000);

function missing(kind: string, id: string, param = 'id'): EngineError {
  return new EngineError(404, 'invalid_request_error', 'resource_missing', `No such ${kind}: '${id}'`, param);
}

function integerParam(value: unknown, param: string, fallback?: number): number {
  if (value === undefined || value === '') {
    if (fallback !== undefined) return fallback;
    throw new EngineError(
      400,
      'invalid_request_error',
      'parameter_missing',
      `Missing required param: ${param}.`,
      param,
    );
  }
  const n = typeof value === 'number' ? value : Number(value);
  if (!Number.isInteger(n) || n < 0) {
    throw new EngineError(
      400,
      'invalid_request_error',
      'parameter_invalid_integer',
      `Invalid integer: ${value}`,
      param,
    );
  }
  return n;
}

function metadataOf(value: unknown): Record<string, string> {
  if (!value || typeof value !== 'object') return {};
  return Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([k, v]) => [k, String(v)]));
}

export interface EngineOptions {
  store: EngineStore;
  now: () => Date;
}

/** The processor. Calls run one at a time (a simulator favours determinism over throughput). */
export class ProcessorEngine {
  private readonly store: EngineStore;
  private readonly now: () => Date;
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: EngineOptions) {
    this.store = options.store;
    this.now = options.now;
  }

  private serial<T>(work: () => Promise<T>): Promise<T> {
    const run = this.queue.then(work, work);
    this.queue = run.catch(() => {});
    return run;
  }

  private nowS(): number {
    return toSeconds(this.now());
  }

  private async load(id: string, kind: string, param = 'id'): Promise<any> {
    const doc = typeof id === 'string' && id ? await this.store.get(id) : undefined;
    if (!doc || doc.object !== kind) throw missing(kind, String(id), param);
    return doc;
  }

  private save(doc: any, tenantId: string | null = null): Promise<void> {
    return this.store.put(doc.id, doc.object, doc, tenantId ?? doc.metadata?.tenant_id ?? null);
  }

  // Customers ---------------------------------------------------------------------------------

  createCustomer(params: any) {
    return this.serial(async () => {
      const customer = {
        id: objectId('cus'),
        object: 'customer',
        email: params.email ?? null,
        name: params.name ?? null,
        balance: 0,
        created: this.nowS(),
        invoice_settings: { default_payment_method: null as string | null },
        livemode: false,
        metadata: metadataOf(params.metadata),
      };
      await this.save(customer);
      return customer;
    });
  }

  updateCustomer(id: string, params: any) {
    return this.serial(async () => {
      const customer = await this.load(id, 'customer');
      const defaultPm = params.invoice_settings?.default_payment_method;
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
  attachPaymentMethod(token: string, params: any) {
    return this.serial(async () => {
      const customer = await this.load(params.customer, 'customer', 'customer');
      const test = TEST_TOKENS[token];
      if (!test) throw missing('payment_method', token);
      const pm = {
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
      await this.save(pm, customer.metadata?.tenant_id ?? null);
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
      if (customer?.invoice_settings?.default_payment_method === pm.id) {
        customer.invoice_settings.default_payment_method = null;
        await this.save(customer);
      }
      pm.customer = null;
      await this.save(pm);
      return pm;
    });
  }

  // Prices ------------------------------------------------------------------------------------

  createPrice(params: any) {
    return this.serial(async () => {
      if (typeof params.currency !== 'string' || !/^[a-z]{3}$/.test(params.currency)) {
        throw new EngineError(
          400,
          'invalid_request_error',
          'parameter_invalid',
          'Invalid currency.',
          'currency',
        );
      }
      if (params.recurring?.interval !== 'month') {
        throw new EngineError(
          400,
          'invalid_request_error',
          'parameter_invalid',
          'Only monthly prices are supported.',
          'recurring[interval]',
        );
      }
      const price = {
        id: objectId('price'),
        object: 'price',
        active: true,
        currency: params.currency,
        unit_amount: integerParam(params.unit_amount, 'unit_amount'),
        recurring: { interval: 'month', interval_count: 1 },
        product: objectId('prod'),
        nickname: params.product_data?.name ?? null,
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

  createSubscription(params: any) {
    return this.serial(async () => {
      const customer = await this.load(params.customer, 'customer', 'customer');
      const itemsParam = Array.isArray(params.items) ? params.items : [];
      if (itemsParam.length !== 1 || !itemsParam[0]?.price) {
        throw new EngineError(
          400,
          'invalid_request_error',
          'parameter_invalid',
          'Exactly one item with a price is supported.',
          'items',
        );
      }
      const price = await this.load(itemsParam[0].price, 'price', 'items[0][price]');
      const trialDays = integerParam(params.trial_period_days, 'trial_period_days', 0);
      const now = this.nowS();
      const trialEnd = trialDays > 0 ? now + trialDays * (DAY_MS / 1000) : null;
      const periodEnd = trialEnd ?? toSeconds(addMonths(fromSeconds(now), 1));
      const id = objectId('sub');
      const sub = {
        id,
        object: 'subscription',
        customer: customer.id,
        status: trialEnd ? 'trialing' : 'incomplete',
        billing_cycle_anchor: periodEnd === trialEnd ? trialEnd : now,
        cancel_at_period_end: false,
        canceled_at: null as number | null,
        ended_at: null as number | null,
        collection_method: 'charge_automatically',
        created: now,
        start_date: now,
        currency: price.currency,
        trial_start: trialEnd ? now : null,
        trial_end: trialEnd,
        default_payment_method: params.default_payment_method ?? null,
        latest_invoice: null as string | null,
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
      const invoice = await this.invoice(sub, customer, amount, 'subscription_create');
      if (!trialEnd) sub.status = invoice.status === 'paid' ? 'active' : 'incomplete';
      await this.save(sub, customer.metadata?.tenant_id ?? null);
      return sub;
    });
  }

  retrieveSubscription(id: string) {
    return this.serial(async () => this.current(await this.load(id, 'subscription')));
  }

  listSubscriptions(params: any) {
    return this.serial(async () => {
      const customer = await this.load(params.customer, 'customer', 'customer');
      const subs = await this.store.find('subscription', 'customer', customer.id);
      const data = [];
      for (const sub of subs) {
        const current = await this.current(sub);
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

  updateSubscription(id: string, params: any) {
    return this.serial(async () => {
      const sub = await this.current(await this.load(id, 'subscription'));
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
      const itemsParam = Array.isArray(params.items) ? params.items : [];
      if (itemsParam.length > 0) {
        const change = itemsParam[0];
        const item = sub.items.data[0];
        if (change.id && change.id !== item.id) throw missing('subscription_item', change.id, 'items[0][id]');
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
          const invoice = await this.invoice(sub, customer, amount, 'subscription_update');
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
      const sub = await this.current(await this.load(id, 'subscription'));
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

  /** Brings a subscription up to now: incomplete expiry, trial end, renewals, end of period cancellation. */
  private async current(sub: any): Promise<any> {
    const now = this.nowS();
    let changed = false;
    if (sub.status === 'incomplete' && now >= sub.created + INCOMPLETE_WINDOW_S) {
      sub.status = 'incomplete_expired';
      sub.ended_at = sub.created + INCOMPLETE_WINDOW_S;
      changed = true;
    }
    const item = sub.items.data[0];
    while (LIVE_STATUSES.has(sub.status) && now >= item.current_period_end) {
      changed = true;
      const boundary = item.current_period_end;
      if (sub.cancel_at_period_end) {
        sub.status = 'canceled';
        sub.canceled_at = sub.canceled_at ?? boundary;
        sub.ended_at = boundary;
        break;
      }
      if (sub.trial_end && boundary === sub.trial_end) sub.billing_cycle_anchor = boundary;
      item.current_period_start = boundary;
      let months = 1;
      let end = toSeconds(addMonths(fromSeconds(sub.billing_cycle_anchor), months));
      while (end <= boundary) end = toSeconds(addMonths(fromSeconds(sub.billing_cycle_anchor), ++months));
      item.current_period_end = end;
      const amount = item.price.unit_amount + sub._pending_proration;
      sub._pending_proration = 0;
      const customer = await this.load(sub.customer, 'customer');
      const invoice = await this.invoice(sub, customer, amount, 'subscription_cycle');
      sub.status = invoice.status === 'paid' ? 'active' : 'past_due';
    }
    if (changed) await this.save(sub);
    return sub;
  }

  /** Finalizes an invoice and charges the default card; credit (negative totals) goes to the customer balance. */
  private async invoice(sub: any, customer: any, amount: number, reason: string) {
    let due = amount + (customer.balance ?? 0);
    let balance = 0;
    if (due < 0) {
      balance = due;
      due = 0;
    }
    let paid = due === 0;
    if (!paid) {
      const pmId = sub.default_payment_method ?? customer.invoice_settings?.default_payment_method;
      const pm = pmId ? await this.store.get(pmId) : undefined;
      paid = pm?.customer === customer.id && pm._behavior === 'succeed';
    }
    if (paid || due === 0) {
      customer.balance = balance;
      await this.save(customer);
    }
    const invoice = {
      id: objectId('in'),
      object: 'invoice',
      customer: customer.id,
      currency: sub.currency,
      amount_due: due,
      amount_paid: paid ? due : 0,
      amount_remaining: paid ? 0 : due,
      attempt_count: due > 0 ? 1 : 0,
      billing_reason: reason,
      status: paid ? 'paid' : 'open',
      created: this.nowS(),
      livemode: false,
      parent: { type: 'subscription_details', subscription_details: { subscription: sub.id } },
      metadata: {},
    };
    await this.save(invoice, customer.metadata?.tenant_id ?? null);
    sub.latest_invoice = invoice.id;
    return invoice;
  }
}

/** The object as Stripe would send it (internal bookkeeping fields removed). */
export function publicObject<T>(doc: T): T {
  return JSON.parse(JSON.stringify(doc, (key, value) => (key.startsWith('_') ? undefined : value)));
}
