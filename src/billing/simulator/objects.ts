/**
 * The simulator's objects, shaped as Stripe sends them (times in Unix seconds), and where they are
 * kept. Fields that start with `_` are the simulator's own bookkeeping, removed by `publicObject`
 * before an object leaves it.
 */

export type SubscriptionStatus =
  | 'trialing'
  | 'active'
  | 'past_due'
  | 'canceled'
  | 'unpaid'
  | 'incomplete'
  | 'incomplete_expired';

export type Metadata = Record<string, string>;

export interface Customer {
  id: string;
  object: 'customer';
  email: string | null;
  name: string | null;
  /** Credit (negative) carried to the next invoice, in the smallest currency unit. */
  balance: number;
  created: number;
  invoice_settings: { default_payment_method: string | null };
  livemode: false;
  metadata: Metadata;
}

export interface PaymentMethod {
  id: string;
  object: 'payment_method';
  type: 'card';
  card: { brand: string; last4: string; exp_month: number; exp_year: number; funding: 'credit' };
  customer: string | null;
  created: number;
  livemode: false;
  metadata: Metadata;
  /** What charging this test card does. */
  _behavior: 'succeed' | 'decline';
}

export interface Price {
  id: string;
  object: 'price';
  active: boolean;
  currency: string;
  unit_amount: number;
  recurring: { interval: 'month'; interval_count: 1 };
  product: string;
  nickname: string | null;
  type: 'recurring';
  created: number;
  livemode: false;
  metadata: Metadata;
}

export interface SubscriptionItem {
  id: string;
  object: 'subscription_item';
  created: number;
  price: Price;
  quantity: 1;
  subscription: string;
  current_period_start: number;
  current_period_end: number;
}

export interface Subscription {
  id: string;
  object: 'subscription';
  customer: string;
  status: SubscriptionStatus;
  billing_cycle_anchor: number;
  cancel_at_period_end: boolean;
  canceled_at: number | null;
  ended_at: number | null;
  collection_method: 'charge_automatically';
  created: number;
  start_date: number;
  currency: string;
  trial_start: number | null;
  trial_end: number | null;
  default_payment_method: string | null;
  latest_invoice: string | null;
  livemode: false;
  metadata: Metadata;
  /** Exactly one item (the simulator supports single-price subscriptions). */
  items: { object: 'list'; data: SubscriptionItem[]; has_more: false; url: string };
  /** Proration not invoiced yet, added to the next invoice. */
  _pending_proration: number;
}

export interface Invoice {
  id: string;
  object: 'invoice';
  customer: string;
  currency: string;
  /** The lines' sum; amount_due is what remains after the customer's credit balance. */
  total: number;
  amount_due: number;
  amount_paid: number;
  amount_remaining: number;
  application_fee_amount: number | null;
  attempt_count: number;
  attempted: boolean;
  auto_advance: boolean;
  billing_reason: 'subscription_create' | 'subscription_update' | 'subscription_cycle' | 'manual';
  collection_method: 'charge_automatically';
  /** draft: one-off, still editable (billing/simulator/invoices.ts); open: finalized, not paid. */
  status: 'draft' | 'open' | 'paid';
  created: number;
  description: string | null;
  livemode: false;
  /** null: a one-off invoice. */
  parent: { type: 'subscription_details'; subscription_details: { subscription: string } } | null;
  metadata: Metadata;
}

/** The ids of a customer's invoices, newest last. */
export interface CustomerInvoices {
  id: string;
  object: 'customer_invoices';
  ids: string[];
  metadata: Metadata;
}

/** A Stripe-shaped error as stored with an idempotency record, to be thrown again on replay. */
export interface StoredError {
  status: number;
  type: 'invalid_request_error' | 'card_error' | 'api_error' | 'idempotency_error';
  code: string | undefined;
  message: string;
}

