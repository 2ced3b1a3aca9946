/**
 * The operator API (`/admin/v1`), for whoever runs the platform (docs/design-choices.md):
 * bearer ADMIN_TOKEN, the same envelope and error codes as the partner API, no scopes.
 * Each feature keeps its operator routes in its own folder; this plugin is their one list.
 */

import type { FastifyInstance } from 'fastify';
import { agentAdminRoutes } from '../agents/admin-routes.js';
import type { AgentService } from '../agents/service.js';
import { apiKeyAdminRoutes } from '../api-keys/admin-routes.js';
import type { KeyVerifier } from '../api-keys/service.js';
import { auditAdminRoutes } from '../audit/admin-routes.js';
import type { AuditService } from '../audit/service.js';
import type { ProcessorAccounts } from '../billing/accounts.js';
import type { PaymentProcessor } from '../billing/processor.js';
import { brandingAdminRoutes } from '../branding/admin-routes.js';
import type { BrandingService } from '../branding/service.js';
import { callAdminRoutes } from '../calls/admin-routes.js';
import type { CallService } from '../calls/service.js';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config/config.js';
import type { Database } from '../core/db/database.js';
import { registerAdminAuth } from '../core/http/auth.js';
import type { IdempotencyStore } from '../core/idempotency/store.js';
import { creditAdminRoutes } from '../credits/admin-routes.js';
import { emailAdminRoutes } from '../emails/admin-routes.js';
import type { EmailService } from '../emails/service.js';
import { memberAdminRoutes } from '../members/admin-routes.js';
import type { MemberService } from '../members/service.js';
import { phoneNumberAdminRoutes } from '../phone-numbers/admin-routes.js';
import type { InboundCallService } from '../phone-numbers/inbound.js';
import type { PhoneNumberService } from '../phone-numbers/service.js';
import { planAdminRoutes } from '../plans/admin-routes.js';
import type { PlanService } from '../plans/service.js';
import { paymentMethodAdminRoutes } from '../subscriptions/admin-routes.js';
import { tenantAdminRoutes } from '../tenants/admin-routes.js';
import type { TenantService } from '../tenants/service.js';
import { userAdminRoutes } from '../users/admin-routes.js';
import type { UserService } from '../users/service.js';
import { walletAdminRoutes } from '../wallets/admin-routes.js';
import type { WalletService } from '../wallets/service.js';
import type { TenantSuspension } from './suspension.js';
import { suspensionAdminRoutes } from './suspension-routes.js';

/** The services the operator API uses (the composition root passes them all). */
export interface OperatorServices {
  readonly config: Config;
  readonly clock: Clock;
  readonly database: Database;
  readonly idempotency: IdempotencyStore;
  readonly keyVerifier: KeyVerifier;
  readonly processor: PaymentProcessor;
  readonly processorAccounts: ProcessorAccounts;
  readonly tenants: TenantService;
  readonly branding: BrandingService;
  readonly plans: PlanService;
  readonly users: UserService;
  readonly emails: EmailService;
  readonly agents: AgentService;
  readonly calls: CallService;
  readonly members: MemberService;
  readonly wallets: WalletService;
  readonly phoneNumbers: PhoneNumberService;
  readonly inboundCalls: InboundCallService;
  readonly telephony: { readonly name: string };
  readonly audit: AuditService;
  readonly suspension: TenantSuspension;
}

export async function operatorRoutes(app: FastifyInstance, { services }: { services: OperatorServices }) {
  const { database, clock, tenants, plans, users, keyVerifier, config } = services;
  const db = database.db;
  registerAdminAuth(app, config.adminToken);
  await app.register(tenantAdminRoutes, { tenants });
  await app.register(suspensionAdminRoutes, { suspension: services.suspension });
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
  await app.register(phoneNumberAdminRoutes, {
    phoneNumbers: services.phoneNumbers,
    inbound: services.inboundCalls,
    calls: services.calls,
    engine: services.telephony.name,
  });
  await app.register(auditAdminRoutes, { audit: services.audit });
}
