/**
 * Invoice items as a customer's next subscription invoice takes them: the pending items of the
 * customer (for that subscription or for none) in the invoice's currency, added to its amount and
 * then marked with the invoice, as Stripe's renewal does. Created by src/billing/simulator/invoice-items.ts.
 */
import type { EngineStore, InvoiceItem } from './objects.js';

export const invoiceItemIndexId = (customerId: string) => `cusii_${customerId}`;

/** Every invoice item of the customer, newest first. */
export async function invoiceItemsOf(store: EngineStore, customerId: string): Promise<InvoiceItem[]> {
  const found = await store.get(invoiceItemIndexId(customerId));
  const ids = found?.object === 'customer_invoice_items' ? [...found.ids].reverse() : [];
  const items: InvoiceItem[] = [];
  for (const id of ids) {
    const item = await store.get(id);
    if (item?.object === 'invoiceitem') items.push(item);
  }
  return items;
}

/** The pending items the subscription's next invoice takes. */
export async function pendingItemsFor(
  store: EngineStore,
  sub: { id: string; customer: string; currency: string },
): Promise<InvoiceItem[]> {
  return (await invoiceItemsOf(store, sub.customer)).filter(
    (item) =>
      item.invoice === null &&
      item.currency === sub.currency &&
      (item.parent === null || item.parent.subscription_details.subscription === sub.id),
  );
}
