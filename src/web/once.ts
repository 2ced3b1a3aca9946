/**
 * Forms that start something (a test call, a purchase) must act once however often they are sent
 * (a double click, a refresh of the POST, the back button): each rendered form carries a random
 * key, used exactly like the API's Idempotency-Key, so posting the same form again answers the
 * first result. (A secret shown once after a redirect waits in a cookie: the console's cookies.ts.)
 */
import { randomBytes } from 'node:crypto';
import { ApiError } from '../core/errors.js';
import { fingerprintOf, type IdempotencyClaim, type IdempotencyStore } from '../core/idempotency/store.js';

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
    store.releaseLater(claim);
    throw error;
  } finally {
    store.finish(claim);
  }
}
