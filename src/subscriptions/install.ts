/**
 * Subscriptions and billing: the processor chosen by PROCESSOR (simulated | stripe), the partner
 * routes, the operator payment-method routes, the period/reconciliation/cancellation jobs, and the
 * cancellation of a deleted user's subscriptions.
 */
import type { Services } from '../app.js';
import { paymentMethodAdminRoutes } from '../billing/admin-routes.js';
import type { PaymentProcessor } from '../billing/processor.js';
import { createSimulatedProcessor } from '../billing/simulated.js';
import { createStripeProcessor } from '../billing/stripe.js';
import { subscriptionRoutes } from './routes.js';
import {
  createSubscriptionService,
  PERIOD_QUEUE,
  PROCESSOR_CANCEL_QUEUE,
  RECONCILE_QUEUE,
  type SubscriptionService,
} from './service.js';

declare module '../app.js' {
  interface Services {
    /** The card processor (tests may replace it, e.g. with a failing wrapper, before the first request). */
    processor?: PaymentProcessor;
    subscriptions?: SubscriptionService;
  }
}

export function createProcessor(services: Services): PaymentProcessor {
  const { config } = services;
  if (config.processor === 'stripe') {
    return createStripeProcessor({ secretKey: config.stripeSecretKey!, apiBase: config.stripeApiBase });
  }
  return createSimulatedProcessor({ db: services.database.db, clock: services.clock });
}

/** The installed processor. */
export function processorOf(services: Services): PaymentProcessor {
  if (!services.processor) throw new Error('subscriptions feature not installed');
  return services.processor;
}

export function installSubscriptions(services: Services): void {
  const db = services.database.db;
  services.processor = createProcessor(services);
  const processor = () => processorOf(services);
  const subscriptions = createSubscriptionService({
    db,
    clock: services.clock,
    idempotency: services.idempotency,
    processor,
  });
  services.subscriptions = subscriptions;

  services.jobHandlers[PERIOD_QUEUE] = async (job) => {
    await subscriptions.advance(job.tenantId!, job.payload.subscription_id);
  };
  services.jobHandlers[RECONCILE_QUEUE] = async (job) => {
    await subscriptions.reconcile(job.tenantId!, job.payload.operation_id);
  };
  services.jobHandlers[PROCESSOR_CANCEL_QUEUE] = async (job) => {
    await subscriptions.cancelAtProcessor(job.payload.subscription_id, job.payload.provider_subscription_id);
  };
  services.userLifecycle.deleted.push((tx, user, at) =>
    subscriptions.cancelAllInTx(tx, user.tenant_id, user.id, at),
  );

  services.partnerRouteExtensions.push(async (app) => {
    await app.register(subscriptionRoutes, { subscriptions, publicBaseUrl: services.config.publicBaseUrl });
  });
  services.operatorRouteExtensions.push(async (app) => {
    await app.register(paymentMethodAdminRoutes, { db, clock: services.clock, processor });
  });
}
