/**
 * Forms that create something must survive a browser refresh: POST → 303 → GET, so reloading the
 * result page never posts again.
 *
 * - A secret shown once (an API key, a webhook signing secret) waits for its result page in a
 *   short-lived HttpOnly cookie scoped to that page's path, sealed with the secret box and bound
 *   to the session and the path; the page takes it and deletes it, so a second visit shows nothing.
 * - A form that starts something (a test call) carries a random key per rendered form, used
 *   exactly like the API's Idempotency-Key: posting the same form again answers the first result.
 */
import { randomBytes } from 'node:crypto';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../core/errors.js';
import { fingerprintOf, type IdempotencyClaim, type IdempotencyStore } from '../core/idempotency/store.js';
import type { SecretBox } from '../core/security/secrets.js';
import { cookieOptions } from './cookies.js';

const ONCE_COOKIE = 'vp_once';
/** Time enough to follow the redirect; a result page not reached by then shows nothing. */
const ONCE_SECONDS = 300;

function contextOf(request: FastifyRequest, path: string): string {
  return `console-once:${request.consoleSession?.sessionId ?? 'none'}:${path}`;
}

/** Keeps `value` for the next GET of `path` by this session only (then it is gone). */
export function keepForOnce(
  request: FastifyRequest,
  reply: FastifyReply,
  secrets: SecretBox,
  path: string,
  value: unknown,
): void {
  const sealed = secrets.seal(JSON.stringify(value), contextOf(request, path));
  reply.setCookie(ONCE_COOKIE, sealed, { ...cookieOptions(ONCE_SECONDS), path });
}

/** What `keepForOnce` left for this page, taken away; undefined on a second visit. */
export function takeOnce<Value>(
  request: FastifyRequest,
  reply: FastifyReply,
  secrets: SecretBox,
  path: string,
): Value | undefined {
  const sealed = request.cookies[ONCE_COOKIE];
  if (!sealed) return undefined;
  reply.clearCookie(ONCE_COOKIE, { path });
  try {
    return JSON.parse(secrets.open(sealed, contextOf(request, path))) as Value;
  } catch {
    return undefined;
  }
}

/** The hidden field of a form that must not act twice: a new random key each time it is rendered. */
export function newFormKey(): string {
  return randomBytes(18).toString('base64url');
}

const FORM_KEY = /^[A-Za-z0-9_-]{16,64}$/;

/** A value `newFormKey` could have made. */
export const isFormKey = (value: string | undefined): value is string =>
  value !== undefined && FORM_KEY.test(value);

/**
 * Runs `run` once per form key, as the API runs a request with an Idempotency-Key: the first post
 * runs (its answer is stored by the service with its change), a repeat gets the stored result.
 * Without a usable key, `run` simply runs.
 */
export async function oncePerFormKey<Result>(
  store: IdempotencyStore,
  options: { tenantId: string; formKey: string | undefined; path: string; fields: unknown },
  run: (claim: IdempotencyClaim | undefined) => Promise<Result>,
  replayed: (body: unknown) => Result,
): Promise<Result> {
  const { tenantId, formKey } = options;
  if (!isFormKey(formKey)) return run(undefined);
  return onceUnderKey(
    store,
    {
      tenantId,
      key: `console:${formKey}`,
      path: options.path,
      fields: options.fields,
      reuse: 'This form was already sent with other values; reload the page.',
      busy: 'This form is still being processed; wait a moment and reload the page.',
    },
    run,
    replayed,
  );
}

/**
 * The idempotency store's protocol for one form post under `key` (the console's and the portal's
 * forms): a repeat with the same fields gets the stored result (`replayed`), other fields are 409
 * idempotency_key_reuse, a repeat while the first still runs 409 conflict; a failure releases the key.
 */
export async function onceUnderKey<Result>(
  store: IdempotencyStore,
  options: { tenantId: string; key: string; path: string; fields: unknown; reuse: string; busy: string },
  run: (claim: IdempotencyClaim) => Promise<Result>,
  replayed: (body: unknown) => Result,
): Promise<Result> {
  const { tenantId, key } = options;
  const begun = await store.begin(tenantId, key, fingerprintOf('POST', options.path, options.fields));
  if (begun.kind === 'replay') return replayed(begun.response.body);
  if (begun.kind === 'reuse') throw new ApiError('idempotency_key_reuse', options.reuse);
  if (begun.kind === 'busy') throw new ApiError('conflict', options.busy);
  const claim: IdempotencyClaim = {
    tenantId,
    key,
    owner: begun.owner,
    recoveryPoint: begun.recoveryPoint,
    recoveryData: begun.recoveryData,
    recorded: false,
  };
  try {
    return await run(claim);
  } catch (error) {
    await store.release(claim).catch(() => {});
    throw error;
  } finally {
    store.finish(claim);
  }
}
