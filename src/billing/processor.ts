/**
 * The card-processor port: the operations billing needs, with Stripe's semantics (customers,
 * cards, monthly prices, subscriptions with trials, price changes with proration, cancellation,
 * one-off charges of the card on file, invoice items, one-off invoices charged to the card on file).
 * Adapters: `simulated` (in-process, ./simulator/) and `stripe` (the official SDK, ./stripe/).
 *
 * Every call that changes something takes an idempotency key: the processor performs it once per
 * key and replays the first answer to repeats, so a retry after a timeout never charges twice.
 */
import crypto from 'node:crypto';

/** The processor's subscription states (Stripe's). */
export type ProcessorStatus =
  | 'trialing'
  | 'active'
  | 'past_due'
  | 'canceled'
  | 'unpaid'
  | 'paused'
  | 'incomplete'
  | 'incomplete_expired';

export interface ProcessorSubscription {
  id: string;
  /** The subscription's single item, whose price a plan change swaps. */
  itemId: string;
  priceId: string;
  status: ProcessorStatus;
  currentPeriodStart: Date;
  currentPeriodEnd: Date;
  cancelAtPeriodEnd: boolean;
  trialEnd: Date | null;
  /** Our metadata, echoed (`vp_operation` finds a subscription whose creation answer was lost). */
  metadata: Record<string, string>;
}

export interface Card {
  id: string;
  brand: string;
  last4: string;
}

/**
 * A one-off charge (Stripe: a PaymentIntent). `processing`: the processor has not settled it yet
 * (not seen with cards, but possible); look again later.
 */
export type Charge =
  | { id: string; status: 'succeeded'; amount: number; currency: string }
  | { id: string; status: 'processing'; amount: number; currency: string }
  | {
      id: string;
      status: 'declined';
      amount: number;
      currency: string;
      /** The processor's reason, e.g. `generic_decline`, `insufficient_funds`. */
      declineCode: string | null;
      message: string;
    };

export interface ChargeInput {
  customerId: string;
  /** The customer's default card (attachPaymentMethod made it the default). */
  paymentMethodId: string;
  /** In the currency's minor unit. */
  amount: number;
  currency: string;
  description: string;
  /** Our references (e.g. `top_up_id`); `findCharge` finds a charge by one of them. */
  metadata: Record<string, string>;
  /** The platform's cut in minor units (Stripe: `application_fee_amount`); connected accounts only. */
  applicationFeeAmount?: number | null;
}

export interface InvoiceItemInput {
  customerId: string;
  /**
   * The subscription whose next invoice carries the item (Stripe: `subscription`); null: pending on
   * the customer, for the next invoice made for them (a one-off one, or else the next renewal).
   */
  subscriptionId: string | null;
  /** In the currency's minor unit. */
  amount: number;
  currency: string;
  description: string;
  /** The period the item bills for, shown on the invoice. */
  period: { start: Date; end: Date };
  /** Our references (e.g. `overage_charge_id`); `findInvoiceItem` finds an item by one of them. */
  metadata: Record<string, string>;
}

/** An invoice item (Stripe: InvoiceItem); `invoiceId` null while it waits for the next invoice. */
export interface InvoiceItem {
  id: string;
  amount: number;
  currency: string;
  invoiceId: string | null;
  /** The subscription whose next invoice takes it; null: any invoice made for the customer. */
  subscriptionId: string | null;
  metadata: Record<string, string>;
}

/**
 * An invoice (Stripe: Invoice). A one-off one is made `draft`, finalized to `open` (or straight to
 * `paid` when nothing is due) and paid with the card on file; a declined payment leaves it open.
 */
export interface ProcessorInvoice {
  id: string;
  status: 'draft' | 'open' | 'paid' | 'uncollectible' | 'void';
  /** In the currency's minor unit, after the customer's credit balance. */
  amountDue: number;
  amountPaid: number;
  currency: string;
  metadata: Record<string, string>;
}

export interface InvoiceInput {
  customerId: string;
  description: string;
  /** Our references (e.g. `overage_charge_id`); `findInvoice` finds an invoice by one of them. */
  metadata: Record<string, string>;
  /** The platform's cut in minor units (Stripe: `application_fee_amount`); connected accounts only. */
  applicationFeeAmount?: number | null;
}

/** The answer to paying an invoice: paid, or declined (the invoice stays open). */
export type InvoicePayment =
  | { status: 'paid'; invoice: ProcessorInvoice }
  | { status: 'declined'; invoice: ProcessorInvoice; declineCode: string | null; message: string };

/** The lookup that finds an object whose creation answer was lost, by one of our metadata values. */
export interface MetadataQuery {
  customerId: string;
  metadataKey: string;
  metadataValue: string;
  createdSince: Date;
}

