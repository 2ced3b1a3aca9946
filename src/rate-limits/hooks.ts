/**
 * The HTTP edge of rate limiting: one call from buildApp registers
 * - the partner limiter handed to the partner auth hook (per API key; per client IP for 401s),
 * - a global onRequest hook for routes with `config.rateLimit: 'webhook'` (per `agentWebhookId`),
 * - preValidation/onSend hooks for routes with `config.rateLimit: 'sign_in'` (failed sign-ins per
 *   tenant + email and per IP),
 * - preValidation hooks for routes with `config.rateLimit: 'password_reset'` (every reset request,
 *   per tenant + email and per IP),
 * - an onRoute hook that documents the RateLimit-* and Retry-After headers in the OpenAPI document.
 * Every limited answer carries RateLimit-Limit / -Remaining / -Reset, errors and replays included.
 */
import { type TSchema, Type } from '@sinclair/typebox';
import type { FastifyInstance, FastifyReply, FastifyRequest, RouteOptions } from 'fastify';
import { ApiError } from '../core/errors.js';
import type { PartnerRateLimiter } from '../core/http/auth.js';
import type { Charge, RateLimits } from './service.js';
import type { Decision } from './token-bucket.js';

/** The limits that answer 429, as metrics name them (the console's own limits included). */
export const RATE_LIMIT_NAMES = [
  'api_key',
  'unauthenticated',
  'webhook',
  'sign_in',
  'password_reset',
  'console_sign_in',
  'console_totp',
  'console_invitation',
  'operator_sign_in',
  'operator_invitation',
] as const;
export type RateLimitName = (typeof RATE_LIMIT_NAMES)[number];

declare module 'fastify' {
  interface FastifyRequest {
    /** Sign-in buckets this request was counted in; refunded unless the answer is 401. */
    rateLimitCharges?: Charge[];
    /** The limit that refused this request (answered 429), for the metrics. */
    rateLimitRefused?: RateLimitName;
  }
}

const seconds = (ms: number) => Math.ceil(ms / 1000);

function setHeaders(reply: FastifyReply, decision: Decision): void {
  reply.header('ratelimit-limit', String(decision.limit));
  reply.header('ratelimit-remaining', String(decision.remaining));
  reply.header('ratelimit-reset', String(seconds(decision.resetMs)));
}

/** Sets the RateLimit-* headers; throws 429 when the request is over the limit. */
export function enforce(reply: FastifyReply, decision: Decision, limit: RateLimitName, what: string): void {
  setHeaders(reply, decision);
  if (decision.allowed) return;
  reply.request.rateLimitRefused = limit;
  const retryAfter = Math.max(1, seconds(decision.retryAfterMs));
  throw new ApiError('rate_limited', `Too many requests ${what}; retry after ${retryAfter} s.`, undefined, {
    headers: { 'retry-after': String(retryAfter) },
  });
}

export function partnerRateLimiter(limits: RateLimits): PartnerRateLimiter {
  return {
    async authenticated(_request, reply, principal) {
      enforce(reply, await limits.partnerKey(principal), 'api_key', 'for this API key');
    },
    async rejected(request, reply) {
      enforce(
        reply,
        await limits.unauthenticated(request.ip),
        'unauthenticated',
        'with invalid credentials from this address',
      );
    },
  };
}

function stringField(body: unknown, name: string): string | undefined {
  const value = body && typeof body === 'object' ? (body as Record<string, unknown>)[name] : undefined;
  return typeof value === 'string' && value.length <= 1024 ? value : undefined;
}

async function webhookHook(limits: RateLimits, request: FastifyRequest, reply: FastifyReply) {
  const id = (request.params as Record<string, unknown> | undefined)?.agentWebhookId;
  if (typeof id !== 'string') return;
  enforce(reply, await limits.webhook(id), 'webhook', 'for this webhook');
}

async function signInHook(limits: RateLimits, request: FastifyRequest, reply: FastifyReply) {
  const { decision, charges } = await limits.signInAttempt(
    request.ip,
    stringField(request.body, 'tenant_id'),
    stringField(request.body, 'email'),
  );
  request.rateLimitCharges = charges;
  enforce(reply, decision, 'sign_in', 'failed sign-ins for this account or address');
}

async function passwordResetHook(limits: RateLimits, request: FastifyRequest, reply: FastifyReply) {
  const decision = await limits.passwordReset(
    request.ip,
    stringField(request.body, 'tenant_id'),
    stringField(request.body, 'email'),
  );
  enforce(reply, decision, 'password_reset', 'for password resets of this account or from this address');
}

