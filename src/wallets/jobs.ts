import { defineTenantJob, type JobDefinition, type TenantJob } from '../core/jobs/definitions.js';
import { REFILL_QUEUE } from './repository.js';
import { RefillPlan } from './schemas.js';

export function walletJobs(wallets: { refill(job: TenantJob<RefillPlan>): Promise<void> }): JobDefinition[] {
  return [
    defineTenantJob({ queue: REFILL_QUEUE, payload: RefillPlan, handle: (job) => wallets.refill(job) }),
  ];
}
