/**
 * One-off invoices in the simulator, shaped as Stripe's (`/v1/invoices`): a draft made for a customer
 * that takes the customer's pending invoice items (`pending_invoice_items_behavior=include`: those of
 * no subscription, or of the `subscription` given, in the invoice's currency), finalized (draft →
 * open, the customer's credit balance applied, an amount of zero paid at once) and paid with the
 * default card (`/pay`: paid, or Stripe's 402 card_error that leaves it open, one attempt more).
 * Subscription invoices come from the billing cycle (billing-cycle.ts); both are listed per customer.
 * Parameters Stripe accepts but the simulator does not model are refused with a message saying so;
 * an unknown one is Stripe's `parameter_unknown`.
 */
import { indexInvoice, invoiceIndexId, type Ledger, objectId } from './billing-cycle.js';
import type { Invoice } from './objects.js';
import {
  EngineError,
  integerParam,
  invalid,
  metadataOf,
  missing,
  objectParam,
  type StripeList,
  type StripeParams,
  stringOrNull,
  stripeList,
} from './params.js';
import { invoiceItemsOf } from './pending-invoice-items.js';

const CREATE_MODELLED = [
  'application_fee_amount',
  'auto_advance',
  'collection_method',
  'currency',
  'customer',
  'description',
  'expand',
  'metadata',
  'pending_invoice_items_behavior',
  'subscription',
];
const CREATE_NOT_MODELLED = [
  'account_tax_ids',
  'automatic_tax',
  'automatically_finalizes_at',
  'custom_fields',
  'customer_account',
  'days_until_due',
  'default_payment_method',
  'default_source',
  'default_tax_rates',
  'discounts',
  'due_date',
  'effective_at',
  'footer',
  'from_invoice',
  'issuer',
  'number',
  'on_behalf_of',
  'payment_settings',
  'rendering',
  'shipping_cost',
  'shipping_details',
  'statement_descriptor',
  'transfer_data',
];
const PAY_MODELLED = ['expand', 'off_session'];
const PAY_NOT_MODELLED = ['forgive', 'mandate', 'paid_out_of_band', 'payment_method', 'source'];

/** Stripe's 402 answer to a declined invoice payment; the invoice stays open. */
export class InvoiceDeclinedError extends EngineError {
  constructor(readonly invoice: Invoice) {
    super(402, 'card_error', 'card_declined', 'Your card was declined.');
  }
  override toStripe() {
    return {
      error: {
        type: this.type,
        code: 'card_declined',
        decline_code: 'generic_decline',
        doc_url: 'https://stripe.com/docs/error-codes/card-declined',
        message: this.message,
      },
    };
  }
}

export type InvoiceList = StripeList<Invoice, '/v1/invoices'>;

function checkParams(params: StripeParams, modelled: string[], notModelled: string[]) {
  for (const name of Object.keys(params)) {
    if (notModelled.includes(name)) throw invalid(`The simulator does not model invoices' ${name}.`, name);
    if (!modelled.includes(name)) {
      throw new EngineError(
        400,
        'invalid_request_error',
        'parameter_unknown',
        `Received unknown parameter: ${name}`,
        name,
      );
    }
  }
}

function booleanParam(value: unknown, param: string): boolean | undefined {
  if (value === undefined) return undefined;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw invalid(`Invalid boolean: ${String(value)}`, param);
}

