/**
 * The operator API (`/admin/v1`), the stand-in for the tenant dashboard (decisions.md §4):
 * bearer ADMIN_TOKEN, the same envelope and error codes as the partner API, no scopes.
 * Each feature keeps its operator routes in its own folder; this plugin gathers them.
 */
import type { FastifyInstance } from 'fastify';
import { apiKeyAdminRoutes } from '../api-keys/admin-routes.js';
import type { Services } from '../app.js';
import { registerAdminAuth } from '../core/auth.js';
import { creditAdminRoutes } from '../credits/admin-routes.js';
import { planAdminRoutes } from '../plans/admin-routes.js';
import { tenantAdminRoutes } from '../tenants/admin-routes.js';
import { userAdminRoutes } from '../users/admin-routes.js';

export async function operatorRoutes(app: FastifyInstance, { services }: { services: Services }) {
  const { database, clock, tenants, plans, users, keyVerifier, config } = services;
  const db = database.db;
  registerAdminAuth(app, config.adminToken);
  await app.register(tenantAdminRoutes, { tenants });
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
  for (const extra of services.operatorRouteExtensions) await app.register(extra);
}
