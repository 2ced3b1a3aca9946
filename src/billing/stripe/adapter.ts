/**
 * The `stripe` processor adapter (PROCESSOR=stripe): the official SDK against the Stripe API, or
 * any server speaking its protocol at STRIPE_API_BASE (the test suite runs one). Each changing call
 * carries our idempotency key; the SDK retries network failures and 5xx answers with that same key.
 */
import Stripe from 'stripe';
import {
  type Card,
  type Charge,
  chargeOfPaymentIntent,
  type InvoiceItem,
  type InvoicePayment,
  type PaymentProcessor,
  type ProcessorInvoice,
  ProcessorRequestError,
  type ProcessorStatus,
  type ProcessorSubscription,
  ProcessorUnavailableError,
} from '../processor.js';

export interface StripeProcessorOptions {
  secretKey: string;
  /** e.g. http://127.0.0.1:12111 (a Stripe-compatible server); unset: api.stripe.com. */
  apiBase?: string;
  /** Per request, in ms (the SDK's default is 80 s; a partner request should not wait that long). */
  timeoutMs?: number;
  maxNetworkRetries?: number;
  /**
   * A connected account (Stripe Connect): every request carries it as the `Stripe-Account` header
   * (the SDK's `stripeAccount`), so the objects live in that account. Unset: the platform's own.
   */
  stripeAccount?: string;
}

function toProcessorSubscription(sub: Stripe.Subscription): ProcessorSubscription {
  const item = sub.items.data[0];
  return {
    id: sub.id,
    itemId: item.id,
    priceId: item.price.id,
    status: sub.status as ProcessorStatus,
    currentPeriodStart: new Date(item.current_period_start * 1000),
    currentPeriodEnd: new Date(item.current_period_end * 1000),
    cancelAtPeriodEnd: sub.cancel_at_period_end,
    trialEnd: sub.trial_end ? new Date(sub.trial_end * 1000) : null,
    metadata: (sub.metadata ?? {}) as Record<string, string>,
  };
}

function toInvoiceItem(item: Stripe.InvoiceItem): InvoiceItem {
  const invoice = item.invoice;
  return {
    id: item.id,
    amount: item.amount,
    currency: item.currency,
    invoiceId: typeof invoice === 'string' ? invoice : (invoice?.id ?? null),
    subscriptionId: item.parent?.subscription_details?.subscription ?? null,
    metadata: (item.metadata ?? {}) as Record<string, string>,
  };
}

function toProcessorInvoice(invoice: Stripe.Invoice): ProcessorInvoice {
  return {
    id: invoice.id,
    status: (invoice.status ?? 'draft') as ProcessorInvoice['status'],
    amountDue: invoice.amount_due,
    amountPaid: invoice.amount_paid,
    currency: invoice.currency,
    metadata: (invoice.metadata ?? {}) as Record<string, string>,
  };
}

/** SDK errors → the port's: unknown outcome (retry later) or a refusal. */
function mapError(error: unknown): never {
  const e = error as { type?: string; statusCode?: number; code?: string; message?: string };
  if (
    e?.type === 'StripeConnectionError' ||
    e?.type === 'StripeAPIError' ||
    e?.type === 'StripeRateLimitError' ||
    (typeof e?.statusCode === 'number' &&
      (e.statusCode >= 500 || e.statusCode === 429 || e.statusCode === 409))
  ) {
    throw new ProcessorUnavailableError(`Stripe is unavailable: ${e.message ?? 'no answer'}`, {
      cause: error,
    });
  }
  if (e?.type === 'StripeIdempotencyError') {
    // The key was used with other parameters (e.g. an application fee changed between a lost answer
    // and its retry): the first attempt may have charged. Outcome unknown, so reconciliation
    // decides from what Stripe holds; never a refusal that would abandon a charge made.
    throw new ProcessorUnavailableError(`Stripe could not replay the request: ${e.message}`, {
      cause: error,
    });
  }
  if (e?.type === 'StripeAuthenticationError' || e?.type === 'StripePermissionError') {
    // Our configuration is wrong, not the partner's request: report it as an outage of billing.
    throw new ProcessorUnavailableError(`Stripe refused our credentials: ${e.message}`, { cause: error });
  }
  if (typeof e?.type === 'string' && e.type.startsWith('Stripe')) {
    throw new ProcessorRequestError(
      e.code ?? 'invalid_request',
      e.message ?? 'Stripe refused the request.',
      e.statusCode ?? 400,
    );
  }
  throw error;
}

/**
 * A declined confirmation is Stripe's 402 card_error naming the PaymentIntent it left. A card error
 * without one (no intent was made) stays a refusal of the request (mapError).
 */
