/**
 * Who is calling. Partner routes (`/api/v1`) take a bearer API key and declare the scope they need
 * in `config.scope`; operator routes (`/admin/v1`) take the ADMIN_TOKEN. Credentials never cross
 * surfaces: each check only accepts its own kind of token.
 */
import crypto from 'node:crypto';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { actAs, OPERATOR_TOKEN_ACTOR } from '../audit/context.js';
import { ApiError } from '../errors.js';

/** What a partner API key may be allowed to do; each partner route declares the one it needs. */
export const SCOPES = [
  'users:read',
  'users:write',
  'plans:read',
  'subscriptions:read',
  'subscriptions:write',
  'agents:read',
  'agents:write',
  'calls:read',
  'calls:write',
  'webhooks:read',
  'webhooks:write',
  'audit:read',
] as const;
export type Scope = (typeof SCOPES)[number];

/** A verified API key: whose it is and what it may do. */
export interface ApiKeyPrincipal {
  keyId: string;
  tenantId: string;
  scopes: ReadonlySet<string>;
}

export type VerifyResult =
  | { ok: true; principal: ApiKeyPrincipal }
  | { ok: false; reason: 'malformed' | 'unknown' | 'revoked' | 'expired' | 'suspended' };

/** The refusal every surface of a suspended tenant answers with (docs/operator-console.md). */
export const SUSPENDED_MESSAGE =
  'This account is suspended: the platform has paused its access. Nothing was deleted; contact the platform to lift the suspension.';

export const accountSuspended = () => new ApiError('permission_denied', SUSPENDED_MESSAGE);

/** Checks presented API keys (the api-keys capability implements it). */
export interface KeyVerifier {
  verify(presented: string): Promise<VerifyResult>;
  /** Forgets cached keys (after a revocation in this process). */
  invalidate(): void;
}

declare module 'fastify' {
  interface FastifyContextConfig {
    /** The scope a partner route requires. */
    scope?: Scope;
    /** The rate-limit policy of a non-partner route (partner routes are limited per API key). */
    rateLimit?: 'webhook' | 'sign_in' | 'password_reset';
  }
  interface FastifyRequest {
    principal?: ApiKeyPrincipal;
  }
}

export function bearerToken(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (typeof header !== 'string') return undefined;
  const match = /^Bearer +(\S+) *$/i.exec(header);
  return match?.[1];
}

/** The realm named in every bearer challenge. */
export const BEARER_REALM = 'voiceplane';

/**
 * The `WWW-Authenticate` challenge of a bearer-protected surface (RFC 6750 §3): no error code when
 * the request carried no token, `invalid_token` when the token it carried is not accepted,
 * `insufficient_scope` (with the scope) on a 403 for a token lacking a scope.
 */
export function bearerChallenge(
  error?: 'invalid_token' | 'insufficient_scope',
  scope?: string,
): Record<string, string> {
  let value = `Bearer realm="${BEARER_REALM}"`;
  if (error) value += `, error="${error}"`;
  if (scope) value += `, scope="${scope}"`;
  return { 'www-authenticate': value };
}

/** A 401 `authentication_failed` carrying the bearer challenge for the token the request presented. */
export function bearerRefused(message: string, presentedToken: string | undefined): ApiError {
  return new ApiError('authentication_failed', message, undefined, {
    headers: bearerChallenge(presentedToken === undefined ? undefined : 'invalid_token'),
  });
}

const authenticationFailed = (token: string | undefined) =>
  bearerRefused('A valid API key is required: Authorization: Bearer <key>.', token);

/**
 * Rate limiting of partner requests (src/rate-limits): sets the RateLimit-* headers and throws
 * 429 `rate_limited` when the budget is spent.
 */
export interface PartnerRateLimiter {
  /** A request whose key was verified: counted against that key's budget. */
  authenticated(request: FastifyRequest, reply: FastifyReply, principal: ApiKeyPrincipal): Promise<void>;
  /** A request about to be refused with 401: counted against the client IP's budget instead. */
  rejected(request: FastifyRequest, reply: FastifyReply): Promise<void>;
}

/** Requires a valid partner API key holding the route's scope; sets request.principal. */
export function registerPartnerAuth(
  app: FastifyInstance,
  verifier: KeyVerifier,
  limiter?: PartnerRateLimiter,
): void {
  app.addHook('onRequest', async (request, reply) => {
    const token = bearerToken(request);
    const result = token ? await verifier.verify(token) : undefined;
    if (result?.ok === false && result.reason === 'suspended') {
      await limiter?.rejected(request, reply);
      throw accountSuspended();
    }
    if (!result?.ok) {
      await limiter?.rejected(request, reply);
      throw authenticationFailed(token);
    }
    // Before the scope check and the idempotent replay: both count against the key's budget.
    await limiter?.authenticated(request, reply, result.principal);
    request.principal = result.principal;
    actAs({ type: 'api_key', id: result.principal.keyId });
    const required = request.routeOptions.config.scope;
    if (required && !result.principal.scopes.has(required)) {
      throw new ApiError(
        'permission_denied',
        `This API key lacks the scope ${required}.`,
        { required_scopes: [required] },
        { headers: bearerChallenge('insufficient_scope', required) },
      );
    }
  });
}

/** The tenant of the authenticated partner request. */
export function tenantOf(request: FastifyRequest): string {
  if (!request.principal) throw new Error('tenantOf called on an unauthenticated request');
  return request.principal.tenantId;
}

export function constantTimeEquals(a: string, b: string): boolean {
  const ha = crypto.createHash('sha256').update(a).digest();
  const hb = crypto.createHash('sha256').update(b).digest();
  return crypto.timingSafeEqual(ha, hb);
}

/** Requires `Authorization: Bearer <ADMIN_TOKEN>`; with no ADMIN_TOKEN configured every request fails. */
export function registerAdminAuth(app: FastifyInstance, adminToken: string | undefined): void {
  app.addHook('onRequest', async (request) => {
    const token = bearerToken(request);
    if (!adminToken || !token || !constantTimeEquals(token, adminToken)) {
      throw bearerRefused('A valid operator token is required: Authorization: Bearer <ADMIN_TOKEN>.', token);
    }
    actAs(OPERATOR_TOKEN_ACTOR);
  });
}
