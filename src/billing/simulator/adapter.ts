/**
 * The `simulated` processor adapter (PROCESSOR=simulated, the default): the in-process engine of
 * ./engine.ts (and ./charges.ts for one-off charges), with its objects in the
 * database so subscriptions survive a restart, Stripe's idempotency-key replay, and call counters
 * tests read.
 */
import crypto from 'node:crypto';
import type { Clock } from '../../core/clock.js';
import type { Db } from '../../core/db/database.js';
import {
  type Card,
  chargeOfPaymentIntent,
  type InvoiceItem,
  type PaymentProcessor,
  ProcessorRequestError,
  type ProcessorSubscription,
  ProcessorUnavailableError,
} from '../processor.js';
import { accountStore } from './accounts.js';
import { invoiceMethods } from './adapter-invoices.js';
import type { CallCounts } from './call-counts.js';
import { CardDeclinedError, createPaymentIntents } from './charges.js';
import { databaseStore } from './database-store.js';
import { ProcessorEngine } from './engine.js';
import { createInvoiceItems, type InvoiceItem as SimulatedInvoiceItem } from './invoice-items.js';
import { type EngineStore, type IdempotencyRecord, memoryStore, type Subscription } from './objects.js';
import { EngineError } from './params.js';

/** Executed (not replayed) calls per operation; tests assert exactly-once effects with them. */
export type { CallCounts } from './call-counts.js';

export interface SimulatedProcessor extends PaymentProcessor {
  readonly calls: CallCounts;
  readonly engine: ProcessorEngine;
}

export function toInvoiceItem(item: SimulatedInvoiceItem): InvoiceItem {
  const { id, amount, currency, metadata } = item;
  const subscriptionId = item.parent?.subscription_details.subscription ?? null;
  return { id, amount, currency, invoiceId: item.invoice, subscriptionId, metadata };
}

export function toProcessorSubscription(sub: Subscription): ProcessorSubscription {
  const item = sub.items.data[0];
  return {
    id: sub.id,
    itemId: item.id,
    priceId: item.price.id,
    status: sub.status,
    currentPeriodStart: new Date(item.current_period_start * 1000),
    currentPeriodEnd: new Date(item.current_period_end * 1000),
    cancelAtPeriodEnd: Boolean(sub.cancel_at_period_end),
    trialEnd: sub.trial_end ? new Date(sub.trial_end * 1000) : null,
    metadata: sub.metadata ?? {},
  };
}

function mapError(error: unknown): never {
  if (error instanceof EngineError) {
    if (error.status >= 500) throw new ProcessorUnavailableError(error.message, { cause: error });
    throw new ProcessorRequestError(error.code ?? error.type, error.message, error.status);
  }
  throw error;
}

