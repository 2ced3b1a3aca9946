/**
 * The agency console surface (`/console`, docs/console.md): server-rendered pages for a tenant's
 * members. Everything a page shows or changes goes through the same services as the API.
 *
 * The web security is the page surfaces' shared one (src/web/page-security.ts), scoped to this
 * surface: plain HTML forms only, a strict Content Security Policy, and a CSRF token bound to the
 * session in every form, checked on every POST. Each route says who may
 * use it through `config.consoleAccess`: 'public' (sign-in pages), 'second-factor' (a session
 * still owing its TOTP code), or a least role; by default GET needs a viewer and POST an admin.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AgentService } from '../agents/service.js';
import type { KeyVerifier } from '../api-keys/service.js';
import type { AuditService } from '../audit/service.js';
import type { BrandingService } from '../branding/service.js';
import type { CallService } from '../calls/service.js';
import type { CampaignService } from '../campaigns/service.js';
import { actAs } from '../core/audit/context.js';
import type { Clock } from '../core/clock.js';
import type { Config } from '../core/config/config.js';
import type { Database } from '../core/db/database.js';
import type { IdempotencyStore } from '../core/idempotency/store.js';
import type { SecretBox } from '../core/security/secrets.js';
import type { DoNotCallService } from '../do-not-call/service.js';
import type { EmailService } from '../emails/service.js';
import type { EventService } from '../events/service.js';
import type { InsightService } from '../insights/service.js';
import type { Role } from '../members/schemas.js';
import type { MemberService } from '../members/service.js';
import { roleAllows } from '../members/service.js';
import type { InboundCallService } from '../phone-numbers/inbound.js';
import type { PhoneNumberService } from '../phone-numbers/service.js';
import type { PlanService } from '../plans/service.js';
import type { PlatformBrand, PlatformBrandService } from '../platform-brand/service.js';
import type { RateLimits } from '../rate-limits/service.js';
import type { SessionService } from '../sessions/service.js';
import type { SubscriptionService } from '../subscriptions/service.js';
import type { TenantService } from '../tenants/service.js';
import type { ToolService } from '../tools/service.js';
import type { TopUpService } from '../top-ups/service.js';
import type { UsageService } from '../usage/service.js';
import type { UserService } from '../users/service.js';
import type { WalletService } from '../wallets/service.js';
import { checkParameters } from '../web/forms.js';
import { pageErrorHandler } from '../web/page-errors.js';
import { acceptFormsOnly, checkCsrf, protectPages } from '../web/page-security.js';
import { assetRoutes } from './assets.js';
import { csrfUserInfo, SESSION_COOKIE, takeFlash } from './cookies.js';
import { errorPage, suspendedPage } from './layout.js';

export type ConsoleAccess = 'public' | 'second-factor' | Role;

declare module 'fastify' {
  interface FastifyContextConfig {
    consoleAccess?: ConsoleAccess;
  }
  interface FastifyRequest {
    /** The platform's brand (the operator's), as the console's title and sign-in name it. */
    readonly consolePlatformBrand: PlatformBrand;
  }
}

/** Every service a console page may use; each group of pages declares the few it does. */
export interface ConsoleServices {
  readonly config: Config;
  readonly clock: Clock;
  readonly database: Database;
  readonly secrets: SecretBox;
  readonly idempotency: IdempotencyStore;
  readonly rateLimits: RateLimits;
  readonly keyVerifier: KeyVerifier;
  readonly members: MemberService;
  readonly tenants: TenantService;
  readonly agents: AgentService;
  readonly calls: CallService;
  readonly users: UserService;
  readonly plans: PlanService;
  readonly subscriptions: SubscriptionService;
  readonly topUps: TopUpService;
  readonly usage: UsageService;
  readonly wallets: WalletService;
  readonly branding: BrandingService;
  readonly doNotCall: DoNotCallService;
  readonly phoneNumbers: PhoneNumberService;
  readonly inboundCalls: InboundCallService;
  readonly emails: EmailService;
  readonly events: EventService;
  readonly insights: InsightService;
  readonly tools: ToolService;
  readonly sessions: SessionService;
  readonly campaigns: CampaignService;
  readonly platformBrand: PlatformBrandService;
  readonly audit: AuditService;
}

