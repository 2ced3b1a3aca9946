/**
 * Builds the HTTP application from the services (src/services.ts): shared plugins first
 * (validation, errors, request ids, rate limits, OpenAPI), then each surface with its routes in
 * one explicit list: partner API (/api/v1), user sessions (/auth/v1), operator API (/admin/v1),
 * and the call-trigger webhook. Tests import buildApp; src/server.ts only starts it.
 */
import type { FastifyInstance, FastifyPluginAsync } from 'fastify';
import Fastify from 'fastify';
import type { DestinationStream } from 'pino';
import { agentRoutes } from './agents/routes.js';
import { SCOPES } from './api-keys/service.js';
import { auditRoutes } from './audit/routes.js';
import { registerCustomDomainGuard } from './branding/host-guard.js';
import { callRoutes } from './calls/routes.js';
import { webhookRoutes } from './calls/trigger-routes.js';
import { campaignRoutes } from './campaigns/routes.js';
import { consoleSurface } from './console/plugin.js';
import { CONSOLE_PAGES } from './console/routes.js';
import { registerAuditScope } from './core/audit/http.js';
import { registerPartnerAuth, tenantOf } from './core/http/auth.js';
import {
  clientErrorHandler,
  frameworkErrors,
  noRoute,
  registerErrorHandling,
} from './core/http/error-handler.js';
import { registerOpenApi } from './core/http/openapi.js';
import { buildSharedSerializer } from './core/http/serialization.js';
import { httpServerFactory } from './core/http/server.js';
import { validatorCompiler } from './core/http/validation.js';
import { registerIdempotency } from './core/idempotency/store.js';
import { newRequestId } from './core/ids.js';
import { lazyChildLogger, loggerOptions } from './core/observability/logging.js';
import { registerRequestTracing } from './core/observability/tracing.js';
import { doNotCallRoutes } from './do-not-call/routes.js';
import { eventRoutes } from './events/routes.js';
import { metricsRoutes, registerRequestMetrics } from './metrics/routes.js';
import { operatorConsoleSurface } from './operator/console/plugin.js';
import { OPERATOR_CONSOLE_PAGES } from './operator/console/routes.js';
import { operatorRoutes } from './operator/routes.js';
import { createTenantSuspension } from './operator/suspension.js';
import { phoneNumberRoutes } from './phone-numbers/routes.js';
import { planRoutes } from './plans/routes.js';
import { portalSurface } from './portal/plugin.js';
import { registerRateLimiting } from './rate-limits/hooks.js';
import type { Services } from './services.js';
import { sessionRoutes } from './sessions/routes.js';
import { subscriptionRoutes } from './subscriptions/routes.js';
import { engineCallbackRoutes } from './telephony/routes.js';
import { toolEngineRoutes } from './tools/engine-routes.js';
import { toolRoutes } from './tools/routes.js';
import { topUpRoutes } from './top-ups/routes.js';
import { usageRoutes } from './usage/routes.js';
import { userRoutes } from './users/routes.js';

export interface AppOptions {
  /** Where logs go (tests capture them); stdout by default. */
  logStream?: DestinationStream;
  /** Test-only routes added to a surface after its own (e.g. a handler that throws on purpose). */
  extraRoutes?: { partner?: FastifyPluginAsync[]; root?: FastifyPluginAsync[] };
}

const MAX_INCOMING_REQUEST_ID = 128;
const PRINTABLE = /^[\x20-\x7e]+$/;

function requestIdOf(header: string | string[] | undefined): string {
  if (typeof header === 'string' && header.length <= MAX_INCOMING_REQUEST_ID && PRINTABLE.test(header))
    return header;
  return newRequestId();
}

/**
 * Builds the app on `services` (created by the caller, who also closes the database). Closing the
 * app stops accepting requests, waits for those in flight, then releases the services.
 */
