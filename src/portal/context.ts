/**
 * What every portal request carries: whose portal it is (the brand, found by the custom domain or
 * the slug in the path), where the portal's pages live (`base`), the page's path inside it, the
 * signed-in user, and the one-time flash message. Also the portal's cookies, all scoped to `base`
 * so two agencies' portals on the platform host never share a session, a token or a message.
 */

import type { FastifyReply, FastifyRequest } from 'fastify';
import type { AgentService } from '../agents/service.js';
import type { Brand, BrandingService } from '../branding/service.js';
import type { CallService } from '../calls/service.js';
import type { Clock } from '../core/clock.js';
import type { Database } from '../core/db/database.js';
import type { IdempotencyStore } from '../core/idempotency/store.js';
import type { SecretBox } from '../core/security/secrets.js';
import type { PlanService } from '../plans/service.js';
import type { RateLimits } from '../rate-limits/service.js';
import type { SessionService } from '../sessions/service.js';
import type { SubscriptionService } from '../subscriptions/service.js';
import type { TopUpService } from '../top-ups/service.js';
import type { UserService } from '../users/service.js';
import type { Flash } from '../web/forms.js';

/** The services the portal's pages use (the composition root passes them all). */
export interface PortalServices {
  readonly clock: Clock;
  readonly database: Database;
  readonly secrets: SecretBox;
  readonly idempotency: IdempotencyStore;
  readonly rateLimits: RateLimits;
  readonly branding: BrandingService;
  readonly sessions: SessionService;
  readonly users: UserService;
  readonly plans: PlanService;
  readonly subscriptions: SubscriptionService;
  readonly topUps: TopUpService;
  readonly agents: AgentService;
  readonly calls: CallService;
}

export type { Flash };

export interface PortalUser {
  sessionId: string;
  userId: string;
  /** The session token from the cookie, for signing out. */
  token: string;
  email: string;
  name: string | null;
}

export interface PortalState {
  brand: Brand;
  /** `/portal` on the tenant's custom domain, `/portal/{portalKey}` on the platform host. */
  base: string;
  /** The page's path inside the portal: `/`, `/agents`, `/calls/call_…`. */
  path: string;
  /** The signed-in user of this tenant, or null. */
  user: PortalUser | null;
  flash: Flash | undefined;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The portal this request is for; null when no portal answers here (unknown slug, platform host). */
    portal: PortalState | null;
  }
}

/** Neutral names: a client looking at the cookies sees nothing of the platform either. */
export const SESSION_COOKIE = 'portal_session';
export const FLASH_COOKIE = 'portal_flash';
export const CSRF_COOKIE = 'portal_csrf';

/** HttpOnly, SameSite=Lax, Secure when the request came over https, only sent to this portal. */
export const cookieOptions = (base: string, maxAgeSeconds?: number) => ({
  path: base,
  httpOnly: true,
  sameSite: 'lax' as const,
  secure: 'auto' as const,
  ...(maxAgeSeconds !== undefined ? { maxAge: maxAgeSeconds } : {}),
});

export function portalOf(request: FastifyRequest): PortalState {
  if (!request.portal) throw new Error('a portal page without a portal');
  return request.portal;
}

/** The signed-in user; the dispatcher sends signed-out visitors to the sign-in page before any page runs. */
export function userOf(request: FastifyRequest): PortalUser & { tenantId: string } {
  const state = portalOf(request);
  if (!state.user) throw new Error('a signed-in portal page without a user');
  return { ...state.user, tenantId: state.brand.tenantId };
}

/** A path inside the portal as a link: `href(request, '/agents')` → `/portal/acme/agents`. */
export function href(request: FastifyRequest, path = '/'): string {
  const { base } = portalOf(request);
  return path === '/' ? base : `${base}${path}`;
}

export function setFlash(reply: FastifyReply, flash: Flash): void {
  reply.setCookie(FLASH_COOKIE, JSON.stringify(flash), cookieOptions(portalOf(reply.request).base, 60));
}

/** Reads and clears the flash the previous request left. */
export function takeFlash(request: FastifyRequest, reply: FastifyReply, base: string): Flash | undefined {
  const text = request.cookies[FLASH_COOKIE];
  if (!text) return undefined;
  reply.clearCookie(FLASH_COOKIE, cookieOptions(base));
  try {
    const value = JSON.parse(text) as Flash;
    if ((value.kind === 'success' || value.kind === 'error') && typeof value.message === 'string') {
      return { kind: value.kind, message: value.message.slice(0, 500) };
    }
  } catch {}
  return undefined;
}

/** 303 to a path inside the portal, with a message shown once there. */
export function redirectWithFlash(
  reply: FastifyReply,
  path: string,
  message: string,
  kind: Flash['kind'] = 'success',
): FastifyReply {
  setFlash(reply, { kind, message });
  return reply.code(303).redirect(href(reply.request, path));
}

/** What a CSRF token is bound to: the tenant and the session, so no token works in another portal or session. */
export function csrfUserInfo(request: FastifyRequest): string {
  const state = request.portal;
  return state ? `${state.brand.tenantId}:${state.user?.sessionId ?? 'signed-out'}` : 'no-portal';
}

/** Only a page of this portal is a place to go back to after sign-in. */
export function safeNext(next: unknown, base: string): string {
  // Printable ASCII only: anything else cannot go into a Location header (a 500), and a real
  // portal path never needs it (the browser sends it percent-encoded).
  if (typeof next !== 'string' || !/^[\x21-\x7e]+$/.test(next)) return base;
  if (next.includes('//') || next.includes('\\')) return base;
  if (next === base) return next;
  return next.startsWith(`${base}/`) || next.startsWith(`${base}?`) ? next : base;
}