/** The first answer to an idempotency key (the simulated adapter's replay store). */
export interface IdempotencyRecord {
  id: string;
  object: 'idempotency_record';
  fingerprint: string;
  result?: unknown;
  error?: StoredError;
}

export interface PaymentIntentError {
  type: 'card_error';
  code: 'card_declined';
  decline_code: string;
  doc_url: string;
  message: string;
  payment_method: { id: string; object: 'payment_method'; type: 'card' };
}

export interface PaymentIntent {
  id: string;
  object: 'payment_intent';
  amount: number;
  amount_received: number;
  capture_method: 'automatic_async';
  client_secret: string;
  confirmation_method: 'automatic';
  created: number;
  currency: string;
  customer: string;
  description: string | null;
  last_payment_error: PaymentIntentError | null;
  latest_charge: string | null;
  livemode: false;
  metadata: Metadata;
  payment_method: string | null;
  payment_method_types: ['card'];
  status: 'requires_payment_method' | 'requires_confirmation' | 'succeeded';
}

/** The ids of a customer's PaymentIntents, newest last (the store has no query by customer). */
export interface CustomerPaymentIntents {
  id: string;
  object: 'customer_payment_intents';
  ids: string[];
  metadata: Metadata;
}

/** An amount added to a customer's next invoice (`invoice` null until an invoice takes it). */
export interface InvoiceItem {
  id: string;
  object: 'invoiceitem';
  amount: number;
  currency: string;
  customer: string;
  date: number;
  description: string | null;
  discountable: boolean;
  discounts: string[];
  invoice: string | null;
  livemode: false;
  metadata: Metadata;
  parent: { type: 'subscription_details'; subscription_details: { subscription: string } } | null;
  period: { start: number; end: number };
  pricing: { type: 'price_details'; unit_amount_decimal: string } | null;
  proration: false;
  quantity: number;
  tax_rates: [];
  test_clock: null;
}

/** The ids of a customer's invoice items, newest last. */
export interface CustomerInvoiceItems {
  id: string;
  object: 'customer_invoice_items';
  ids: string[];
  metadata: Metadata;
}

/** The objects the engine creates (PaymentIntents and invoice items: src/billing/simulated-*.ts). */
export type EngineObject =
  | Customer
  | PaymentMethod
  | Price
  | Subscription
  | Invoice
  | CustomerInvoices
  | PaymentIntent
  | CustomerPaymentIntents
  | InvoiceItem
  | CustomerInvoiceItems;
/** Everything a store keeps. */
export type StoredObject = EngineObject | IdempotencyRecord;
export type ObjectKind = StoredObject['object'];
export type ObjectOfKind<K extends ObjectKind> = Extract<StoredObject, { object: K }>;

/** Where the processor keeps its objects: memory (test server) or the database (simulated adapter). */
export interface EngineStore {
  get(id: string): Promise<StoredObject | undefined>;
  /** Inserts or replaces the object with its id; `tenantId` labels the row (null: not a tenant's). */
  put(doc: StoredObject, tenantId: string | null): Promise<void>;
  /** The subscriptions of a customer. */
  subscriptionsOf(customerId: string): Promise<Subscription[]>;
}

export function memoryStore(): EngineStore {
  const objects = new Map<string, StoredObject>();
  return {
    async get(id) {
      const found = objects.get(id);
      return found ? structuredClone(found) : undefined;
    },
    async put(doc) {
      objects.set(doc.id, structuredClone(doc));
    },
    async subscriptionsOf(customerId) {
      const found: Subscription[] = [];
      for (const doc of objects.values()) {
        if (doc.object === 'subscription' && doc.customer === customerId) found.push(structuredClone(doc));
      }
      return found;
    },
  };
}

/** The object as Stripe would send it (internal bookkeeping fields removed). */
export function publicObject<T>(doc: T): T {
  return JSON.parse(JSON.stringify(doc, (key, value) => (key.startsWith('_') ? undefined : value)));
}
