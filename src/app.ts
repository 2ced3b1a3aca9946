/**
 * Builds the HTTP application: shared plugins first (validation, errors, request ids, OpenAPI),
 * then the surfaces: partner API (/api/v1), user sessions (/auth/v1), operator API (/admin/v1).
 * Tests import buildApp; src/server.ts only starts it.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import Fastify from 'fastify';
import type { DestinationStream } from 'pino';
import { createKeyVerifier, type KeyVerifier } from './api-keys/service.js';
import { registerPartnerAuth, tenantOf } from './core/auth.js';
import { type Clock, systemClock } from './core/clock.js';
import type { Config } from './core/config.js';
import type { Database } from './core/db.js';
import { frameworkErrors, noRoute, registerErrorHandling } from './core/http-errors.js';
import { createIdempotencyStore, type IdempotencyStore, registerIdempotency } from './core/idempotency.js';
import { randomBase62 } from './core/ids.js';
import { createWorker, enqueueJob, type JobHandler, type Worker } from './core/jobs.js';
import { lazyChildLogger, loggerOptions } from './core/logging.js';
import { registerOpenApi } from './core/openapi.js';
import { validatorCompiler } from './core/validation.js';
import { features } from './features.js';
import { operatorRoutes } from './operator/routes.js';
import { planRoutes } from './plans/routes.js';
import { createPlanService, type PlanService } from './plans/service.js';
import { registerRateLimiting } from './rate-limits/hooks.js';
import type { DemoSeedExtension } from './seed/demo.js';
import { sessionRoutes } from './sessions/routes.js';
import { createTenantService, type TenantService } from './tenants/service.js';
import { userRoutes } from './users/routes.js';
import { createUserService, type UserLifecycle, type UserService } from './users/service.js';

export interface AppOptions {
  config: Config;
  database: Database;
  clock?: Clock;
  /** Where logs go (tests capture them); stdout by default. */
  logStream?: DestinationStream;
  /** Logger for background work (job failures); the app's own logger is built by Fastify. */
  logger?: { error(obj: object, msg: string): void; warn(obj: object, msg: string): void };
}

/** Everything the routes and workers use, built once per app. */
export interface Services {
  config: Config;
  database: Database;
  clock: Clock;
  keyVerifier: KeyVerifier;
  idempotency: IdempotencyStore;
  tenants: TenantService;
  plans: PlanService;
  users: UserService;
  userLifecycle: UserLifecycle;
  /** Durable job handlers by queue name; features add theirs before the worker starts. */
  jobHandlers: Record<string, JobHandler>;
  worker: Worker;
  /**
   * Route plugins added by features (src/features.ts): under /api/v1 behind partner auth and
   * idempotency, under /admin/v1 behind the operator token, and at the root (the webhook).
   */
  partnerRouteExtensions: FastifyPluginAsync[];
  operatorRouteExtensions: FastifyPluginAsync[];
  rootRouteExtensions: FastifyPluginAsync[];
  /** Extra demo data for the newcomer's first start (e.g. a published agent). */
  demoSeedExtensions: DemoSeedExtension[];
  /** Called on shutdown after the HTTP server closed (e.g. Redis connections). */
  closeHooks: (() => Promise<void>)[];
}

declare module 'fastify' {
  interface FastifyInstance {
    services: Services;
  }
}

const MAX_INCOMING_REQUEST_ID = 128;
const PRINTABLE = /^[\x20-\x7e]+$/;
const PURGE_QUEUE = 'maintenance.purge_idempotency_keys';

function requestIdOf(header: string | string[] | undefined): string {
  if (typeof header === 'string' && header.length <= MAX_INCOMING_REQUEST_ID && PRINTABLE.test(header))
    return header;
  return `req_${randomBase62(20)}`;
}

