/**
 * The simulated adapter's one-off invoices (src/billing/simulator/invoices.ts): made with the
 * customer's pending items, finalized and paid through the adapter's idempotency-key replay.
 */

import type { InvoicePayment, PaymentProcessor, ProcessorInvoice } from '../processor.js';
import type { CallCounts } from './call-counts.js';
import type { ProcessorEngine } from './engine.js';
import { InvoiceDeclinedError } from './invoices.js';
import type { Invoice } from './objects.js';

export function toProcessorInvoice(invoice: Invoice): ProcessorInvoice {
  const { id, status, currency, metadata } = invoice;
  return { id, status, amountDue: invoice.amount_due, amountPaid: invoice.amount_paid, currency, metadata };
}

type InvoiceMethods = Pick<
  PaymentProcessor,
  'createInvoice' | 'findInvoice' | 'retrieveInvoice' | 'finalizeInvoice' | 'payInvoice'
>;

export function invoiceMethods(deps: {
  engine: ProcessorEngine;
  calls: CallCounts;
  /** The adapter's run-once-per-key. */
  once<T>(operation: keyof CallCounts, key: string, request: unknown, work: () => Promise<T>): Promise<T>;
  applicationFee(param: string, value: number | null | undefined): Record<string, number>;
  /** Engine errors → the port's. */
  mapError(error: unknown): never;
}): InvoiceMethods {
  const { engine, calls, once, applicationFee, mapError } = deps;
  return {
    async createInvoice(input, key) {
      const params = {
        customer: input.customerId,
        pending_invoice_items_behavior: 'include',
        collection_method: 'charge_automatically',
        auto_advance: false,
        description: input.description,
        metadata: input.metadata,
        ...applicationFee('application_fee_amount', input.applicationFeeAmount),
      };
      const invoice = await once('createInvoice', key, params, () => engine.invoices.create(params));
      return toProcessorInvoice(invoice);
    },
    async findInvoice(query) {
      calls.findInvoice++;
      try {
        const list = await engine.invoices.list({
          customer: query.customerId,
          created: { gte: Math.floor(query.createdSince.getTime() / 1000) },
          limit: 100,
        });
        const found = list.data.find(
          (invoice) => invoice.metadata[query.metadataKey] === query.metadataValue,
        );
        return found ? toProcessorInvoice(found) : undefined;
      } catch (error) {
        return mapError(error);
      }
    },
    async retrieveInvoice(invoiceId) {
      calls.retrieveInvoice++;
      try {
        return toProcessorInvoice(await engine.invoices.retrieve(invoiceId));
      } catch (error) {
        return mapError(error);
      }
    },
    async finalizeInvoice(invoiceId, key) {
      const params = { auto_advance: false };
      const invoice = await once('finalizeInvoice', key, { invoiceId, ...params }, () =>
        engine.invoices.finalize(invoiceId, params),
      );
      return toProcessorInvoice(invoice);
    },
    async payInvoice(invoiceId, key): Promise<InvoicePayment> {
      // A decline is stored as the key's answer like a success: a retry replays it, never charges.
      return once('payInvoice', key, { invoiceId }, async (): Promise<InvoicePayment> => {
        try {
          return { status: 'paid', invoice: toProcessorInvoice(await engine.invoices.pay(invoiceId, {})) };
        } catch (error) {
          if (!(error instanceof InvoiceDeclinedError)) throw error;
          const invoice = toProcessorInvoice(error.invoice);
          return { status: 'declined', invoice, declineCode: 'generic_decline', message: error.message };
        }
      });
    },
  };
}
