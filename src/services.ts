/**
 * The composition root: builds every capability once, from explicit dependencies, in dependency
 * order. Adapters at the borders (clock, telephony, card processor, rate limits, mail transport)
 * come from the configuration unless the caller passes its own (tests: fakes, hand-moved clocks,
 * wrappers). Nothing is optional and nothing is replaced after this returns.
 */

import crypto from 'node:crypto';
import { type AgentService, createAgentService } from './agents/service.js';
import { createKeyVerifier, type KeyVerifier } from './api-keys/service.js';
import type { PaymentProcessor } from './billing/processor.js';
import { createSimulatedProcessor } from './billing/simulated.js';
import { createStripeProcessor } from './billing/stripe.js';
import { type CallJobPayload, createCallPipeline, PROGRESS_QUEUE } from './calls/pipeline.js';
import { type CallService, createCallService, DISPATCH_QUEUE } from './calls/service.js';
import { createWebhookTargetCache } from './calls/webhook-targets.js';
import { type Clock, systemClock } from './core/clock.js';
import type { Config } from './core/config.js';
import type { Database } from './core/db.js';
import { createIdempotencyStore, type IdempotencyStore } from './core/idempotency.js';
import {
  createWorker,
  enqueueJob,
  type Job,
  type JobHandler,
  type JobLogger,
  type Worker,
} from './core/jobs.js';
import { createSecretBox, type SecretBox } from './core/secrets.js';
import { createEmailService, EMAIL_QUEUE, type EmailService } from './emails/service.js';
import { createTemplateStore } from './emails/templates.js';
import { createSmtpSender, type SmtpSender } from './emails/transports.js';
import { createPlanService, type PlanService } from './plans/service.js';
import { createRedisStore } from './rate-limits/redis-store.js';
import { createRateLimits, type RateLimits } from './rate-limits/service.js';
import { createMemoryStore } from './rate-limits/token-bucket.js';
import {
  createSubscriptionService,
  PERIOD_QUEUE,
  PROCESSOR_CANCEL_QUEUE,
  RECONCILE_QUEUE,
  type SubscriptionService,
} from './subscriptions/service.js';
import { createTelephony } from './telephony/index.js';
import type { TelephonyAdapter } from './telephony/port.js';
import { createTenantService, type TenantService } from './tenants/service.js';
import { createUserService, type UserService } from './users/service.js';

/** The service's borders with the outside world; each defaults to what the configuration names. */
export interface Adapters {
  clock: Clock;
  /** The carrier behind calls (TELEPHONY). */
  telephony: TelephonyAdapter;
  /** The card processor (PROCESSOR). */
  processor: PaymentProcessor;
  /** Rate-limit buckets, in this process or in Redis (REDIS_URL). */
  rateLimits: RateLimits;
  /** SMTP delivery of emails. */
  mailSender: SmtpSender;
}

export interface ServiceOptions {
  config: Config;
  database: Database;
  /** Logger for background work (job failures); the HTTP app has its own, built by Fastify. */
  logger?: JobLogger;
  adapters?: Partial<Adapters>;
}

/** Everything the routes, the job runner and the demo seed use, built once per process. */
export interface Services {
  readonly config: Config;
  readonly database: Database;
  readonly clock: Clock;
  readonly telephony: TelephonyAdapter;
  readonly processor: PaymentProcessor;
  readonly rateLimits: RateLimits;
  readonly keyVerifier: KeyVerifier;
  readonly idempotency: IdempotencyStore;
  /** Seals stored third-party secrets (SMTP passwords). */
  readonly secrets: SecretBox;
  readonly tenants: TenantService;
  readonly plans: PlanService;
  readonly users: UserService;
  readonly subscriptions: SubscriptionService;
  readonly emails: EmailService;
  readonly agents: AgentService;
  readonly calls: CallService;
  /** Durable job handlers by queue name, as the worker runs them. */
  readonly jobHandlers: Readonly<Record<string, JobHandler>>;
  readonly worker: Worker;
  /** Releases what the services hold open (SMTP and Redis connections); the database is the caller's. */
  close(): Promise<void>;
}

export const PURGE_QUEUE = 'maintenance.purge_idempotency_keys';
const PURGE_EVERY_MS = 60 * 60 * 1000;

function defaultProcessor(config: Config, database: Database, clock: Clock): PaymentProcessor {
  if (config.processor === 'stripe') {
    return createStripeProcessor({ secretKey: config.stripeSecretKey ?? '', apiBase: config.stripeApiBase });
  }
  return createSimulatedProcessor({ db: database.db, clock });
}

