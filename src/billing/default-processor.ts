import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config/config.js';
import type { Database } from '../core/db/database.js';
import type { PaymentProcessor } from './processor.js';
import { createSimulatedProcessor } from './simulator/adapter.js';
import { createStripeProcessor } from './stripe/adapter.js';

/** The card processor PROCESSOR names: Stripe, or the built-in simulator. */
export function defaultProcessor(config: Config, database: Database, clock: Clock): PaymentProcessor {
  if (config.processor === 'stripe') {
    return createStripeProcessor({ secretKey: config.stripeSecretKey ?? '', apiBase: config.stripeApiBase });
  }
  return createSimulatedProcessor({ db: database.db, clock });
}