const RATE_LIMIT_HEADERS = {
  'RateLimit-Limit': Type.Integer({
    description: 'Capacity of the bucket: requests that may be sent at once (the burst).',
    examples: [200],
  }),
  'RateLimit-Remaining': Type.Integer({
    description: 'Requests that may be sent right now.',
    examples: [199],
  }),
  'RateLimit-Reset': Type.Integer({ description: 'Seconds until the bucket is full again.', examples: [1] }),
};
const RETRY_AFTER = Type.Integer({
  minimum: 1,
  description: 'Whole seconds to wait before the next request passes.',
  examples: [1],
});

/** Adds the headers to every documented response of a rate-limited route, and explains 429. */
function documentHeaders(routeOptions: RouteOptions, limits: RateLimits): void {
  const policy = routeOptions.config?.rateLimit ?? (routeOptions.config?.scope ? 'partner' : undefined);
  const response = routeOptions.schema?.response as Record<string, TSchema> | undefined;
  if (!policy || !response) return;
  const explanation = {
    webhook: `each webhook id allows ${limits.policies.webhook.perSecond} requests/s with bursts of ${limits.policies.webhook.burst}.`,
    partner: `each API key allows ${limits.policies.partner.perSecond} requests/s with bursts of ${limits.policies.partner.burst} (adjustable per tenant); requests refused with 401 are limited per client address.`,
    sign_in: 'failed sign-ins are limited per tenant and email and per client address.',
    password_reset: 'reset requests are limited per tenant and email and per client address.',
  }[policy];
  // Sign-in and reset limits are taken once the body is parsed: a body the parser refuses
  // (400, 413, 415) is answered before them, without the headers.
  const bodyChecked = policy === 'sign_in' || policy === 'password_reset';
  const documented: Record<string, TSchema> = {};
  for (const [status, schema] of Object.entries(response)) {
    documented[status] =
      bodyChecked && ['400', '413', '415'].includes(status)
        ? schema
        : status === '429'
          ? {
              ...schema,
              description: `Rate limit exceeded (rate_limited): ${explanation} Retry-After gives the seconds to wait.`,
              headers: { ...RATE_LIMIT_HEADERS, 'Retry-After': RETRY_AFTER },
            }
          : { ...schema, headers: { ...RATE_LIMIT_HEADERS, ...(schema.headers as object | undefined) } };
  }
  routeOptions.schema = { ...routeOptions.schema, response: documented };
}

const hookList = (hooks: unknown): unknown[] =>
  hooks === undefined ? [] : Array.isArray(hooks) ? hooks : [hooks];

/**
 * Registers the global hooks (call before any route is added) and returns the partner limiter for
 * the partner auth hook.
 */
export function registerRateLimiting(app: FastifyInstance, limits: RateLimits): PartnerRateLimiter {
  limits.setLogger(app.log);
  // The webhook and sign-in policies are attached to their routes only, so other routes pay nothing.
  app.addHook('onRoute', (routeOptions) => {
    documentHeaders(routeOptions, limits);
    const policy = routeOptions.config?.rateLimit;
    if (policy === 'webhook') {
      const limit = (request: FastifyRequest, reply: FastifyReply) => webhookHook(limits, request, reply);
      routeOptions.onRequest = [...hookList(routeOptions.onRequest), limit] as typeof routeOptions.onRequest;
    } else if (policy === 'sign_in') {
      const limit = (request: FastifyRequest, reply: FastifyReply) => signInHook(limits, request, reply);
      routeOptions.preValidation = [
        ...hookList(routeOptions.preValidation),
        limit,
      ] as typeof routeOptions.preValidation;
    } else if (policy === 'password_reset') {
      const limit = (request: FastifyRequest, reply: FastifyReply) =>
        passwordResetHook(limits, request, reply);
      routeOptions.preValidation = [
        ...hookList(routeOptions.preValidation),
        limit,
      ] as typeof routeOptions.preValidation;
    }
  });
  // Callback style: runs on every answer, and only sign-in answers have anything to refund.
  app.addHook('onSend', (request, reply, payload, done) => {
    const charges = request.rateLimitCharges;
    if (!charges || charges.length === 0 || reply.statusCode === 401) return done(null, payload);
    request.rateLimitCharges = undefined;
    limits.refund(charges).then(
      () => done(null, payload),
      (error: Error) => done(error),
    );
  });
  return partnerRateLimiter(limits);
}