export async function buildApp(services: Services, options: AppOptions = {}): Promise<FastifyInstance> {
  const { config } = services;
  const app = Fastify({
    logger: options.logStream
      ? { ...loggerOptions(config.logLevel), stream: options.logStream }
      : loggerOptions(config.logLevel),
    genReqId: (request) => requestIdOf(request.headers['x-request-id']),
    childLoggerFactory: lazyChildLogger,
    requestIdHeader: false,
    bodyLimit: 1024 * 1024,
    frameworkErrors,
    clientErrorHandler,
    serverFactory: httpServerFactory(config.http),
    routerOptions: { maxParamLength: 500, ignoreTrailingSlash: true },
    // A hop count trusts that many proxies in front of us (the function form proxy-addr uses for it).
    trustProxy:
      typeof config.trustProxy === 'number'
        ? (_address: string, hop: number) => hop < (config.trustProxy as number)
        : config.trustProxy,
    // While closing, requests already on open connections are still answered normally (through
    // the envelope and request-id machinery) rather than with Fastify's bare 503.
    return503OnClosing: false,
    schemaController: { compilersFactory: { buildSerializer: buildSharedSerializer } },
  });

  app.setValidatorCompiler(validatorCompiler);
  app.removeContentTypeParser('text/plain');
  registerErrorHandling(app);
  registerRequestMetrics(app, services.metrics);
  registerRequestTracing(app);
  app.addHook('onRequest', (request, reply, done) => {
    reply.header('x-request-id', request.id);
    done();
  });
  // Who writes, from where (docs/audit.md): the surfaces' authentication names the actor.
  registerAuditScope(app);
  registerCustomDomainGuard(app, services.branding);
  // Global rate-limit hooks (webhook, sign-in) before any route; the partner limiter goes to auth.
  const partnerLimiter = registerRateLimiting(app, services.rateLimits);

  await registerOpenApi(app, {
    publicBaseUrl: config.publicBaseUrl,
    keyPrefix: config.apiKeyPrefix,
    scopes: SCOPES,
    platformName: () => services.platformBrand.cached().name,
  });

  app.get('/healthz', { schema: { hide: true } }, async () => ({ status: 'ok' }));
  app.get('/readyz', { schema: { hide: true } }, async (_request, reply) => {
    try {
      await services.database.ping(1_000);
      return { status: 'ready' };
    } catch {
      return reply.code(503).send({ status: 'unavailable' });
    }
  });

  await app.register(metricsRoutes, { metrics: services.metricsService, token: config.metricsToken });

  // The partner API: every route behind partner auth, scopes, rate limits and idempotency.
  await app.register(
    async (partner) => {
      registerPartnerAuth(partner, services.keyVerifier, partnerLimiter);
      partner.setNotFoundHandler(noRoute);
      registerIdempotency(partner, services.idempotency, tenantOf);
      await partner.register(userRoutes, { users: services.users });
      await partner.register(planRoutes, { plans: services.plans });
      await partner.register(subscriptionRoutes, {
        subscriptions: services.subscriptions,
        publicBaseUrl: config.publicBaseUrl,
      });
      await partner.register(topUpRoutes, { topUps: services.topUps, publicBaseUrl: config.publicBaseUrl });
      await partner.register(usageRoutes, { usage: services.usage });
      await partner.register(agentRoutes, { agents: services.agents, publicBaseUrl: config.publicBaseUrl });
      await partner.register(doNotCallRoutes, {
        doNotCall: services.doNotCall,
        publicBaseUrl: config.publicBaseUrl,
      });
      await partner.register(eventRoutes, { events: services.events, publicBaseUrl: config.publicBaseUrl });
      await partner.register(callRoutes, { calls: services.calls, publicBaseUrl: config.publicBaseUrl });
      await partner.register(toolRoutes, { tools: services.tools });
      await partner.register(phoneNumberRoutes, { phoneNumbers: services.phoneNumbers });
      await partner.register(campaignRoutes, {
        campaigns: services.campaigns,
        publicBaseUrl: config.publicBaseUrl,
      });
      await partner.register(auditRoutes, { audit: services.audit });
      for (const plugin of options.extraRoutes?.partner ?? []) await partner.register(plugin);
    },
    { prefix: '/api/v1' },
  );

  // User sessions of the white-label dashboard.
  await app.register(sessionRoutes, {
    prefix: '/auth/v1',
    sessions: services.sessions,
    users: services.users,
  });

  // The operator API: bearer ADMIN_TOKEN, every route in operator/routes.ts.
  const suspension = createTenantSuspension({ ...services, db: services.database.db });
  await app.register(operatorRoutes, { prefix: '/admin/v1', services: { ...services, suspension } });

  // The agency console: server-rendered pages for the tenant's members (cookie sessions, CSRF).
  await app.register(consoleSurface, { prefix: '/console', services, pages: CONSOLE_PAGES });
  // The operator console (docs/operator-console.md): the operator's staff, on the same web kit.
  await app.register(operatorConsoleSurface, {
    prefix: '/operator',
    services: { ...services, suspension },
    pages: OPERATOR_CONSOLE_PAGES,
  });
  // The client portal (docs/portal.md): /portal/{slug} here, /portal on a tenant's verified domain.
  await app.register(portalSurface, { prefix: '/portal', services });

  // The call-trigger webhook (its credential is the URL).
  await app.register(webhookRoutes, { calls: services.calls, idempotency: services.idempotency });
  // The voice engine's callbacks (docs/engines.md), authenticated the engine's way.
  await app.register(engineCallbackRoutes, {
    config: services.config,
    reports: services.engineReports,
    clock: services.clock,
    db: services.database.db,
    inbound: services.inboundCalls,
    telephony: services.telephony,
  });
  // The voice engine's tool calls (docs/tools.md), authenticated as its other callbacks.
  await app.register(toolEngineRoutes, { tools: services.tools, config: services.config });
  for (const plugin of options.extraRoutes?.root ?? []) await app.register(plugin);

  app.addHook('onClose', () => services.close());
  return app;
}