/** The invoice operations, each run in the engine's serial order (`run`). */
export function createInvoices(run: <T>(work: (ledger: Ledger) => Promise<T>) => Promise<T>) {
  async function load(ledger: Ledger, id: string): Promise<Invoice> {
    const found = await ledger.store.get(id);
    if (found?.object !== 'invoice') throw missing('invoice', id);
    return found;
  }

  async function finalize(ledger: Ledger, invoice: Invoice): Promise<Invoice> {
    if (invoice.status !== 'draft') {
      throw new EngineError(
        400,
        'invalid_request_error',
        'invoice_not_editable',
        "This invoice is already finalized, you can't re-finalize a non-draft invoice.",
      );
    }
    const customer = await ledger.customer(invoice.customer);
    const due = invoice.total + (customer.balance ?? 0);
    if (customer.balance) {
      customer.balance = Math.min(0, due);
      await ledger.save(customer);
    }
    invoice.amount_due = Math.max(0, due);
    invoice.amount_remaining = invoice.amount_due;
    invoice.status = invoice.amount_due === 0 ? 'paid' : 'open';
    await ledger.save(invoice, customer.metadata.tenant_id ?? null);
    return invoice;
  }

  return {
    /** POST /v1/invoices: a draft. */
    create(params: StripeParams): Promise<Invoice> {
      return run(async (ledger) => {
        checkParams(params, CREATE_MODELLED, CREATE_NOT_MODELLED);
        if (params.customer === undefined || params.customer === '') {
          throw new EngineError(
            400,
            'invalid_request_error',
            'parameter_missing',
            'Missing required param: customer.',
            'customer',
          );
        }
        const customer = await ledger.store.get(String(params.customer));
        if (customer?.object !== 'customer') throw missing('customer', String(params.customer), 'customer');
        const collection = params.collection_method ?? 'charge_automatically';
        if (collection !== 'charge_automatically') {
          throw invalid(
            'The simulator models collection_method=charge_automatically only.',
            'collection_method',
          );
        }
        const behavior = params.pending_invoice_items_behavior ?? 'exclude';
        if (behavior !== 'include' && behavior !== 'exclude') {
          throw invalid(
            `Invalid pending_invoice_items_behavior: ${String(behavior)}`,
            'pending_invoice_items_behavior',
          );
        }
        const subscription = stringOrNull(params.subscription);
        if (subscription !== null) {
          const sub = await ledger.store.get(subscription);
          if (sub?.object !== 'subscription') throw missing('subscription', subscription, 'subscription');
        }
        const currency = params.currency;
        if (currency !== undefined && (typeof currency !== 'string' || !/^[a-z]{3}$/.test(currency))) {
          throw invalid('Invalid currency.', 'currency');
        }
        const pending = (await invoiceItemsOf(ledger.store, customer.id)).filter(
          (item) =>
            behavior === 'include' &&
            item.invoice === null &&
            (subscription === null
              ? item.parent === null
              : item.parent?.subscription_details.subscription === subscription),
        );
        const invoiceCurrency = (currency as string | undefined) ?? pending.at(-1)?.currency ?? 'usd';
        const lines = pending.filter((item) => item.currency === invoiceCurrency);
        const total = lines.reduce((sum, item) => sum + item.amount, 0);
        const fee = params.application_fee_amount;
        const invoice: Invoice = {
          id: objectId('in'),
          object: 'invoice',
          customer: customer.id,
          currency: invoiceCurrency,
          total,
          amount_due: Math.max(0, total),
          amount_paid: 0,
          amount_remaining: Math.max(0, total),
          application_fee_amount: fee === undefined ? null : integerParam(fee, 'application_fee_amount'),
          attempt_count: 0,
          attempted: false,
          auto_advance: booleanParam(params.auto_advance, 'auto_advance') ?? true,
          billing_reason: 'manual',
          collection_method: 'charge_automatically',
          status: 'draft',
          created: ledger.nowS(),
          description: stringOrNull(params.description),
          livemode: false,
          parent: subscription
            ? { type: 'subscription_details', subscription_details: { subscription } }
            : null,
          metadata: metadataOf(params.metadata),
        };
        const tenantId = customer.metadata.tenant_id ?? null;
        await ledger.save(invoice, tenantId);
        await indexInvoice(ledger, invoice, tenantId);
        for (const item of lines) await ledger.save({ ...item, invoice: invoice.id }, tenantId);
        return invoice;
      });
    },

    /** GET /v1/invoices/{id}. */
    retrieve(id: string): Promise<Invoice> {
      return run((ledger) => load(ledger, id));
    },

    /** GET /v1/invoices: one customer's, newest first; `created[gte]`, `status`, `limit` honoured. */
    list(params: StripeParams): Promise<InvoiceList> {
      return run(async (ledger) => {
        const customerId = params.customer;
        if (typeof customerId !== 'string' || !customerId) {
          throw invalid('The simulator lists the invoices of one customer: pass customer.', 'customer');
        }
        const since = objectParam(params.created)?.gte;
        const from = since === undefined ? 0 : integerParam(since, 'created[gte]');
        const limit = Math.min(100, integerParam(params.limit, 'limit', 10));
        const index = await ledger.store.get(invoiceIndexId(customerId));
        const ids = index?.object === 'customer_invoices' ? [...index.ids].reverse() : [];
        const data: Invoice[] = [];
        for (const id of ids) {
          const invoice = await ledger.store.get(id);
          if (invoice?.object !== 'invoice' || invoice.created < from) continue;
          if (params.status === undefined || invoice.status === params.status) data.push(invoice);
        }
        return stripeList(data, limit, '/v1/invoices');
      });
    },

    /** POST /v1/invoices/{id}/finalize. */
    finalize(id: string, params: StripeParams): Promise<Invoice> {
      return run(async (ledger) => {
        checkParams(params, ['auto_advance', 'expand'], []);
        const invoice = await load(ledger, id);
        const autoAdvance = booleanParam(params.auto_advance, 'auto_advance');
        if (autoAdvance !== undefined) invoice.auto_advance = autoAdvance;
        return finalize(ledger, invoice);
      });
    },

    /** POST /v1/invoices/{id}/pay: a draft is finalized first; a decline throws InvoiceDeclinedError. */
    pay(id: string, params: StripeParams): Promise<Invoice> {
      return run(async (ledger) => {
        checkParams(params, PAY_MODELLED, PAY_NOT_MODELLED);
        booleanParam(params.off_session, 'off_session');
        let invoice = await load(ledger, id);
        if (invoice.status === 'draft') invoice = await finalize(ledger, invoice);
        if (invoice.status === 'paid') {
          throw new EngineError(400, 'invalid_request_error', undefined, 'Invoice is already paid');
        }
        const customer = await ledger.customer(invoice.customer);
        const pmId = customer.invoice_settings.default_payment_method;
        const pm = pmId ? await ledger.store.get(pmId) : undefined;
        if (pm?.object !== 'payment_method' || pm.customer !== customer.id) {
          throw new EngineError(
            400,
            'invalid_request_error',
            undefined,
            'This customer has no attached payment source or default payment method.',
          );
        }
        invoice.attempt_count++;
        invoice.attempted = true;
        const paid = pm._behavior === 'succeed';
        if (paid) {
          invoice.status = 'paid';
          invoice.amount_paid = invoice.amount_due;
          invoice.amount_remaining = 0;
        }
        await ledger.save(invoice, customer.metadata.tenant_id ?? null);
        if (!paid) throw new InvoiceDeclinedError(invoice);
        return invoice;
      });
    },
  };
}

export type SimulatedInvoices = ReturnType<typeof createInvoices>;