export function createSimulatedProcessor(options: {
  db?: Db;
  clock: Clock;
  store?: EngineStore;
  /** A connected account's processor (made by the platform's `forAccount`): its objects only. */
  account?: { id: string; platform: SimulatedProcessor };
}): SimulatedProcessor {
  const shared = options.store ?? (options.db ? databaseStore(options.db, options.clock) : memoryStore());
  const store = accountStore(shared, () => options.account?.id ?? null);
  const engine = new ProcessorEngine({ store, now: () => options.clock.now() });
  const calls: CallCounts = options.account?.platform.calls ?? {
    createCustomer: 0,
    attachPaymentMethod: 0,
    detachPaymentMethod: 0,
    createPrice: 0,
    createSubscription: 0,
    changePrice: 0,
    cancelSubscription: 0,
    cancelAtPeriodEnd: 0,
    retrieveSubscription: 0,
    findSubscriptionByOperation: 0,
    chargeCustomer: 0,
    findCharge: 0,
    createInvoiceItem: 0,
    findInvoiceItem: 0,
    createInvoice: 0,
    findInvoice: 0,
    retrieveInvoice: 0,
    finalizeInvoice: 0,
    payInvoice: 0,
    replayed: 0,
  };
  const paymentIntents = createPaymentIntents(store, () => options.clock.now());
  const invoiceItems = createInvoiceItems(store, () => options.clock.now());
  /** An application fee parameter: refused without a connected account, as Stripe refuses it. */
  function applicationFee(param: string, value: number | null | undefined): Record<string, number> {
    if (!value) return {};
    if (!options.account) {
      throw new ProcessorRequestError(
        'parameter_invalid',
        `Can only apply an ${param} when the request is made on behalf of another account (using the Stripe-Account header).`,
      );
    }
    return { [param]: value };
  }
  // Concurrent calls with one key: the second waits for the first's answer, as Stripe's 409 + retry would.
  const inFlight = new Map<string, Promise<unknown>>();

  /** Runs `work` once per key; repeats with the same key and request replay the stored answer. */
  async function once<T>(
    operation: keyof CallCounts,
    key: string,
    request: unknown,
    work: () => Promise<T>,
  ): Promise<T> {
    // Keys are per account, as Stripe's are (the platform's records keep their ids).
    const scopedKey = options.account ? `${options.account.id}\n${key}` : key;
    const recordId = `idem_${crypto.createHash('sha256').update(scopedKey).digest('hex').slice(0, 40)}`;
    const fingerprint = crypto
      .createHash('sha256')
      .update(`${operation}\n${JSON.stringify(request)}`)
      .digest('hex');
    for (;;) {
      const running = inFlight.get(recordId);
      if (!running) break;
      await running.catch(() => {});
    }
    // From here to inFlight.set nothing awaits, so one call per key runs at a time.
    const run = (async () => {
      const found = await store.get(recordId);
      const stored = found?.object === 'idempotency_record' ? found : undefined;
      if (stored) {
        if (stored.fingerprint !== fingerprint) {
          // As the stripe adapter maps Stripe's idempotency_error: the first attempt may have acted.
          throw new ProcessorUnavailableError(
            'Keys for idempotent requests can only be used with the same parameters they were first used with.',
          );
        }
        calls.replayed++;
        if (stored.error)
          throw new EngineError(
            stored.error.status,
            stored.error.type,
            stored.error.code,
            stored.error.message,
          );
        return stored.result as T;
      }
      calls[operation]++;
      try {
        const result = await work();
        const record: IdempotencyRecord = { id: recordId, object: 'idempotency_record', fingerprint, result };
        await store.put(record, null);
        return result;
      } catch (error) {
        if (error instanceof EngineError) {
          const saved = { status: error.status, type: error.type, code: error.code, message: error.message };
          const record: IdempotencyRecord = {
            id: recordId,
            object: 'idempotency_record',
            fingerprint,
            error: saved,
          };
          await store.put(record, null);
        }
        throw error;
      }
    })();
    inFlight.set(recordId, run);
    try {
      return await run.catch(mapError);
    } finally {
      if (inFlight.get(recordId) === run) inFlight.delete(recordId);
    }
  }

  const accounts = new Map<string, SimulatedProcessor>();
  const processor: SimulatedProcessor = {
    name: 'simulated',
    forAccount(accountId) {
      if (options.account) return options.account.platform.forAccount(accountId);
      if (!accountId) return processor;
      let bound = accounts.get(accountId);
      if (!bound) {
        bound = createSimulatedProcessor({
          ...options,
          store: shared,
          account: { id: accountId, platform: processor },
        });
        accounts.set(accountId, bound);
      }
      return bound;
    },
    calls,
    engine,
    async createCustomer(input, key) {
      const params = { email: input.email, name: input.name, metadata: input.metadata };
      const customer = await once('createCustomer', key, params, () => engine.createCustomer(params));
      return { id: customer.id };
    },
    async attachPaymentMethod(input, key): Promise<Card> {
      return once('attachPaymentMethod', key, input, async () => {
        const pm = await engine.attachPaymentMethod(input.token, { customer: input.customerId });
        await engine.updateCustomer(input.customerId, {
          invoice_settings: { default_payment_method: pm.id },
        });
        return { id: pm.id, brand: pm.card.brand, last4: pm.card.last4 };
      });
    },
    async detachPaymentMethod(paymentMethodId, key) {
      await once('detachPaymentMethod', key, { paymentMethodId }, async () => {
        await engine.detachPaymentMethod(paymentMethodId);
        return null;
      });
    },
    async createPrice(input, key) {
      const params = {
        currency: input.currency,
        unit_amount: input.unitAmount,
        recurring: { interval: 'month' },
        product_data: { name: input.productName },
        metadata: input.metadata,
      };
      const price = await once('createPrice', key, params, () => engine.createPrice(params));
      return { id: price.id };
    },
    async createSubscription(input, key) {
      const params = {
        customer: input.customerId,
        items: [{ price: input.priceId }],
        trial_period_days: input.trialPeriodDays > 0 ? input.trialPeriodDays : undefined,
        payment_behavior: 'allow_incomplete',
        metadata: input.metadata,
        ...applicationFee('application_fee_percent', input.applicationFeePercent),
      };
      const sub = await once('createSubscription', key, params, () => engine.createSubscription(params));
      return toProcessorSubscription(sub);
    },
    async changePrice(input, key) {
      const params = {
        items: [{ id: input.itemId, price: input.priceId }],
        proration_behavior: input.invoiceNow ? 'always_invoice' : 'create_prorations',
        payment_behavior: 'allow_incomplete',
      };
      const sub = await once('changePrice', key, { id: input.subscriptionId, ...params }, () =>
        engine.updateSubscription(input.subscriptionId, params),
      );
      return toProcessorSubscription(sub);
    },
    async cancelSubscription(subscriptionId, key) {
      const sub = await once('cancelSubscription', key, { subscriptionId }, () =>
        engine.cancelSubscription(subscriptionId),
      );
      return toProcessorSubscription(sub);
    },
    async cancelAtPeriodEnd(subscriptionId, key) {
      const params = { cancel_at_period_end: true };
      const sub = await once('cancelAtPeriodEnd', key, { id: subscriptionId, ...params }, () =>
        engine.updateSubscription(subscriptionId, params),
      );
      return toProcessorSubscription(sub);
    },
    async retrieveSubscription(subscriptionId) {
      calls.retrieveSubscription++;
      try {
        return toProcessorSubscription(await engine.retrieveSubscription(subscriptionId));
      } catch (error) {
        mapError(error);
      }
    },
    async findSubscriptionByOperation(customerId, operationId) {
      calls.findSubscriptionByOperation++;
      try {
        const list = await engine.listSubscriptions({ customer: customerId, status: 'all' });
        const found = list.data.find((sub) => sub.metadata?.vp_operation === operationId);
        return found ? toProcessorSubscription(found) : undefined;
      } catch (error) {
        mapError(error);
      }
    },
    async chargeCustomer(input, key) {
      const params = {
        amount: input.amount,
        currency: input.currency,
        customer: input.customerId,
        payment_method: input.paymentMethodId,
        confirm: true,
        off_session: true,
        description: input.description,
        metadata: input.metadata,
        ...applicationFee('application_fee_amount', input.applicationFeeAmount),
      };
      // A decline is stored as the key's answer like a success: a retry replays it, never charges.
      const intent = await once('chargeCustomer', key, params, () =>
        paymentIntents.create(params).catch((error) => {
          if (error instanceof CardDeclinedError) return error.paymentIntent;
          throw error;
        }),
      );
      return chargeOfPaymentIntent(intent);
    },
    async findCharge(query) {
      calls.findCharge++;
      try {
        const list = await paymentIntents.list({
          customer: query.customerId,
          created: { gte: Math.floor(query.createdSince.getTime() / 1000) },
          limit: 100,
        });
        const found = list.data.find((intent) => intent.metadata[query.metadataKey] === query.metadataValue);
        return found ? chargeOfPaymentIntent(found) : undefined;
      } catch (error) {
        mapError(error);
      }
    },
    async createInvoiceItem(input, key) {
      const params = {
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
      };
      const item = await once('createInvoiceItem', key, params, () => invoiceItems.create(params));
      return toInvoiceItem(item);
    },
    async findInvoiceItem(query) {
      calls.findInvoiceItem++;
      try {
        const list = await invoiceItems.list({
          customer: query.customerId,
          created: { gte: Math.floor(query.createdSince.getTime() / 1000) },
          limit: 100,
        });
        const found = list.data.find((item) => item.metadata[query.metadataKey] === query.metadataValue);
        return found ? toInvoiceItem(found) : undefined;
      } catch (error) {
        mapError(error);
      }
    },
    ...invoiceMethods({ engine, calls, once, applicationFee, mapError }),
  };
  return processor;
}
