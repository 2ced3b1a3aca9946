/**
 * The composition root: builds every capability once, from explicit dependencies, in dependency
 * order. Adapters at the borders (clock, telephony, card processor, rate limits, mail transport)
 * come from the configuration unless the caller passes its own (tests: fakes, hand-moved clocks,
 * wrappers). Nothing is optional and nothing is replaced after this returns.
 */

import crypto from 'node:crypto';
import { operatorDefaults } from './agents/config.js';
import { agentJobs } from './agents/jobs.js';
import { type AgentService, createAgentService, findPublishedVersion } from './agents/service.js';
import { createKeyVerifier, type KeyVerifier } from './api-keys/service.js';
import { type AuditService, createAuditService } from './audit/service.js';
import { createProcessorAccounts, type ProcessorAccounts } from './billing/accounts.js';
import { defaultProcessor } from './billing/default-processor.js';
import type { PaymentProcessor } from './billing/processor.js';
import { type BrandingService, createBrandingService, type TxtResolver } from './branding/service.js';
import { createEngineReports } from './calls/engine-reports.js';
import { callJobs } from './calls/jobs.js';
import { createCallPipeline } from './calls/pipeline.js';
import { type CallService, createCallService } from './calls/service.js';
import { createWebhookTargetCache } from './calls/webhook-targets.js';
import { campaignJobs } from './campaigns/jobs.js';
import { createCampaignScheduler } from './campaigns/scheduler.js';
import { type CampaignService, createCampaignService } from './campaigns/service.js';
import { type Clock, systemClock } from './core/clock.js';
import type { Config } from './core/config/config.js';
import type { Database } from './core/db/database.js';
import { createIdempotencyStore, type IdempotencyStore } from './core/idempotency/store.js';
import { createDoorbell, jobTable } from './core/jobs/definitions.js';
import { createJobRunner, type JobHandler, type JobLogger, type JobRunner } from './core/jobs/runner.js';
import { type HostResolver, systemResolver } from './core/security/outbound-addresses.js';
import { createSecretBox, type SecretBox } from './core/security/secrets.js';
import { creditJobs } from './credits/jobs.js';
import { createDoNotCallService, type DoNotCallService } from './do-not-call/service.js';
import { emailJobs } from './emails/jobs.js';
import { createEmailService, type EmailService } from './emails/service.js';
import { createTemplateStore } from './emails/templates.js';
import { createSmtpSender, type SmtpSender } from './emails/transports.js';
import { createEventDelivery } from './events/delivery.js';
import { recordUserCreated, recordUserDeleted } from './events/hooks.js';
import { eventJobs } from './events/jobs.js';
import { recordEvent } from './events/record.js';
import { createEventService, type EventService } from './events/service.js';
import { createInsightService, type InsightService } from './insights/service.js';
import { maintenanceJobs } from './maintenance/jobs.js';
import { createMemberService, type MemberService } from './members/service.js';
import { createMetrics, type Metrics } from './metrics/registry.js';
import { createMetricsService, type MetricsService } from './metrics/service.js';
import { createOperatorReports, type OperatorReports } from './operator-reports/service.js';
import { overageJobs } from './overage/jobs.js';
import { createOverageInvoicing, settleOverageInTx } from './overage/service.js';
import { createInboundCalls, type InboundCallService } from './phone-numbers/inbound.js';
import { createPhoneNumberService, type PhoneNumberService } from './phone-numbers/service.js';
import { createPlanService, type PlanService } from './plans/service.js';
import {
  brandSlug,
  createPlatformBrandService,
  type PlatformBrandService,
} from './platform-brand/service.js';
import { defaultRateLimits } from './rate-limits/default-limits.js';
import type { RateLimits } from './rate-limits/service.js';
import { sessionJobs } from './sessions/jobs.js';
import { revokeUserSessions } from './sessions/repository.js';
import { createSessionService, type SessionService } from './sessions/service.js';
import { createStaffService, type StaffService } from './staff/service.js';
import { subscriptionJobs } from './subscriptions/jobs.js';
import { createSubscriptionService, type SubscriptionService } from './subscriptions/service.js';
import { createTelephony } from './telephony/index.js';
import type { EngineReports, TelephonyAdapter } from './telephony/port.js';
import { createTenantService, type TenantService } from './tenants/service.js';
import { createToolService, type ToolService } from './tools/service.js';
import { topUpJobs } from './top-ups/jobs.js';
import { createTopUpService, type TopUpService } from './top-ups/service.js';
import { createUsageService, type UsageService } from './usage/service.js';
import { createUserService, type UserService } from './users/service.js';
import { walletJobs } from './wallets/jobs.js';
import { createWalletService, type WalletService } from './wallets/service.js';

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
  /** Resolves the hosts tenants and partners name (event webhooks, SMTP servers) for the outbound guard (DNS). */
  resolveHost: HostResolver;
  /** TXT lookups that verify tenants' custom domains (DNS). */
  resolveTxt: TxtResolver;
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
  /** Each tenant's processor account (a connected Stripe account, or the platform's own). */
  readonly processorAccounts: ProcessorAccounts;
  readonly rateLimits: RateLimits;
  readonly keyVerifier: KeyVerifier;
  readonly idempotency: IdempotencyStore;
  /** Seals stored third-party secrets (SMTP passwords). */
  readonly secrets: SecretBox;
  readonly tenants: TenantService;
  readonly plans: PlanService;
  readonly users: UserService;
  readonly sessions: SessionService;
  readonly subscriptions: SubscriptionService;
  readonly emails: EmailService;
  /** Minutes users buy beyond their plan's (charged through the processor, or recorded). */
  readonly topUps: TopUpService;
  /** Users' months (minutes, calls, amounts) and the agency's totals and margin. */
  readonly usage: UsageService;
  /** Tenants' wholesale minutes (docs/wallets.md); calls debit them in the pipeline's statements. */
  readonly wallets: WalletService;
  readonly agents: AgentService;
  /** Tenants' brands and custom domains; whose brand a portal request shows. */
  readonly branding: BrandingService;
  readonly doNotCall: DoNotCallService;
  /** Numbers the operator imported from the voice engine, assigned to tenants; who answers each. */
  readonly phoneNumbers: PhoneNumberService;
  /** Who answers a call to one of those numbers (the engines' inbound routes, the simulator's). */
  readonly inboundCalls: InboundCallService;
  readonly calls: CallService;
  /** Batch calls: recipient lists an agent calls, dispatched by a scheduler job per campaign. */
  readonly campaigns: CampaignService;
  /** Applies what voice engines report about their calls (the engines' callback routes). */
  readonly engineReports: EngineReports;
  /** Event webhook endpoints, their deliveries, the events list. */
  readonly events: EventService;
  /** Agents' tools: the tenant's tools secret and the signed requests to each tool's url. */
  readonly tools: ToolService;
  /** The agency's console members and their sessions. */
  readonly members: MemberService;
  /** Aggregates for the console's overview. */
  readonly insights: InsightService;
  /** The audit log's readers and retention (the writes are in each service's transactions). */
  readonly audit: AuditService;
  /** This process's counters (requests, refusals, deliveries, call endings). */
  readonly metrics: Metrics;
  /** GET /metrics: the counters of every process and what the database holds now. */
  readonly metricsService: MetricsService;
  /** Durable job handlers by queue name, as the job runner runs them. */
  readonly jobHandlers: Readonly<Record<string, JobHandler>>;
  readonly jobRunner: JobRunner;
  readonly staff: StaffService; // the operator console's staff, brand and reports:
  readonly platformBrand: PlatformBrandService;
  readonly operatorReports: OperatorReports;
  /** Releases what the services hold open (SMTP and Redis connections); the database is the caller's. */
  close(): Promise<void>;
}

