/**
 * A portal form that spends money (buying minutes) must act once however often it is sent: a
 * double click, a refresh of the POST, the back button. Each rendered form carries a new random
 * key (`newFormKey`); the POST uses it as the Idempotency-Key of the service call, in a namespace
 * of the signed-in user (`portal:{user id}:{key}`), so the same form sent again answers the first
 * result, and a key lifted from another user's page is a different key here (it never replays or
 * resumes that user's purchase). As in the console (src/console/once.ts), the service stores the
 * answer in the transaction that makes the change; a failure releases the key, and the service
 * finds the key's earlier attempt itself (a declined top-up answers declined again, a pending one
 * is resumed with the same processor key), so nothing is charged twice.
 */
import { randomBytes } from 'node:crypto';
import { ApiError } from '../core/errors.js';
import { fingerprintOf, type IdempotencyClaim, type IdempotencyStore } from '../core/idempotency.js';

const FORM_KEY = /^[A-Za-z0-9_-]{16,64}$/;

/** The hidden field's value: a new random key each time the form is rendered. */
export function newFormKey(): string {
  return randomBytes(18).toString('base64url');
}

export const isFormKey = (value: string | undefined): value is string =>
  value !== undefined && FORM_KEY.test(value);

/**
 * Runs `run` once per (user, form key): the first post runs, a repeat with the same fields gets the
 * stored result (`replayed`), the same key with other fields is 409 idempotency_key_reuse, and a
 * repeat while the first still runs waits for it (then 409 conflict if it does not finish).
 */
export async function oncePerUserFormKey<Result>(
  store: IdempotencyStore,
  options: { tenantId: string; userId: string; formKey: string; action: string; fields: unknown },
  run: (claim: IdempotencyClaim) => Promise<Result>,
  replayed: (body: unknown) => Result,
): Promise<Result> {
  const { tenantId } = options;
  if (!isFormKey(options.formKey)) throw new Error('oncePerUserFormKey needs a form key');
  const key = `portal:${options.userId}:${options.formKey}`;
  const begun = await store.begin(tenantId, key, fingerprintOf('POST', options.action, options.fields));
  if (begun.kind === 'replay') return replayed(begun.response.body);
  if (begun.kind === 'reuse') {
    throw new ApiError('idempotency_key_reuse', 'This form was already sent with other values.');
  }
  if (begun.kind === 'busy') {
    throw new ApiError('conflict', 'This form is still being processed.');
  }
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