function declinedCharge(error: unknown, input: { amount: number; currency: string }): Charge | undefined {
  const e = error as {
    type?: string;
    message?: string;
    decline_code?: string;
    code?: string;
    payment_intent?: Stripe.PaymentIntent;
  };
  if (e?.type !== 'StripeCardError' || !e.payment_intent?.id) return undefined;
  const charge = chargeOfPaymentIntent(e.payment_intent);
  if (charge.status !== 'declined') return charge;
  return {
    ...charge,
    declineCode: e.decline_code || charge.declineCode || e.code || null,
    message: e.message ?? charge.message,
    amount: e.payment_intent.amount ?? input.amount,
  };
}

async function call<T>(work: () => Promise<T>): Promise<T> {
  try {
    return await work();
  } catch (error) {
    mapError(error);
  }
}

/** `parent`: the platform's processor a connected account's one was made from (its `forAccount`). */
export function createStripeProcessor(
  options: StripeProcessorOptions,
  parent?: PaymentProcessor,
): PaymentProcessor {
  const base = options.apiBase ? new URL(options.apiBase) : undefined;
  const stripe = new Stripe(options.secretKey, {
    ...(base
      ? {
          host: base.hostname,
          port: base.port ? Number(base.port) : base.protocol === 'https:' ? 443 : 80,
          protocol: base.protocol.replace(':', '') as 'http' | 'https',
        }
      : {}),
    timeout: options.timeoutMs ?? 20_000,
    maxNetworkRetries: options.maxNetworkRetries ?? 2,
    ...(options.stripeAccount ? { stripeAccount: options.stripeAccount } : {}),
    telemetry: false,
    appInfo: { name: 'voiceplane' },
  });

  // One client per connected account, each sending its `Stripe-Account` header on every request.
  const accounts = new Map<string, PaymentProcessor>();
  const processor: PaymentProcessor = {
    name: 'stripe',
    forAccount(accountId) {
      if (parent) return parent.forAccount(accountId);
      if (!accountId) return processor;
      let bound = accounts.get(accountId);
      if (!bound) {
        bound = createStripeProcessor({ ...options, stripeAccount: accountId }, processor);
        accounts.set(accountId, bound);
      }
      return bound;
    },
    async createCustomer(input, key) {
      const customer = await call(() =>
        stripe.customers.create(
          { email: input.email, ...(input.name ? { name: input.name } : {}), metadata: input.metadata },
          { idempotencyKey: key },
        ),
      );
      return { id: customer.id };
    },
    async attachPaymentMethod(input, key): Promise<Card> {
      const pm = await call(() =>
        stripe.paymentMethods.attach(
          input.token,
          { customer: input.customerId },
          { idempotencyKey: `${key}_attach` },
        ),
      );
      await call(() =>
        stripe.customers.update(
          input.customerId,
          { invoice_settings: { default_payment_method: pm.id } },
          { idempotencyKey: `${key}_default` },
        ),
      );
      return { id: pm.id, brand: pm.card?.brand ?? 'unknown', last4: pm.card?.last4 ?? '' };
    },
    async detachPaymentMethod(paymentMethodId, key) {
      await call(() => stripe.paymentMethods.detach(paymentMethodId, {}, { idempotencyKey: key }));
    },
    async createPrice(input, key) {
      const price = await call(() =>
        stripe.prices.create(
          {
            currency: input.currency,
            unit_amount: input.unitAmount,
            recurring: { interval: 'month' },
            product_data: { name: input.productName },
            metadata: input.metadata,
          },
          { idempotencyKey: key },
        ),
      );
      return { id: price.id };
    },
    async createSubscription(input, key) {
      const sub = await call(() =>
        stripe.subscriptions.create(
          {
            customer: input.customerId,
            items: [{ price: input.priceId }],
            ...(input.trialPeriodDays > 0 ? { trial_period_days: input.trialPeriodDays } : {}),
            // A declined first charge leaves the subscription incomplete instead of failing the call.
            payment_behavior: 'allow_incomplete',
            metadata: input.metadata,
            ...(input.applicationFeePercent ? { application_fee_percent: input.applicationFeePercent } : {}),
          },
          { idempotencyKey: key },
        ),
      );
      return toProcessorSubscription(sub);
    },
    async changePrice(input, key) {
      const sub = await call(() =>
        stripe.subscriptions.update(
          input.subscriptionId,
          {
            items: [{ id: input.itemId, price: input.priceId }],
            proration_behavior: input.invoiceNow ? 'always_invoice' : 'create_prorations',
            payment_behavior: 'allow_incomplete',
          },
          { idempotencyKey: key },
        ),
      );
      return toProcessorSubscription(sub);
    },
    async cancelSubscription(subscriptionId, key) {
      const sub = await call(() => stripe.subscriptions.cancel(subscriptionId, {}, { idempotencyKey: key }));
      return toProcessorSubscription(sub);
    },
    async cancelAtPeriodEnd(subscriptionId, key) {
      const sub = await call(() =>
        stripe.subscriptions.update(subscriptionId, { cancel_at_period_end: true }, { idempotencyKey: key }),
      );
      return toProcessorSubscription(sub);
    },
    async retrieveSubscription(subscriptionId) {
      return toProcessorSubscription(await call(() => stripe.subscriptions.retrieve(subscriptionId)));
    },
    async findSubscriptionByOperation(customerId, operationId) {
      const list = await call(() =>
        stripe.subscriptions.list({ customer: customerId, status: 'all', limit: 100 }),
      );
      const found = list.data.find((sub) => sub.metadata?.vp_operation === operationId);
      return found ? toProcessorSubscription(found) : undefined;
    },
    async chargeCustomer(input, key) {
      try {
        const intent = await stripe.paymentIntents.create(
          {
            amount: input.amount,
            currency: input.currency,
            customer: input.customerId,
            payment_method: input.paymentMethodId,
            confirm: true,
            off_session: true,
            description: input.description,
            metadata: input.metadata,
            ...(input.applicationFeeAmount ? { application_fee_amount: input.applicationFeeAmount } : {}),
          },
          { idempotencyKey: key },
        );
        return chargeOfPaymentIntent(intent);
      } catch (error) {
        const declined = declinedCharge(error, input);
        if (declined) return declined;
        mapError(error);
      }
    },
    async findCharge(query) {
      const list = await call(() =>
        stripe.paymentIntents.list({
          customer: query.customerId,
          created: { gte: Math.floor(query.createdSince.getTime() / 1000) },
          limit: 100,
        }),
      );
      const found = list.data.find((intent) => intent.metadata?.[query.metadataKey] === query.metadataValue);
      return found ? chargeOfPaymentIntent(found) : undefined;
    },
    async createInvoiceItem(input, key) {
      const item = await call(() =>
        stripe.invoiceItems.create(
          {
            customer: input.customerId,
            ...(input.subscriptionId ? { subscription: input.subscriptionId } : {}),
            amount: input.amount,
            currency: input.currency,
            description: input.description,
            period: {
              start: Math.floor(input.period.start.getTime() / 1000),
              end: Math.floor(input.period.end.getTime() / 1000),
            },
            metadata: input.metadata,
          },
          { idempotencyKey: key },
        ),
      );
      return toInvoiceItem(item);
    },
    async findInvoiceItem(query) {
      const list = await call(() =>
        stripe.invoiceItems.list({
          customer: query.customerId,
          created: { gte: Math.floor(query.createdSince.getTime() / 1000) },
          limit: 100,
        }),
      );
      const found = list.data.find((item) => item.metadata?.[query.metadataKey] === query.metadataValue);
      return found ? toInvoiceItem(found) : undefined;
    },
    async createInvoice(input, key) {
      const invoice = await call(() =>
        stripe.invoices.create(
          {
            customer: input.customerId,
            pending_invoice_items_behavior: 'include',
            collection_method: 'charge_automatically',
            // We finalize and pay it ourselves; Stripe would otherwise finalize it an hour later.
            auto_advance: false,
            description: input.description,
            metadata: input.metadata,
            ...(input.applicationFeeAmount ? { application_fee_amount: input.applicationFeeAmount } : {}),
          },
          { idempotencyKey: key },
        ),
      );
      return toProcessorInvoice(invoice);
    },
    async findInvoice(query) {
      const list = await call(() =>
        stripe.invoices.list({
          customer: query.customerId,
          created: { gte: Math.floor(query.createdSince.getTime() / 1000) },
          limit: 100,
        }),
      );
      const found = list.data.find(
        (invoice) => invoice.metadata?.[query.metadataKey] === query.metadataValue,
      );
      return found ? toProcessorInvoice(found) : undefined;
    },
    async retrieveInvoice(invoiceId) {
      return toProcessorInvoice(await call(() => stripe.invoices.retrieve(invoiceId)));
    },
    async finalizeInvoice(invoiceId, key) {
      const invoice = await call(() =>
        stripe.invoices.finalizeInvoice(invoiceId, { auto_advance: false }, { idempotencyKey: key }),
      );
      return toProcessorInvoice(invoice);
    },
    async payInvoice(invoiceId, key): Promise<InvoicePayment> {
      try {
        const invoice = await stripe.invoices.pay(invoiceId, {}, { idempotencyKey: key });
        return { status: 'paid', invoice: toProcessorInvoice(invoice) };
      } catch (error) {
        // Stripe's 402 card_error: the payment was declined and the invoice left open.
        const e = error as { type?: string; message?: string; decline_code?: string; code?: string };
        if (e?.type !== 'StripeCardError') mapError(error);
        const invoice = toProcessorInvoice(await call(() => stripe.invoices.retrieve(invoiceId)));
        return {
          status: 'declined',
          invoice,
          declineCode: e.decline_code || e.code || null,
          message: e.message ?? 'The card was not charged.',
        };
      }
    },
  };
  return processor;
}
