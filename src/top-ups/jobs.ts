import { Type } from '@sinclair/typebox';
import { defineTenantJob, type JobDefinition } from '../core/jobs/definitions.js';
import { TOP_UP_RECONCILE_QUEUE } from './charges.js';
import type { TopUpService } from './service.js';

/** The `top_ups.reconcile` job: settle a charge whose outcome a crash or a timeout left unknown. */
const TopUpReconcilePayload = Type.Object({ top_up_id: Type.String() });

export function topUpJobs(topUps: Pick<TopUpService, 'reconcile'>): JobDefinition[] {
  return [
    defineTenantJob({
      queue: TOP_UP_RECONCILE_QUEUE,
      payload: TopUpReconcilePayload,
      handle: (job) => topUps.reconcile(job.tenantId, job.payload.top_up_id),
    }),
  ];
}