export interface PaymentProcessor {
  readonly name: 'simulated' | 'stripe';
  /**
   * This processor bound to a connected account (Stripe Connect, `acct_…`): every request it makes
   * carries the account (Stripe: the `Stripe-Account` header), so its objects live there and those
   * of another account are unknown to it (`resource_missing`). null: the platform's own account.
   * See docs/processor-accounts.md and src/billing/accounts.ts.
   */
  forAccount(accountId: string | null): PaymentProcessor;
  createCustomer(
    input: { email: string; name: string | null; metadata: Record<string, string> },
    key: string,
  ): Promise<{ id: string }>;
  /** Attaches a card (a test token such as `pm_card_visa`) and makes it the customer's default. */
  attachPaymentMethod(input: { customerId: string; token: string }, key: string): Promise<Card>;
  detachPaymentMethod(paymentMethodId: string, key: string): Promise<void>;
  /** A recurring monthly price. */
  createPrice(
    input: { currency: string; unitAmount: number; productName: string; metadata: Record<string, string> },
    key: string,
  ): Promise<{ id: string }>;
  /**
   * Starts a subscription. Without a trial the first invoice is charged at once; a declined
   * charge leaves the subscription `incomplete`.
   */
  createSubscription(
    input: {
      customerId: string;
      priceId: string;
      trialPeriodDays: number;
      metadata: Record<string, string>;
      /** The platform's cut of each invoice (Stripe: `application_fee_percent`); connected accounts only. */
      applicationFeePercent?: number | null;
    },
    key: string,
  ): Promise<ProcessorSubscription>;
  /**
   * Swaps the price. `invoiceNow` (upgrade): the proration is invoiced and charged at once, a
   * declined charge leaves the subscription `past_due`; otherwise (downgrade) the proration credit
   * goes to the next invoice.
   */
  changePrice(
    input: { subscriptionId: string; itemId: string; priceId: string; invoiceNow: boolean },
    key: string,
  ): Promise<ProcessorSubscription>;
  cancelSubscription(subscriptionId: string, key: string): Promise<ProcessorSubscription>;
  /** Ends the subscription when its current period ends (Stripe: `cancel_at_period_end: true`). */
  cancelAtPeriodEnd(subscriptionId: string, key: string): Promise<ProcessorSubscription>;
  retrieveSubscription(subscriptionId: string): Promise<ProcessorSubscription>;
  /** The customer's subscription created by our operation `operationId`, if any. */
  findSubscriptionByOperation(
    customerId: string,
    operationId: string,
  ): Promise<ProcessorSubscription | undefined>;
  /**
   * Charges the customer's card at once, the customer not present (off-session). A decline is an
   * answer (`status: 'declined'`), not an error; a refusal of the request (amount too small,
   * unknown card) throws ProcessorRequestError.
   */
  chargeCustomer(input: ChargeInput, key: string): Promise<Charge>;
  /**
   * The customer's charge whose metadata `metadataKey` is `metadataValue`, created at or after
   * `createdSince`, if any: finds a charge whose answer was lost.
   */
  findCharge(query: MetadataQuery): Promise<Charge | undefined>;
  /**
   * Adds an amount to the customer's next invoice (of `subscriptionId`); nothing is charged now. A
   * refusal of the request (unknown customer) throws ProcessorRequestError.
   */
  createInvoiceItem(input: InvoiceItemInput, key: string): Promise<InvoiceItem>;
  /** The customer's invoice item whose metadata `metadataKey` is `metadataValue`, created since `createdSince`. */
  findInvoiceItem(query: MetadataQuery): Promise<InvoiceItem | undefined>;
  /**
   * A draft one-off invoice for the customer that takes their pending invoice items (those of no
   * subscription), collected automatically from the default card but not advanced by the processor
   * on its own (Stripe: `auto_advance: false`): finalizeInvoice and payInvoice drive it.
   */
  createInvoice(input: InvoiceInput, key: string): Promise<ProcessorInvoice>;
  /** The customer's invoice whose metadata `metadataKey` is `metadataValue`, created since `createdSince`. */
  findInvoice(query: MetadataQuery): Promise<ProcessorInvoice | undefined>;
  retrieveInvoice(invoiceId: string): Promise<ProcessorInvoice>;
  /** draft → open (paid at once when nothing is due). */
  finalizeInvoice(invoiceId: string, key: string): Promise<ProcessorInvoice>;
  /** Charges the default card, off-session, for an open invoice; a decline is an answer, not an error. */
  payInvoice(invoiceId: string, key: string): Promise<InvoicePayment>;
}

/** The processor did not answer usably (timeout, network, 5xx, rate limit): the outcome is unknown. */
export class ProcessorUnavailableError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ProcessorUnavailableError';
  }
}

/** The processor refused the request (unknown object or token, invalid parameters). */
export class ProcessorRequestError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status = 400,
  ) {
    super(message);
    this.name = 'ProcessorRequestError';
  }
}

/**
 * The base of the processor idempotency keys for one partner request: derived from the tenant and
 * the partner's Idempotency-Key (hashed: Stripe allows 255 characters and keys are per tenant).
 */
export function processorKeyBase(tenantId: string, idempotencyKey: string): string {
  return `vp_${crypto.createHash('sha256').update(`${tenantId}\n${idempotencyKey}`).digest('hex').slice(0, 40)}`;
}

/** The fields of a Stripe PaymentIntent a charge is read from (both adapters speak Stripe's shapes). */
export interface PaymentIntentLike {
  id: string;
  status: string;
  amount: number;
  currency: string;
  last_payment_error?: { decline_code?: string | null; message?: string | null } | null;
}

/**
 * A PaymentIntent as a charge: `succeeded`; `requires_payment_method` (a failed confirmation) and
 * `canceled` are declined; anything else has not settled yet.
 */
export function chargeOfPaymentIntent(intent: PaymentIntentLike): Charge {
  const { id, amount, currency } = intent;
  if (intent.status === 'succeeded') return { id, status: 'succeeded', amount, currency };
  if (intent.status === 'requires_payment_method' || intent.status === 'canceled') {
    return {
      id,
      status: 'declined',
      amount,
      currency,
      declineCode: intent.last_payment_error?.decline_code ?? null,
      message: intent.last_payment_error?.message ?? 'The card was not charged.',
    };
  }
  return { id, status: 'processing', amount, currency };
}
