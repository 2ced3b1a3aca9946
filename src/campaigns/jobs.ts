import { Type } from '@sinclair/typebox';
import { CAMPAIGN_CALL_ENDED_QUEUE } from '../calls/campaign-ends.js';
import { defineJob, defineTenantJob, type JobDefinition } from '../core/jobs/definitions.js';
import type { Job } from '../core/jobs/types.js';
import { CAMPAIGN_TICK_QUEUE, type TickPayload } from './scheduler.js';

/** One tick of a campaign's chain; `token` names the live chain (a stale tick does nothing). */
const TickJobPayload = Type.Object({
  tenantId: Type.String(),
  campaignId: Type.String(),
  token: Type.String(),
});

/** One of the campaign's calls ended (queued by the statement that ended it, calls/campaign-ends.ts). */
const CallEndedPayload = Type.Object({ campaignId: Type.String() });

export function campaignJobs(scheduler: {
  tick(job: Job<TickPayload>): Promise<void>;
  callEnded(tenantId: string, campaignId: string): Promise<void>;
}): JobDefinition[] {
  return [
    defineJob({ queue: CAMPAIGN_TICK_QUEUE, payload: TickJobPayload, handle: (job) => scheduler.tick(job) }),
    defineTenantJob({
      queue: CAMPAIGN_CALL_ENDED_QUEUE,
      payload: CallEndedPayload,
      handle: (job) => scheduler.callEnded(job.tenantId, job.payload.campaignId),
    }),
  ];
}
