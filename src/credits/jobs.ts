import { Type } from '@sinclair/typebox';
import { defineTenantJob, type JobDefinition } from '../core/jobs/definitions.js';
import { CREDITS_RESTORED_QUEUE } from './repository.js';

/** A user's balance came back above zero (queued by the statement that credited it). */
const CreditsRestoredPayload = Type.Object({ user_id: Type.String() });

/**
 * `credits.restored`: handed to what waits for a user's credits (campaigns paused for lack of
 * them), which the composition root names: credits know nothing of what builds on them.
 */
export function creditJobs(hooks: {
  restored(tenantId: string, userId: string): Promise<void>;
}): JobDefinition[] {
  return [
    defineTenantJob({
      queue: CREDITS_RESTORED_QUEUE,
      payload: CreditsRestoredPayload,
      handle: (job) => hooks.restored(job.tenantId, job.payload.user_id),
    }),
  ];
}
