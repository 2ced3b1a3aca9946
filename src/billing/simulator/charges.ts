/**
 * One-off charges in the simulator, shaped as Stripe's PaymentIntents: created and confirmed in one
 * call on a customer's card, listed per customer. The simulated adapter (./adapter.ts) and the
 * Stripe-protocol test server both use them, beside the engine of ./engine.ts whose
 * customers and test cards they charge (`pm_card_visa` succeeds, `pm_card_chargeDeclined` declines).
 * Minimum charge amounts per currency are not modelled; Stripe's maximum (99,999,999) is.
 */
import { objectId, toSeconds } from './billing-cycle.js';
import type { CustomerPaymentIntents, EngineStore, PaymentIntent, StoredObject } from './objects.js';

export type { PaymentIntent, PaymentIntentError } from './objects.js';

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

const MAX_AMOUNT = 99_999_999;
const DECLINE_DOC_URL = 'https://stripe.com/docs/error-codes/card-declined';

export type PaymentIntentList = StripeList<PaymentIntent, '/v1/payment_intents'>;

type ChargeObject = PaymentIntent | CustomerPaymentIntents;

/** Stripe's 402 answer to a declined confirmation: the error names the PaymentIntent it left. */
export class CardDeclinedError extends EngineError {
  constructor(readonly paymentIntent: PaymentIntent) {
    super(402, 'card_error', 'card_declined', paymentIntent.last_payment_error?.message ?? 'Declined.');
  }
  override toStripe() {
    const failure = this.paymentIntent.last_payment_error;
    return {
      error: {
        type: this.type,
        code: 'card_declined',
        decline_code: failure?.decline_code ?? 'generic_decline',
        doc_url: DECLINE_DOC_URL,
        message: this.message,
        charge: this.paymentIntent.latest_charge ?? undefined,
        payment_intent: this.paymentIntent,
        payment_method: failure?.payment_method,
      },
    };
  }
}

export function createPaymentIntents(engineStore: EngineStore, now: () => Date) {
  const store = engineStore;
  // One creation at a time, so two charges of one customer never lose each other's index entry.
  let queue: Promise<unknown> = Promise.resolve();
  const serial = <T>(work: () => Promise<T>): Promise<T> => {
    const run = queue.then(work, work);
    queue = run.catch(() => {});
    return run;
  };

  const indexId = (customerId: string) => `cuspi_${customerId}`;

  async function load<K extends 'customer' | 'payment_method' | 'payment_intent'>(
    id: unknown,
    kind: K,
    param: string,
  ) {
    const doc = typeof id === 'string' && id ? await store.get(id) : undefined;
    if (!doc || doc.object !== kind) throw missing(kind, String(id), param);
    return doc as Extract<ChargeObject | StoredObject, { object: K }>;
  }

  function checkedAmount(value: unknown): number {
    const amount = integerParam(value, 'amount');
    if (amount < 1) throw invalid('This value must be greater than or equal to 1.', 'amount');
    if (amount > MAX_AMOUNT) {
      throw new EngineError(
        400,
        'invalid_request_error',
        'amount_too_large',
        `Amount must be no more than ${MAX_AMOUNT}.`,
        'amount',
      );
    }
    return amount;
  }

  async function index(customerId: string, tenantId: string | null, paymentIntentId: string) {
    const found = await store.get(indexId(customerId));
    const ids = found?.object === 'customer_payment_intents' ? found.ids : [];
    await store.put(
      {
        id: indexId(customerId),
        object: 'customer_payment_intents',
        ids: [...ids, paymentIntentId],
        metadata: {},
      },
      tenantId,
    );
  }

  return {
    /** POST /v1/payment_intents; with `confirm`, charges at once (a decline throws CardDeclinedError). */
    create(params: StripeParams): Promise<PaymentIntent> {
      return serial(async () => {
        const customer = await load(params.customer, 'customer', 'customer');
        const amount = checkedAmount(params.amount);
        const currency = params.currency;
        if (typeof currency !== 'string' || !/^[a-z]{3}$/.test(currency))
          throw invalid('Invalid currency.', 'currency');
        const confirm = params.confirm === true || params.confirm === 'true';
        const pm = params.payment_method
          ? await load(params.payment_method, 'payment_method', 'payment_method')
          : undefined;
        if (pm && pm.customer !== customer.id) {
          throw invalid(
            `The PaymentMethod ${pm.id} does not belong to the Customer ${customer.id}.`,
            'payment_method',
          );
        }
        if (confirm && !pm) {
          throw invalid(
            'You cannot confirm this PaymentIntent because it’s missing a payment method.',
            'payment_method',
          );
        }
        const id = objectId('pi');
        const intent: PaymentIntent = {
          id,
          object: 'payment_intent',
          amount,
          amount_received: 0,
          capture_method: 'automatic_async',
          client_secret: `${id}_secret_${objectId('s').slice(2)}`,
          confirmation_method: 'automatic',
          created: toSeconds(now()),
          currency,
          customer: customer.id,
          description: stringOrNull(params.description),
          last_payment_error: null,
          latest_charge: null,
          livemode: false,
          metadata: metadataOf(params.metadata),
          payment_method: pm?.id ?? null,
          payment_method_types: ['card'],
          status: pm ? 'requires_confirmation' : 'requires_payment_method',
        };
        if (confirm && pm) {
          intent.latest_charge = objectId('ch');
          if (pm._behavior === 'succeed') {
            intent.status = 'succeeded';
            intent.amount_received = amount;
          } else {
            // A failed confirmation detaches the card from the intent, as Stripe's does.
            intent.status = 'requires_payment_method';
            intent.payment_method = null;
            intent.last_payment_error = {
              type: 'card_error',
              code: 'card_declined',
              decline_code: 'generic_decline',
              doc_url: DECLINE_DOC_URL,
              message: 'Your card was declined.',
              payment_method: { id: pm.id, object: 'payment_method', type: 'card' },
            };
          }
        }
        const tenantId = customer.metadata.tenant_id ?? null;
        await store.put(intent, tenantId);
        await index(customer.id, tenantId, id);
        if (intent.last_payment_error) throw new CardDeclinedError(intent);
        return intent;
      });
    },

    /** GET /v1/payment_intents/{id}. */
    async retrieve(id: string): Promise<PaymentIntent> {
      return (await load(id, 'payment_intent', 'id')) as PaymentIntent;
    },

    /** GET /v1/payment_intents: one customer's, newest first, `created[gte]` and `limit` honoured. */
    async list(params: StripeParams): Promise<PaymentIntentList> {
      const customerId = params.customer;
      if (typeof customerId !== 'string' || !customerId) {
        throw invalid('The simulator lists the PaymentIntents of one customer: pass customer.', 'customer');
      }
      const since = objectParam(params.created)?.gte;
      const from = since === undefined ? 0 : integerParam(since, 'created[gte]');
      const limit = Math.min(100, integerParam(params.limit, 'limit', 10));
      const found = await store.get(indexId(customerId));
      const ids = found?.object === 'customer_payment_intents' ? [...found.ids].reverse() : [];
      const data: PaymentIntent[] = [];
      for (const id of ids) {
        const intent = await store.get(id);
        if (intent?.object === 'payment_intent' && intent.created >= from) data.push(intent);
      }
      return stripeList(data, limit, '/v1/payment_intents');
    },
  };
}

export type SimulatedPaymentIntents = ReturnType<typeof createPaymentIntents>;
