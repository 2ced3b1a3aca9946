/**
 * Invoice items in the simulator, shaped as Stripe's (`POST /v1/invoiceitems`): an amount added to a
 * customer's next invoice, taken by the subscription's renewal (billing/simulator/billing-cycle.ts).
 * The simulated adapter and the Stripe-protocol test server both use them. Every parameter Stripe
 * accepts is accepted by name; the ones the simulator does not model (prices, discounts, taxes,
 * customer accounts, a given invoice) are refused with a message saying so, and an unknown one is
 * Stripe's `parameter_unknown`.
 */
import { objectId, toSeconds } from './billing-cycle.js';
import type { EngineStore, InvoiceItem } from './objects.js';
import {
  EngineError,
  integerParam,
  invalid,
  metadataOf,
  missing,
  objectParam,
  type StripeList,
  type StripeParams,
  stripeList,
} from './params.js';
import { invoiceItemIndexId, invoiceItemsOf } from './pending-invoice-items.js';

export type { InvoiceItem } from './objects.js';

const MAX_AMOUNT = 99_999_999;
const MODELLED = new Set([
  'amount',
  'currency',
  'customer',
  'description',
  'discountable',
  'expand',
  'metadata',
  'period',
  'quantity',
  'subscription',
  'unit_amount_decimal',
]);
const NOT_MODELLED = new Set([
  'customer_account',
  'discounts',
  'invoice',
  'price_data',
  'pricing',
  'quantity_decimal',
  'tax_behavior',
  'tax_code',
  'tax_rates',
]);

export type InvoiceItemList = StripeList<InvoiceItem, '/v1/invoiceitems'>;

/** An integer that may be negative (a credit), as Stripe's `amount` of an invoice item. */
function signedAmount(value: unknown): number {
  const n = typeof value === 'number' ? value : Number(value);
  if (value === '' || !Number.isInteger(n)) {
    throw new EngineError(
      400,
      'invalid_request_error',
      'parameter_invalid_integer',
      `Invalid integer: ${String(value)}`,
      'amount',
    );
  }
  if (Math.abs(n) > MAX_AMOUNT) {
    throw new EngineError(
      400,
      'invalid_request_error',
      'amount_too_large',
      `Amount must be no more than ${MAX_AMOUNT}.`,
      'amount',
    );
  }
  return n;
}

function booleanParam(value: unknown, param: string, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (value === true || value === 'true') return true;
  if (value === false || value === 'false') return false;
  throw invalid(`Invalid boolean: ${String(value)}`, param);
}

