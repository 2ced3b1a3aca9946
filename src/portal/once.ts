/**
 * A portal form that spends money (buying minutes) must act once however often it is sent: a
 * double click, a refresh of the POST, the back button. Each rendered form carries a new random
 * key (`newFormKey`); the POST uses it as the Idempotency-Key of the service call, in a namespace
 * of the signed-in user (`portal:{user id}:{key}`), so the same form sent again answers the first
 * result, and a key lifted from another user's page is a different key here (it never replays or
 * resumes that user's purchase). As in the console (src/web/once.ts), the service stores the
 * answer in the transaction that makes the change; a failure releases the key, and the service
 * finds the key's earlier attempt itself (a declined top-up answers declined again, a pending one
 * is resumed with the same processor key), so nothing is charged twice.
 */

import type { IdempotencyClaim, IdempotencyStore } from '../core/idempotency/store.js';
import { isFormKey, onceUnderKey } from '../web/once.js';

export { isFormKey, newFormKey } from '../web/once.js';

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
  if (!isFormKey(options.formKey)) throw new Error('oncePerUserFormKey needs a form key');
  return onceUnderKey(
    store,
    {
      tenantId: options.tenantId,
      key: `portal:${options.userId}:${options.formKey}`,
      path: options.action,
      fields: options.fields,
      reuse: 'This form was already sent with other values.',
      busy: 'This form is still being processed.',
    },
    run,
    replayed,
  );
}
