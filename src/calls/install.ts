/**
 * Voice agents and their calls: the telephony adapter, the agent and call services, the
 * call-trigger webhook, the operator routes, the call pipeline's job handlers and the demo agent.
 */

import { agentAdminRoutes } from '../agents/admin-routes.js';
import { type AgentService, createAgentService } from '../agents/service.js';
import type { Services } from '../app.js';
import type { Job } from '../core/jobs.js';
import { createTelephony } from '../telephony/index.js';
import type { TelephonyAdapter } from '../telephony/port.js';
import { callAdminRoutes } from './admin-routes.js';
import { type CallJobPayload, createCallPipeline, PROGRESS_QUEUE } from './pipeline.js';
import { webhookRoutes } from './routes.js';
import { seedDemoAgent } from './seed.js';
import { type CallService, createCallService, DISPATCH_QUEUE } from './service.js';
import { createWebhookTargetCache } from './webhook-targets.js';

declare module '../app.js' {
  interface Services {
    // Optional because createServices builds Services before the features run; set by installCalls.
    agents?: AgentService;
    calls?: CallService;
    /** The carrier behind calls (TELEPHONY); tests may swap it before the worker runs. */
    telephony?: TelephonyAdapter;
  }
}

export function installCalls(services: Services): void {
  const { config, clock } = services;
  const db = services.database.db;
  const telephony = createTelephony(config, { db, clock });
  const agents = createAgentService({ db, clock, publicBaseUrl: config.publicBaseUrl });
  const calls = createCallService({
    db,
    clock,
    webhookTargets: createWebhookTargetCache(),
    onQueued: () => services.worker.wake(),
  });
  services.telephony = telephony;
  services.agents = agents;
  services.calls = calls;

  const pipeline = createCallPipeline({ db, clock, telephony: () => services.telephony ?? telephony });
  services.jobHandlers[DISPATCH_QUEUE] = (job) => pipeline.dispatch(job as Job<CallJobPayload>);
  services.jobHandlers[PROGRESS_QUEUE] = (job) => pipeline.progress(job as Job<CallJobPayload>);

  services.rootRouteExtensions.push(async (app) => {
    await app.register(webhookRoutes, { calls });
  });
  services.operatorRouteExtensions.push(async (app) => {
    await app.register(agentAdminRoutes, { agents, tenants: services.tenants });
    await app.register(callAdminRoutes, { calls });
  });
  services.demoSeedExtensions.push((_services, seed) => seedDemoAgent(agents, config.publicBaseUrl, seed));
}
