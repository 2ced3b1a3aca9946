/**
 * The white-label client portal (docs/portal.md): server-rendered pages where an agency's clients
 * (users) sign in with their `/auth/v1` account and see their minutes, plan, agents and calls, in
 * the agency's brand and never the platform's.
 *
 * Where: `/portal/…` on a tenant's verified custom domain (services.branding.forHost), or
 * `/portal/{slug or tenant id}/…` on any other host (services.branding.forSlug). One catch-all
 * route finds the portal from the Host and the path, then matches the page (./router.ts).
 *
 * Security as in the console: @fastify/cookie (session, flash and CSRF cookies, each at the
 * portal's own path), @fastify/formbody (plain forms; JSON is refused), @fastify/csrf-protection
 * (a token bound to the tenant and the session in every form, checked on every POST),
 * @fastify/helmet (scripts and styles from this origin only; images also from the brand's https
 * logo origin; no framing). A user's session counts only in the portal of the user's own tenant.
 */
import type { IncomingMessage } from 'node:http';
import type { FastifyPluginAsync, FastifyReply, FastifyRequest } from 'fastify';
import type { Brand } from '../branding/service.js';
import { ApiError } from '../core/errors.js';
import { checkStorable, MAX_BODY_DEPTH } from '../core/http/validation.js';
import { pageErrorHandler } from '../web/page-errors.js';
import { acceptFormsOnly, checkCsrf, protectPages } from '../web/page-security.js';
import { agentPages } from './agents.js';
import { assetNameOf, sendAsset } from './assets.js';
import { logoOrigin } from './brand-style.js';
import { callPages } from './calls.js';
import type { PortalServices } from './context.js';
import {
  CSRF_COOKIE,
  cookieOptions,
  csrfUserInfo,
  type PortalState,
  type PortalUser,
  SESSION_COOKIE,
  takeFlash,
} from './context.js';
import { homePages } from './home.js';
import { errorPage, neutralNotFound, unavailablePage } from './layout.js';
import { passwordResetPages } from './password-reset.js';
import { createRouter } from './router.js';
import { signInPages } from './sign-in.js';
import { topUpPages } from './top-ups.js';

/** Slugs and tenant ids: anything else in the key's place is no portal, without a lookup. */
const PORTAL_KEY = /^[A-Za-z0-9_-]{1,64}$/;