function defaultRateLimits(config: Config, database: Database): RateLimits {
  if (!config.redisUrl) return createRateLimits({ db: database.db, policies: config.rateLimits });
  // The store warns through the limits' logger, which the app replaces with its own once built.
  const limits: RateLimits = createRateLimits({
    db: database.db,
    policies: config.rateLimits,
    store: createRedisStore({
      url: config.redisUrl,
      fallback: createMemoryStore(),
      logger: () => limits.logger(),
    }),
  });
  return limits;
}

export function createServices(options: ServiceOptions): Services {
  const { config, database } = options;
  const db = database.db;
  const given = options.adapters ?? {};
  const clock = given.clock ?? systemClock;
  const telephony = given.telephony ?? createTelephony(config, { db, clock });
  const processor = given.processor ?? defaultProcessor(config, database, clock);
  const rateLimits = given.rateLimits ?? defaultRateLimits(config, database);
  const mailSender = given.mailSender ?? createSmtpSender();

  const idempotency = createIdempotencyStore({ db, clock });
  // Without configured keys (memory://, tests) a key for this process's lifetime only.
  const secrets = createSecretBox(config.secretKeys ?? { current: crypto.randomBytes(32), previous: [] });
  const tenants = createTenantService({
    db,
    clock,
    secrets,
    partnerLimitDefault: config.rateLimits.partner,
  });
  const plans = createPlanService({ db, clock });
  const subscriptions = createSubscriptionService({
    db,
    clock,
    idempotency,
    processor,
  });
  const emails = createEmailService({
    db,
    clock,
    secrets,
    templates: createTemplateStore(),
    sender: mailSender,
  });
  const users = createUserService({
    db,
    clock,
    idempotency,
    // Run inside the user's own transaction: the welcome email's outbox row, the cancellations.
    lifecycle: {
      created: [(tx, user) => emails.onUserCreated(tx, user)],
      deleted: [(tx, user, at) => subscriptions.cancelAllInTx(tx, user.tenant_id, user.id, at)],
    },
    passwordHashMemoryKib: config.passwordHashMemoryKib,
    publicBaseUrl: config.publicBaseUrl,
  });
  const agents = createAgentService({ db, clock, publicBaseUrl: config.publicBaseUrl });
  // The call service wakes this process's worker, which is built last (it needs every handler).
  let worker: Worker | undefined;
  const calls = createCallService({
    db,
    clock,
    webhookTargets: createWebhookTargetCache(),
    idempotency,
    engine: telephony.name,
    onQueued: () => worker?.wake(),
  });
  const pipeline = createCallPipeline({ db, clock, telephony });

  const jobHandlers: Record<string, JobHandler> = {
    [DISPATCH_QUEUE]: (job) => pipeline.dispatch(job as Job<CallJobPayload>),
    [PROGRESS_QUEUE]: (job) => pipeline.progress(job as Job<CallJobPayload>),
    [EMAIL_QUEUE]: (job) => emails.deliver(job),
    [PERIOD_QUEUE]: (job) => subscriptions.advance(job.tenantId ?? '', job.payload.subscription_id),
    [RECONCILE_QUEUE]: (job) => subscriptions.reconcile(job.tenantId ?? '', job.payload.operation_id),
    [PROCESSOR_CANCEL_QUEUE]: (job) =>
      subscriptions.cancelAtProcessor(job.payload.subscription_id, job.payload.provider_subscription_id),
    [PURGE_QUEUE]: async () => {
      await idempotency.purgeExpired();
      await schedulePurge(database, new Date(clock.now().getTime() + PURGE_EVERY_MS));
    },
  };
  worker = createWorker({ db, clock, handlers: jobHandlers, logger: options.logger });

  return {
    config,
    database,
    clock,
    telephony,
    processor,
    rateLimits,
    keyVerifier: createKeyVerifier({ db, clock, prefix: config.apiKeyPrefix }),
    idempotency,
    secrets,
    tenants,
    plans,
    users,
    subscriptions,
    emails,
    agents,
    calls,
    jobHandlers,
    worker,
    async close() {
      await mailSender.close();
      await rateLimits.close();
    },
  };
}

function schedulePurge(database: Database, runAt: Date) {
  return enqueueJob(database.db, {
    queue: PURGE_QUEUE,
    payload: {},
    runAt,
    singletonKey: 'purge-idempotency',
  });
}

/** Schedules the recurring maintenance jobs (idempotent across processes). */
export async function scheduleMaintenance(services: Services): Promise<void> {
  await schedulePurge(services.database, services.clock.now());
}
