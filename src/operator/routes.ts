/**
 * The operator API (`/admin/v1`), the stand-in for the tenant dashboard (decisions.md §4):
 * bearer ADMIN_TOKEN, the same envelope and error codes as the partner API, no scopes.
 * Each feature keeps its operator routes in its own folder; this plugin is their one list.
 */

import type { FastifyInstance } from 'fastify';
import { agentAdminRoutes } from '../agents/admin-routes.js';
import { apiKeyAdminRoutes } from '../api-keys/admin-routes.js';
import { paymentMethodAdminRoutes } from '../billing/admin-routes.js';
import { brandingAdminRoutes } from '../branding/admin-routes.js';
import { callAdminRoutes } from '../calls/admin-routes.js';
import { registerAdminAuth } from '../core/http/auth.js';
import { creditAdminRoutes } from '../credits/admin-routes.js';
import { emailAdminRoutes } from '../emails/admin-routes.js';
import { memberAdminRoutes } from '../members/admin-routes.js';
import { planAdminRoutes } from '../plans/admin-routes.js';
import type { Services } from '../services.js';
import { tenantAdminRoutes } from '../tenants/admin-routes.js';
import { userAdminRoutes } from '../users/admin-routes.js';
import { walletAdminRoutes } from '../wallets/admin-routes.js';

export async function operatorRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const { database, clock, tenants, plans, users, keyVerifier, config } = services;
  const db = database.db;
  registerAdminAuth(app, config.adminToken);
  await app.register(tenantAdminRoutes, { tenants });
  await app.register(brandingAdminRoutes, { branding: services.branding, tenants });
  await app.register(apiKeyAdminRoutes, {
    db,
    clock,
    tenants,
    verifier: keyVerifier,
    keyPrefix: config.apiKeyPrefix,
  });
  await app.register(planAdminRoutes, { plans, tenants });
  await app.register(userAdminRoutes, { db, clock, users });
  await app.register(creditAdminRoutes, { db, clock });
  await app.register(paymentMethodAdminRoutes, {
    db,
    clock,
    processor: services.processor,
    accounts: services.processorAccounts,
  });
  await app.register(emailAdminRoutes, { emails: services.emails, tenants });
  await app.register(agentAdminRoutes, { agents: services.agents, tenants });
  await app.register(callAdminRoutes, { calls: services.calls });
  await app.register(memberAdminRoutes, { members: services.members, tenants });
  await app.register(walletAdminRoutes, { wallets: services.wallets, idempotency: services.idempotency });
}
