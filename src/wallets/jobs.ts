import { Type } from '@sinclair/typebox';
import { defineTenantJob, type JobDefinition, type TenantJob } from '../core/jobs/definitions.js';
import { REFILL_QUEUE, WALLET_RESTORED_QUEUE } from './repository.js';
import { RefillPlan } from './schemas.js';

/**
 * `wallets.restored` is handed to what waits for a tenant's wholesale minutes (campaigns paused for
 * lack of them), which the composition root names.
 */
export function walletJobs(
  wallets: { refill(job: TenantJob<RefillPlan>): Promise<void> },
  hooks: { restored(tenantId: string): Promise<void> },
): JobDefinition[] {
  return [
    defineTenantJob({ queue: REFILL_QUEUE, payload: RefillPlan, handle: (job) => wallets.refill(job) }),
    defineTenantJob({
      queue: WALLET_RESTORED_QUEUE,
      payload: Type.Object({}),
      handle: (job) => hooks.restored(job.tenantId),
    }),
  ];
}