/** A group of pages, registered under /console with only the services it names. */
export type ConsolePages = (app: FastifyInstance, services: ConsoleServices) => Promise<unknown>;

export function consolePages<K extends keyof ConsoleServices>(
  uses: readonly K[],
  pages: (app: FastifyInstance, services: Pick<ConsoleServices, K>) => Promise<void>,
): ConsolePages {
  const plugin: FastifyPluginAsync<Pick<ConsoleServices, K>> = pages;
  return async (app, services) => {
    const given = Object.fromEntries(uses.map((name) => [name, services[name]])) as Pick<ConsoleServices, K>;
    await app.register(plugin, given);
  };
}

function accessOf(request: FastifyRequest): ConsoleAccess {
  const declared = request.routeOptions.config?.consoleAccess;
  if (declared) return declared;
  return request.method === 'GET' || request.method === 'HEAD' ? 'viewer' : 'admin';
}

export async function consoleSurface(
  app: FastifyInstance,
  options: { services: ConsoleServices; pages: ConsolePages[] },
) {
  const { services } = options;
  await acceptFormsOnly(app);
  await protectPages(app, {
    csrfCookie: 'vp_csrf',
    cookiePath: '/console',
    csrfUserInfo,
    hmacKey: services.secrets.deriveKey('console-csrf').toString('base64'),
  });

  app.decorateRequest('consoleSession', null);
  app.decorateRequest('consoleFlash', undefined);

  app.decorateRequest('consolePlatformBrand', { getter: () => services.platformBrand.cached() });
  app.addHook('onRequest', async (request, reply) => {
    await services.platformBrand.current();
    // The stylesheet and script are the same for everyone: no session lookup for them.
    if (request.url.startsWith('/console/assets/')) return;
    request.consoleSession = await services.members.authenticate(request.cookies[SESSION_COOKIE]);
    if (request.consoleSession && !request.consoleSession.awaitingTotp) {
      actAs({ type: 'member', id: request.consoleSession.memberId });
    }
    if (request.method === 'GET') request.consoleFlash = takeFlash(request, reply);
  });

  app.addHook('preHandler', async (request, reply) => {
    const access = accessOf(request);
    if (request.method !== 'GET' && request.method !== 'HEAD') await checkCsrf(app, request, reply);
    if (reply.sent || access === 'public') return;
    const session = request.consoleSession;
    if (!session) return refuseSignedOut(request, reply);
    if (session.awaitingTotp) {
      if (access !== 'second-factor') return reply.code(303).redirect('/console/sign-in/two-factor');
      return;
    }
    // Suspended by the operator: signing out (a second-factor route) is all that is left.
    if (session.suspended && access !== 'second-factor') return suspendedPage(reply);
    if (access !== 'second-factor' && !roleAllows(session.role, access)) {
      return errorPage(reply, 403, `Your role (${session.role}) cannot do this; ask an owner of the agency.`);
    }
    checkParameters(request);
  });

  app.setErrorHandler(
    pageErrorHandler({
      surface: 'console',
      csrfRefused: 'This form has expired or did not come from the console. Reload the page and try again.',
      page: errorPage,
    }),
  );
  app.setNotFoundHandler((_request, reply) => errorPage(reply, 404, 'There is no such page in the console.'));

  await app.register(assetRoutes);
  for (const register of options.pages) await register(app, services);
}

function refuseSignedOut(request: FastifyRequest, reply: FastifyReply) {
  if (request.method === 'GET') {
    return reply.code(303).redirect(`/console/sign-in?next=${encodeURIComponent(request.url)}`);
  }
  return errorPage(reply, 401, 'Your session has ended. Sign in again to continue.');
}
