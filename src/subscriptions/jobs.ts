import { defineTenantJob, type JobDefinition } from '../core/jobs/definitions.js';
import { PERIOD_QUEUE } from './periods.js';
import { RECONCILE_QUEUE } from './processor-change.js';
import { PROCESSOR_CANCEL_QUEUE } from './renewals.js';
import { PeriodJobPayload, ProcessorCancelJobPayload, ReconcileJobPayload } from './schemas.js';
import type { SubscriptionService } from './service.js';

export function subscriptionJobs(
  subscriptions: Pick<SubscriptionService, 'advance' | 'reconcile' | 'cancelAtProcessor'>,
): JobDefinition[] {
  return [
    defineTenantJob({
      queue: PERIOD_QUEUE,
      payload: PeriodJobPayload,
      handle: (job) => subscriptions.advance(job.tenantId, job.payload.subscription_id),
    }),
    defineTenantJob({
      queue: RECONCILE_QUEUE,
      payload: ReconcileJobPayload,
      handle: (job) => subscriptions.reconcile(job.tenantId, job.payload.operation_id),
    }),
    defineTenantJob({
      queue: PROCESSOR_CANCEL_QUEUE,
      payload: ProcessorCancelJobPayload,
      handle: (job) =>
        subscriptions.cancelAtProcessor(
          job.tenantId,
          job.payload.subscription_id,
          job.payload.provider_subscription_id,
        ),
    }),
  ];
}