export function createServices(options: AppOptions): Services {
  const { config, database } = options;
  const clock = options.clock ?? systemClock;
  const db = database.db;
  const idempotency = createIdempotencyStore({ db, clock });
  const userLifecycle: UserLifecycle = { created: [], deleted: [] };
  const jobHandlers: Record<string, JobHandler> = {
    [PURGE_QUEUE]: async () => {
      await idempotency.purgeExpired();
      await enqueueJob(db, {
        queue: PURGE_QUEUE,
        payload: {},
        runAt: new Date(clock.now().getTime() + 60 * 60 * 1000),
        singletonKey: 'purge-idempotency',
      });
    },
  };
  const services: Services = {
    config,
    database,
    clock,
    keyVerifier: createKeyVerifier({ db, clock, prefix: config.apiKeyPrefix }),
    idempotency,
    tenants: createTenantService({ db, clock, partnerLimitDefault: config.rateLimits.partner }),
    plans: createPlanService({ db, clock }),
    users: createUserService({
      db,
      clock,
      idempotency,
      lifecycle: userLifecycle,
      scryptCost: config.scryptCost,
      publicBaseUrl: config.publicBaseUrl,
    }),
    userLifecycle,
    jobHandlers,
    // Handlers are read when the worker claims, so features may still add queues after this.
    worker: undefined as unknown as Worker,
    partnerRouteExtensions: [],
    operatorRouteExtensions: [],
    rootRouteExtensions: [],
    demoSeedExtensions: [],
    closeHooks: [],
  };
  services.worker = createWorker({ db, clock, handlers: jobHandlers, logger: options.logger });
  for (const install of features) install(services);
  return services;
}

/** Schedules the recurring maintenance jobs (idempotent across processes). */
export async function scheduleMaintenance(services: Services): Promise<void> {
  await enqueueJob(services.database.db, {
    queue: PURGE_QUEUE,
    payload: {},
    runAt: services.clock.now(),
    singletonKey: 'purge-idempotency',
  });
}

export async function buildApp(
  options: AppOptions,
  services = createServices(options),
): Promise<FastifyInstance> {
  const { config } = options;
  const app = Fastify({
    loggerInstance: undefined,
    logger: options.logStream
      ? { ...loggerOptions(config.logLevel), stream: options.logStream }
      : loggerOptions(config.logLevel),
    genReqId: (request) => requestIdOf(request.headers['x-request-id']),
    childLoggerFactory: lazyChildLogger,
    requestIdHeader: false,
    bodyLimit: 1024 * 1024,
    frameworkErrors,
    routerOptions: { maxParamLength: 500, ignoreTrailingSlash: true },
    // A hop count trusts that many proxies in front of us (the function form proxy-addr uses for it).
    trustProxy:
      typeof config.trustProxy === 'number'
        ? (_address: string, hop: number) => hop < (config.trustProxy as number)
        : config.trustProxy,
    // While closing, requests already on open connections are still answered normally (through
    // the envelope and request-id machinery) rather than with Fastify's bare 503.
    return503OnClosing: false,
  });
  app.decorate('services', services);

  app.setValidatorCompiler(validatorCompiler);
  app.removeContentTypeParser('text/plain');
  registerErrorHandling(app);
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // Global rate-limit hooks (webhook, sign-in) before any route; the partner limiter goes to auth.
  const partnerLimiter = registerRateLimiting(app, services);

  await registerOpenApi(app, { publicBaseUrl: config.publicBaseUrl, keyPrefix: config.apiKeyPrefix });

  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    try {
      await services.database.ping(1_000);
      return { status: 'ready' };
    } catch {
      return reply.code(503).send({ status: 'unavailable' });
    }
  });

  await app.register(
    async (partner) => {
      registerPartnerAuth(partner, services.keyVerifier, partnerLimiter);
      partner.setNotFoundHandler(noRoute);
      registerIdempotency(partner, services.idempotency, tenantOf);
      await partner.register(userRoutes, { users: services.users });
      await partner.register(planRoutes, { plans: services.plans });
      for (const extra of services.partnerRouteExtensions) await partner.register(extra);
    },
    { prefix: '/api/v1' },
  );

  await app.register(sessionRoutes, {
    prefix: '/auth/v1',
    db: services.database.db,
    clock: services.clock,
    users: services.users,
    scryptCost: config.scryptCost,
  });

  await app.register(operatorRoutes, { prefix: '/admin/v1', services });
  for (const extra of services.rootRouteExtensions) await app.register(extra);
  app.addHook('onClose', async () => {
    for (const close of services.closeHooks) await close();
  });
  return app;
}