export function createServices(options: ServiceOptions): Services {
  const { config, database } = options;
  const db = database.db;
  const given = options.adapters ?? {};
  const clock = given.clock ?? systemClock;
  const telephony =
    given.telephony ??
    createTelephony(config, {
      db,
      clock,
      findAgentVersion: (tenantId, agentId, version) =>
        findPublishedVersion(db, tenantId, agentId, version, operatorDefaults(config.agents)),
      // The tools service is built below; the simulator reaches it once a call runs.
      runTool: (request) => tools.simulatedRunner()(request),
    });
  const processor = given.processor ?? defaultProcessor(config, database, clock);
  const processorAccounts = createProcessorAccounts({ db, processorName: processor.name });
  const rateLimits = given.rateLimits ?? defaultRateLimits(config, database);
  const mailSender = given.mailSender ?? createSmtpSender();
  const resolveHost = given.resolveHost ?? systemResolver;

  const idempotency = createIdempotencyStore({ db, clock });
  // What queues a job rings for this process's job runner, built last (it needs every handler).
  const doorbell = createDoorbell();
  const metrics = createMetrics();
  // Without configured keys (memory://, tests) a key for this process's lifetime only.
  const secrets = createSecretBox(config.secretKeys ?? { current: crypto.randomBytes(32), previous: [] });
  // A tenant's SMTP host: checked when the settings are saved and again before every send.
  const smtpOutbound = { allowPrivate: config.smtpAllowPrivate, resolve: resolveHost };
  const tenants = createTenantService({
    db,
    clock,
    secrets,
    smtpOutbound,
    partnerLimitDefault: config.rateLimits.partner,
    processorAccounts,
  });
  const plans = createPlanService({ db, clock });
  const platformBrand = createPlatformBrandService({ db, clock, defaults: config.platformBrand });
  const branding = createBrandingService({
    platformSlug: () => brandSlug(platformBrand.cached().name),
    db,
    clock,
    publicBaseUrl: config.publicBaseUrl,
    resolveTxt: given.resolveTxt,
  });
  const subscriptions = createSubscriptionService({
    db,
    clock,
    idempotency,
    processor,
    accounts: processorAccounts,
    events: { record: recordEvent },
    periodEnded: settleOverageInTx,
  });
  const topUps = createTopUpService({ db, clock, processor, accounts: processorAccounts, idempotency });
  const overage = createOverageInvoicing({ db, clock, processor, accounts: processorAccounts });
  const wallets = createWalletService({ db, clock, idempotency, processor });
  const emails = createEmailService({
    db,
    clock,
    secrets,
    templates: createTemplateStore(),
    sender: mailSender,
    outbound: smtpOutbound,
    platformEmail: config.platformEmail,
    platformName: () => platformBrand.cached().name,
    onQueued: doorbell.ring,
    brandOf: (tx, tenantId) => branding.brandOf(tenantId, tx),
  });
  const users = createUserService({
    db,
    clock,
    idempotency,
    // Run inside the user's own transaction: the welcome email's outbox row, the cancellations.
    lifecycle: {
      created: [(tx, user) => emails.onUserCreated(tx, user), (tx, user) => recordUserCreated(tx, user)],
      deleted: [
        (tx, user, at) => revokeUserSessions(tx, user.tenant_id, user.id, at),
        (tx, user, at) => subscriptions.cancelAllInTx(tx, user.tenant_id, user.id, at),
        (tx, user, at) => recordUserDeleted(tx, user, at),
      ],
    },
    passwordHashMemoryKib: config.passwordHashMemoryKib,
    publicBaseUrl: config.publicBaseUrl,
  });
  const agents = createAgentService({
    db,
    clock,
    idempotency,
    publicBaseUrl: config.publicBaseUrl,
    catalog: config.agents,
    outbound: { allowPrivate: config.webhookAllowPrivate, resolve: resolveHost },
    syncPublishedVersions: telephony.syncAgentVersion !== undefined,
    onQueued: doorbell.ring,
    callerIdIssue: (tenantId, phoneNumber) => phoneNumbers.callerIdIssue(tenantId, phoneNumber),
  });
  const doNotCall = createDoNotCallService({ db, clock });
  const phoneNumbers = createPhoneNumberService({ db, clock, telephony });
  const inboundCalls = createInboundCalls({ db, clock, telephony, agents, onQueued: doorbell.ring });
  const sessions = createSessionService({
    db,
    clock,
    emails,
    passwordHashMemoryKib: config.passwordHashMemoryKib,
    brandOf: (executor, tenantId) => branding.brandOf(tenantId, executor),
    onQueued: doorbell.ring,
  });
  const calls = createCallService({
    db,
    clock,
    webhookTargets: createWebhookTargetCache(),
    idempotency,
    engine: telephony.name,
    onQueued: doorbell.ring,
  });
  const campaigns = createCampaignService({
    db,
    clock,
    idempotency,
    engine: telephony.name,
    onQueued: doorbell.ring,
  });
  const campaignScheduler = createCampaignScheduler({ db, clock, calls, onQueued: doorbell.ring });
  const pipeline = createCallPipeline({ db, clock, telephony, onCallEnded: metrics.callEnded });
  const engineReports = createEngineReports({ db, clock, telephony, onCallEnded: metrics.callEnded });
  const eventOptions = { db, clock, secrets, allowPrivate: config.webhookAllowPrivate, resolve: resolveHost };
  const events = createEventService({ ...eventOptions, idempotency, onQueued: doorbell.ring });
  const tools = createToolService(eventOptions);
  const eventDelivery = createEventDelivery({ ...eventOptions, onAttempt: metrics.eventDeliveryAttempted });
  const members = createMemberService({
    db,
    clock,
    secrets,
    passwordHashMemoryKib: config.passwordHashMemoryKib,
    publicBaseUrl: config.publicBaseUrl,
    mailer: emails,
    onQueued: doorbell.ring,
  });

  const jobs = jobTable([
    ...callJobs({ pipeline, engineReports }),
    ...campaignJobs(campaignScheduler),
    ...agentJobs({ db, telephony, operatorDefaults: operatorDefaults(config.agents) }),
    ...emailJobs(emails),
    ...sessionJobs(sessions),
    ...subscriptionJobs(subscriptions),
    ...eventJobs(eventDelivery),
    ...topUpJobs(topUps),
    // A balance back above zero resumes the campaigns it paused (credits and wallets know nothing of them).
    ...creditJobs({
      restored: (tenant, user) => campaignScheduler.balanceRestored(tenant, 'insufficient_credits', user),
    }),
    ...walletJobs(wallets, {
      restored: (tenant) => campaignScheduler.balanceRestored(tenant, 'tenant_balance_exhausted'),
    }),
    ...overageJobs(overage),
    ...maintenanceJobs({
      database,
      clock,
      idempotency,
      jobRetentionDays: config.jobRetentionDays,
      logger: options.logger,
    }),
  ]);
  const jobRunner = createJobRunner({
    db,
    clock,
    handlers: jobs.handlers,
    limits: jobs.limits,
    batchSize: config.jobBatchSize,
    concurrency: config.jobConcurrency,
    wakeDelayMs: config.jobWakeDelayMs,
    leaseMs: config.jobLeaseMs,
    logger: options.logger,
  });
  doorbell.answer(() => jobRunner.wake());

  return {
    config,
    database,
    clock,
    telephony,
    processor,
    processorAccounts,
    rateLimits,
    keyVerifier: createKeyVerifier({ db, clock, prefix: config.apiKeyPrefix, logger: options.logger }),
    idempotency,
    secrets,
    tenants,
    plans,
    users,
    sessions,
    subscriptions,
    emails,
    agents,
    doNotCall,
    phoneNumbers,
    inboundCalls,
    calls,
    campaigns,
    engineReports,
    topUps,
    usage: createUsageService({ db, clock }),
    wallets,
    branding,
    events,
    tools,
    members,
    insights: createInsightService({ db, clock }),
    audit: createAuditService({ db, clock }),
    metrics,
    metricsService: createMetricsService({ db, clock, metrics, queues: Object.keys(jobs.handlers) }),
    jobHandlers: jobs.handlers,
    jobRunner,
    staff: createStaffService({ db, clock, secrets, config, brand: platformBrand }),
    platformBrand,
    operatorReports: createOperatorReports({ db, clock }),
    async close() {
      eventDelivery.close();
      await mailSender.close();
      await rateLimits.close();
    },
  };
}
