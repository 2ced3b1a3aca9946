/**
 * The operator console (`/operator`, docs/operator-console.md): server-rendered pages for the
 * operator's staff, on the same web kit as the agency console (src/web/): plain HTML forms only,
 * a strict Content Security Policy, a CSRF token bound to the session in every form and checked on
 * every POST. Each route says who may use it through `config.operatorAccess`: 'public' (sign-in,
 * an invitation) or a least role; by default GET needs support (read-only) and POST an admin, so
 * a support session is refused every write with 403 whatever page the form came from.
 */
import type { FastifyInstance, FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { AuditService } from '../../audit/service.js';
import type { BrandingService } from '../../branding/service.js';
import { actAs } from '../../core/audit/context.js';
import type { Clock } from '../../core/clock.js';
import type { Config } from '../../core/config/config.js';
import type { Database } from '../../core/db/database.js';
import type { IdempotencyStore } from '../../core/idempotency/store.js';
import type { SecretBox } from '../../core/security/secrets.js';
import type { EventService } from '../../events/service.js';
import type { MemberService } from '../../members/service.js';
import type { OperatorReports } from '../../operator-reports/service.js';
import type { PhoneNumberService } from '../../phone-numbers/service.js';
import type { PlanService } from '../../plans/service.js';
import type { PlatformBrand, PlatformBrandService } from '../../platform-brand/service.js';
import type { RateLimits } from '../../rate-limits/service.js';
import type { StaffRole } from '../../staff/schemas.js';
import { type StaffService, type StaffSession, staffRoleAllows } from '../../staff/service.js';
import type { TenantService } from '../../tenants/service.js';
import type { WalletService } from '../../wallets/service.js';
import { checkParameters, type Flash } from '../../web/forms.js';
import { pageErrorHandler } from '../../web/page-errors.js';
import { acceptFormsOnly, checkCsrf, protectPages } from '../../web/page-security.js';
import type { TenantSuspension } from '../suspension.js';
import { operatorAssetRoutes } from './assets.js';
import { csrfUserInfo, OPERATOR_PATH, SESSION_COOKIE, takeFlash } from './cookies.js';
import { errorPage } from './layout.js';

export type OperatorAccess = 'public' | StaffRole;

declare module 'fastify' {
  interface FastifyContextConfig {
    operatorAccess?: OperatorAccess;
  }
  interface FastifyRequest {
    /** The signed-in staff member of an operator console request (null on public pages). */
    operatorSession: StaffSession | null;
    /** The flash message the previous request left (read once). */
    operatorFlash: Flash | undefined;
    /** The platform's brand, as every operator page names it. */
    readonly operatorBrand: PlatformBrand;
  }
}

/** Every service an operator console page may use; each group of pages declares the few it does. */
export interface OperatorConsoleServices {
  readonly config: Config;
  readonly clock: Clock;
  readonly database: Database;
  readonly secrets: SecretBox;
  readonly idempotency: IdempotencyStore;
  readonly rateLimits: RateLimits;
  readonly staff: StaffService;
  readonly platformBrand: PlatformBrandService;
  readonly operatorReports: OperatorReports;
  readonly tenants: TenantService;
  readonly members: MemberService;
  readonly plans: PlanService;
  readonly wallets: WalletService;
  readonly branding: BrandingService;
  readonly events: EventService;
  readonly suspension: TenantSuspension;
  readonly audit: AuditService;
  readonly phoneNumbers: PhoneNumberService;
}

export type OperatorPages = (app: FastifyInstance, services: OperatorConsoleServices) => Promise<unknown>;

export function operatorPages<K extends keyof OperatorConsoleServices>(
  uses: readonly K[],
  pages: (app: FastifyInstance, services: Pick<OperatorConsoleServices, K>) => Promise<void>,
): OperatorPages {
  const plugin: FastifyPluginAsync<Pick<OperatorConsoleServices, K>> = pages;
  return async (app, services) => {
    const given = Object.fromEntries(uses.map((name) => [name, services[name]])) as Pick<
      OperatorConsoleServices,
      K
    >;
    await app.register(plugin, given);
  };
}

function accessOf(request: FastifyRequest): OperatorAccess {
  const declared = request.routeOptions.config?.operatorAccess;
  if (declared) return declared;
  return request.method === 'GET' || request.method === 'HEAD' ? 'support' : 'admin';
}

export async function operatorConsoleSurface(
  app: FastifyInstance,
  options: { services: OperatorConsoleServices; pages: OperatorPages[] },
) {
  const { services } = options;
  await acceptFormsOnly(app);
  await protectPages(app, {
    csrfCookie: 'vp_operator_csrf',
    cookiePath: OPERATOR_PATH,
    csrfUserInfo,
    hmacKey: services.secrets.deriveKey('operator-console-csrf').toString('base64'),
    imageSourceOf: () => logoOrigin(services.platformBrand.cached().logoUrl),
  });

  app.decorateRequest('operatorSession', null);
  app.decorateRequest('operatorFlash', undefined);
  // The brand read (through its cache) in the onRequest hook below.
  app.decorateRequest('operatorBrand', { getter: () => services.platformBrand.cached() });

  app.addHook('onRequest', async (request, reply) => {
    // Every page names the platform: read the operator's brand (cached) before anything renders.
    await services.platformBrand.current();
    if (request.url.startsWith(`${OPERATOR_PATH}/assets/`)) return;
    request.operatorSession = await services.staff.authenticate(request.cookies[SESSION_COOKIE]);
    if (request.operatorSession) actAs({ type: 'operator_staff', id: request.operatorSession.staffId });
    if (request.method === 'GET') request.operatorFlash = takeFlash(request, reply);
  });

  app.addHook('preHandler', async (request, reply) => {
    const access = accessOf(request);
    if (request.method !== 'GET' && request.method !== 'HEAD') await checkCsrf(app, request, reply);
    if (reply.sent || access === 'public') return;
    const session = request.operatorSession;
    if (!session) return refuseSignedOut(request, reply);
    if (!staffRoleAllows(session.role, access)) {
      return errorPage(
        reply,
        403,
        `Your role (${session.role}) cannot do this; ask an owner of the platform.`,
      );
    }
    checkParameters(request);
  });

  app.setErrorHandler(
    pageErrorHandler({
      surface: 'operator console',
      csrfRefused:
        'This form has expired or did not come from the operator console. Reload the page and try again.',
      page: errorPage,
    }),
  );
  app.setNotFoundHandler((_request, reply) =>
    errorPage(reply, 404, 'There is no such page in the operator console.'),
  );

  await app.register(operatorAssetRoutes, { platformBrand: services.platformBrand });
  for (const register of options.pages) await register(app, services);
}

/** The https origin of the platform's logo (the CSP's img-src), or 'self' when there is none. */
function logoOrigin(logoUrl: string | null): string {
  try {
    if (logoUrl) return new URL(logoUrl).origin;
  } catch {}
  return "'self'";
}

function refuseSignedOut(request: FastifyRequest, reply: FastifyReply) {
  if (request.method === 'GET') {
    return reply.code(303).redirect(`${OPERATOR_PATH}/sign-in?next=${encodeURIComponent(request.url)}`);
  }
  return errorPage(reply, 401, 'Your session has ended. Sign in again to continue.');
}
