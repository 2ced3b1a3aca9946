/**
 * The simulator's billing cycle: invoices charged to the default card, and a subscription brought up
 * to the current time (incomplete expiry, trial end, renewals, cancellation at period end). The
 * engine runs it at the start of every call that touches a subscription, so time passing on the
 * injected clock behaves as it would at Stripe.
 */
import crypto from 'node:crypto';
import { addMonths } from '../periods.js';
import type {
  Customer,
  EngineObject,
  EngineStore,
  Invoice,
  Subscription,
  SubscriptionStatus,
} from './objects.js';
import { pendingItemsFor } from './pending-invoice-items.js';

/** What the cycle needs from the engine. */
export interface Ledger {
  store: EngineStore;
  /** The clock, in Unix seconds. */
  nowS(): number;
  save(doc: EngineObject, tenantId?: string | null): Promise<void>;
  customer(id: string): Promise<Customer>;
}

// Stripe lets an incomplete subscription's first invoice be paid for 23 hours.
const INCOMPLETE_WINDOW_S = 23 * 60 * 60;
const LIVE_STATUSES: ReadonlySet<SubscriptionStatus> = new Set(['trialing', 'active', 'past_due', 'unpaid']);

export function objectId(prefix: string): string {
  return `${prefix}_${crypto.randomBytes(12).toString('base64url').replace(/[-_]/g, 'x')}`;
}

export const toSeconds = (d: Date) => Math.floor(d.getTime() / 1000);
export const fromSeconds = (s: number) => new Date(s * 1000);

export const invoiceIndexId = (customerId: string) => `cusin_${customerId}`;

/** Adds a new invoice to its customer's list (in the engine's serial order, so none is lost). */
export async function indexInvoice(ledger: Ledger, invoice: Invoice, tenantId: string | null): Promise<void> {
  const id = invoiceIndexId(invoice.customer);
  const found = await ledger.store.get(id);
  const ids = found?.object === 'customer_invoices' ? found.ids : [];
  await ledger.save({ id, object: 'customer_invoices', ids: [...ids, invoice.id], metadata: {} }, tenantId);
}

/** Finalizes an invoice and charges the default card; credit (negative totals) goes to the customer balance. */
export async function chargeInvoice(
  ledger: Ledger,
  sub: Subscription,
  customer: Customer,
  amount: number,
  reason: Invoice['billing_reason'],
): Promise<Invoice> {
  let due = amount + (customer.balance ?? 0);
  let balance = 0;
  if (due < 0) {
    balance = due;
    due = 0;
  }
  let paid = due === 0;
  if (!paid) {
    const pmId = sub.default_payment_method ?? customer.invoice_settings.default_payment_method;
    const pm = pmId ? await ledger.store.get(pmId) : undefined;
    paid = pm?.object === 'payment_method' && pm.customer === customer.id && pm._behavior === 'succeed';
  }
  if (paid || due === 0) {
    customer.balance = balance;
    await ledger.save(customer);
  }
  const invoice: Invoice = {
    id: objectId('in'),
    object: 'invoice',
    customer: customer.id,
    currency: sub.currency,
    total: amount,
    amount_due: due,
    amount_paid: paid ? due : 0,
    amount_remaining: paid ? 0 : due,
    application_fee_amount: null,
    attempt_count: due > 0 ? 1 : 0,
    attempted: due > 0,
    auto_advance: !paid,
    billing_reason: reason,
    collection_method: 'charge_automatically',
    status: paid ? 'paid' : 'open',
    created: ledger.nowS(),
    description: null,
    livemode: false,
    parent: { type: 'subscription_details', subscription_details: { subscription: sub.id } },
    metadata: {},
  };
  await ledger.save(invoice, customer.metadata.tenant_id ?? null);
  await indexInvoice(ledger, invoice, customer.metadata.tenant_id ?? null);
  sub.latest_invoice = invoice.id;
  return invoice;
}

/** Brings a subscription up to now: incomplete expiry, trial end, renewals, end of period cancellation. */
export async function bringUpToDate(ledger: Ledger, sub: Subscription): Promise<Subscription> {
  const now = ledger.nowS();
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
    // The renewal invoice takes the items still pending (an item a one-off invoice took is not).
    const items = await pendingItemsFor(ledger.store, sub);
    const itemsAmount = items.reduce((total, pending) => total + pending.amount, 0);
    const amount = item.price.unit_amount + sub._pending_proration + itemsAmount;
    sub._pending_proration = 0;
    const customer = await ledger.customer(sub.customer);
    const invoice = await chargeInvoice(ledger, sub, customer, amount, 'subscription_cycle');
    for (const pending of items) await ledger.save({ ...pending, invoice: invoice.id });
    sub.status = invoice.status === 'paid' ? 'active' : 'past_due';
  }
  if (changed) await ledger.save(sub);
  return sub;
}