export const portalSurface: FastifyPluginAsync<{ services: PortalServices }> = async (app, { services }) => {
  // The custom-domain guard lets only /portal through on agencies' domains (src/branding/host-guard.ts).
  if (app.prefix !== '/portal') throw new Error("register portalSurface with { prefix: '/portal' }");
  const root = app.prefix;
  const router = createRouter([
    ...signInPages(services),
    ...passwordResetPages(services),
    ...homePages(services),
    ...agentPages(services),
    ...callPages(services),
    ...topUpPages(services),
  ]);
  /** The brand's logo origin per request, for the img-src the helmet hook writes. */
  const logoSources = new WeakMap<IncomingMessage, string>();

  /** The path inside this surface: `/acme/agents` for `/portal/acme/agents?page=2`. */
  const innerPath = (request: FastifyRequest) => {
    const path = request.url.split('?')[0] ?? '';
    return path.slice(root.length) || '/';
  };

  async function locate(
    host: string | undefined,
    inner: string,
  ): Promise<Pick<PortalState, 'brand' | 'base' | 'path'> | undefined> {
    const byHost = await services.branding.forHost(host);
    // On a verified custom domain every path is that tenant's: another slug there is just no page.
    if (byHost) return { brand: byHost, base: root, path: inner };
    const match = /^\/([^/]+)(\/.*)?$/.exec(inner);
    if (!match || !PORTAL_KEY.test(match[1])) return undefined;
    const brand = await services.branding.forSlug(match[1]);
    if (!brand) return undefined;
    return { brand, base: `${root}/${brand.portalKey}`, path: match[2] ?? '/' };
  }

  /** The session of the cookie, when it is live and belongs to a user of this portal's tenant. */
  async function signedInUser(
    request: FastifyRequest,
    reply: FastifyReply,
    brand: Brand,
    base: string,
  ): Promise<PortalUser | null> {
    const token = request.cookies[SESSION_COOKIE];
    if (!token) return null;
    const forget = () => {
      reply.clearCookie(SESSION_COOKIE, cookieOptions(base));
      return null;
    };
    let session: Awaited<ReturnType<typeof services.sessions.authenticate>>;
    try {
      // Expired, revoked, blocked or deleted users are refused here, as by GET /auth/v1/me.
      session = await services.sessions.authenticate(token);
    } catch (error) {
      if (error instanceof ApiError && error.status === 401) return forget();
      throw error;
    }
    if (session.tenant_id !== brand.tenantId) return forget();
    const user = await services.users.get(brand.tenantId, session.user_id).catch((error: unknown) => {
      if (error instanceof ApiError && error.status === 404) return undefined;
      throw error;
    });
    if (!user) return forget();
    return { sessionId: session.id, userId: session.user_id, token, email: user.email, name: user.name };
  }

  await acceptFormsOnly(app);
  app.decorateRequest('portal', null);

  // Before helmet's hook, which reads the logo origin this one finds.
  app.addHook('onRequest', async (request, reply) => {
    const inner = innerPath(request);
    // The stylesheet is the same for everyone: no lookups for it.
    if (assetNameOf(inner)) return;
    const located = await locate(request.headers.host, inner);
    if (!located) return;
    const origin = logoOrigin(located.brand.logoUrl);
    if (origin) logoSources.set(request.raw, origin);
    request.portal = { ...located, user: null, flash: undefined };
    request.portal.user = await signedInUser(request, reply, located.brand, located.base);
    if (request.method === 'GET') request.portal.flash = takeFlash(request, reply, located.base);
  });

  await protectPages(app, {
    csrfCookie: CSRF_COOKIE,
    cookiePath: root,
    csrfUserInfo,
    hmacKey: services.secrets.deriveKey('portal-csrf').toString('base64'),
    imageSourceOf: (req) => logoSources.get(req) ?? "'self'",
  });

  app.setErrorHandler(
    pageErrorHandler({
      surface: 'portal',
      csrfRefused: 'This form has expired or did not come from this page. Reload the page and try again.',
      messageOf: (apiError, request) =>
        apiError.status >= 500
          ? `Something went wrong on our side (reference ${request.id}). Please try again.`
          : apiError.status === 404
            ? 'This page does not exist, or it is not yours to see.'
            : undefined,
      page: errorPage,
    }),
  );
  app.setNotFoundHandler((request, reply) =>
    request.portal ? errorPage(reply, 404, 'There is no such page here.') : neutralNotFound(reply),
  );

  async function dispatch(request: FastifyRequest, reply: FastifyReply) {
    const asset = assetNameOf(innerPath(request));
    if (asset && request.method !== 'POST') return sendAsset(reply, asset);
    const state = request.portal;
    if (!state) return neutralNotFound(reply);
    if (state.brand.suspended) return unavailablePage(reply);
    const found = router.match(request.method, state.path);
    if (found.kind === 'none') return errorPage(reply, 404, 'There is no such page here.');
    if (found.kind === 'wrong-method') return errorPage(reply, 405, 'This page cannot be used that way.');
    if (request.method === 'POST') await checkCsrf(app, request, reply);
    if (reply.sent) return reply;
    if (!found.page.public && !state.user) return refuseSignedOut(request, reply, state);
    checkParameters(request.query, found.params);
    return found.page.handler(request, reply, found.params);
  }

  for (const url of ['/', '/*']) app.route({ method: ['GET', 'POST'], url, handler: dispatch });
};

function refuseSignedOut(request: FastifyRequest, reply: FastifyReply, state: PortalState) {
  if (request.method === 'GET') {
    const next = request.url.split('#')[0] ?? state.base;
    return reply.code(303).redirect(`${state.base}/sign-in?next=${encodeURIComponent(next)}`);
  }
  return errorPage(reply, 401, 'Your session has ended. Sign in again to continue.');
}

/** Query and path parameters PostgreSQL cannot store (NUL, lone surrogates) never reach a query. */
function checkParameters(query: unknown, params: Record<string, string>): void {
  for (const part of [query, params]) {
    const storable = checkStorable(part, MAX_BODY_DEPTH);
    if (storable.tooDeep || storable.issues.length > 0) {
      throw new ApiError('validation_failed', 'The address holds characters that cannot be used.');
    }
  }
}