function checkParams(params: StripeParams) {
  for (const name of Object.keys(params)) {
    if (NOT_MODELLED.has(name)) throw invalid(`The simulator does not model invoice items' ${name}.`, name);
    if (!MODELLED.has(name)) {
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

/** amount, or unit_amount_decimal × quantity (Stripe rounds the product to an integer). */
function amountOf(params: StripeParams): { amount: number; quantity: number; unitDecimal: string | null } {
  const hasAmount = params.amount !== undefined;
  const hasUnit = params.unit_amount_decimal !== undefined;
  if (hasAmount && hasUnit) {
    throw invalid('You may only specify one of these parameters: amount, unit_amount_decimal.', 'amount');
  }
  if (!hasAmount && !hasUnit) {
    throw invalid('You must specify either `amount`, `price_data`, `pricing`, or `unit_amount_decimal`.');
  }
  const quantity = integerParam(params.quantity, 'quantity', 1);
  if (hasAmount) {
    if (params.quantity !== undefined && quantity !== 1) {
      throw invalid('You cannot specify a quantity with `amount`: use `unit_amount_decimal`.', 'quantity');
    }
    return { amount: signedAmount(params.amount), quantity: 1, unitDecimal: null };
  }
  const unit = Number(params.unit_amount_decimal);
  if (!/^-?\d+(\.\d{1,12})?$/.test(String(params.unit_amount_decimal)) || !Number.isFinite(unit)) {
    throw invalid(`Invalid decimal: ${String(params.unit_amount_decimal)}`, 'unit_amount_decimal');
  }
  return {
    amount: signedAmount(Math.round(unit * quantity)),
    quantity,
    unitDecimal: String(params.unit_amount_decimal),
  };
}

export function createInvoiceItems(engineStore: EngineStore, now: () => Date) {
  const store = engineStore;
  let queue: Promise<unknown> = Promise.resolve();
  // One creation at a time, so two items of one customer never lose each other's index entry.
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work);
    queue = run.catch(() => {});
    return run;
  };

  return {
    /** POST /v1/invoiceitems. */
    create(params: StripeParams): Promise<InvoiceItem> {
      return serial(async () => {
        checkParams(params);
        if (params.customer === undefined || params.customer === '') {
          throw new EngineError(
            400,
            'invalid_request_error',
            'parameter_missing',
            'Missing required param: customer.',
            'customer',
          );
        }
        const customer = await store.get(String(params.customer));
        if (customer?.object !== 'customer') throw missing('customer', String(params.customer), 'customer');
        const { amount, quantity, unitDecimal } = amountOf(params);
        const currency = params.currency;
        if (currency === undefined) {
          throw new EngineError(
            400,
            'invalid_request_error',
            'parameter_missing',
            'Missing required param: currency.',
            'currency',
          );
        }
        if (typeof currency !== 'string' || !/^[a-z]{3}$/.test(currency)) {
          throw invalid('Invalid currency.', 'currency');
        }
        let parent: InvoiceItem['parent'] = null;
        if (params.subscription !== undefined) {
          const sub = await store.get(String(params.subscription));
          if (sub?.object !== 'subscription') {
            throw missing('subscription', String(params.subscription), 'subscription');
          }
          if (sub.customer !== customer.id) {
            throw invalid(
              `The subscription ${sub.id} does not belong to the customer ${customer.id}.`,
              'subscription',
            );
          }
          parent = { type: 'subscription_details', subscription_details: { subscription: sub.id } };
        }
        const created = toSeconds(now());
        const period = objectParam(params.period);
        const start = period ? integerParam(period.start, 'period[start]') : created;
        const end = period ? integerParam(period.end, 'period[end]') : created;
        if (end < start) throw invalid('The period end must be on or after its start.', 'period[end]');
        const description = params.description;
        if (description !== undefined && typeof description !== 'string') {
          throw invalid('Invalid string.', 'description');
        }
        const item: InvoiceItem = {
          id: objectId('ii'),
          object: 'invoiceitem',
          amount,
          currency,
          customer: customer.id,
          date: created,
          description: description ?? null,
          // Stripe: false for negative items, true otherwise, unless given.
          discountable: booleanParam(params.discountable, 'discountable', amount >= 0),
          discounts: [],
          invoice: null,
          livemode: false,
          metadata: metadataOf(params.metadata),
          parent,
          period: { start, end },
          pricing: unitDecimal ? { type: 'price_details', unit_amount_decimal: unitDecimal } : null,
          proration: false,
          quantity,
          tax_rates: [],
          test_clock: null,
        };
        const tenantId = customer.metadata.tenant_id ?? null;
        await store.put(item, tenantId);
        const index = await store.get(invoiceItemIndexId(customer.id));
        const ids = index?.object === 'customer_invoice_items' ? index.ids : [];
        await store.put(
          {
            id: invoiceItemIndexId(customer.id),
            object: 'customer_invoice_items',
            ids: [...ids, item.id],
            metadata: {},
          },
          tenantId,
        );
        return item;
      });
    },

    /** GET /v1/invoiceitems/{id}. */
    async retrieve(id: string): Promise<InvoiceItem> {
      const found = await store.get(id);
      if (found?.object !== 'invoiceitem') throw missing('invoiceitem', id);
      return found;
    },

    /** GET /v1/invoiceitems: one customer's, newest first; `created[gte]`, `pending`, `limit` honoured. */
    async list(params: StripeParams): Promise<InvoiceItemList> {
      const customerId = params.customer;
      if (typeof customerId !== 'string' || !customerId) {
        throw invalid('The simulator lists the invoice items of one customer: pass customer.', 'customer');
      }
      const since = objectParam(params.created)?.gte;
      const from = since === undefined ? 0 : integerParam(since, 'created[gte]');
      const limit = Math.min(100, integerParam(params.limit, 'limit', 10));
      const pending =
        params.pending === undefined ? undefined : booleanParam(params.pending, 'pending', false);
      const data = (await invoiceItemsOf(store, customerId)).filter(
        (item) => item.date >= from && (pending === undefined || (item.invoice === null) === pending),
      );
      return stripeList(data, limit, '/v1/invoiceitems');
    },
  };
}

export type SimulatedInvoiceItems = ReturnType<typeof createInvoiceItems>;
