import { Type } from '@sinclair/typebox';
import { defineJob, type JobDefinition } from '../core/jobs/definitions.js';
import type { Job } from '../core/jobs/types.js';
import { CAMPAIGN_TICK_QUEUE, type TickPayload } from './scheduler.js';

/** One tick of a campaign's chain; `token` names the live chain (a stale tick does nothing). */
const TickJobPayload = Type.Object({ tenantId: Type.String(), campaignId: Type.String(), token: Type.String() });

export function campaignJobs(scheduler: { tick(job: Job<TickPayload>): Promise<void> }): JobDefinition[] {
  return [defineJob({ queue: CAMPAIGN_TICK_QUEUE, payload: TickJobPayload, handle: (job) => scheduler.tick(job) })];
}
