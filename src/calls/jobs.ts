import { Type } from '@sinclair/typebox';
import { defineJob, type JobDefinition } from '../core/jobs/definitions.js';
import type { Job } from '../core/jobs/types.js';
import { ENGINE_CHECK_QUEUE, type EngineCheckPayload } from './engine-dials.js';
import { type CallJobPayload, PROGRESS_QUEUE } from './pipeline.js';
import { DISPATCH_QUEUE } from './placement.js';

/** The call the job is about (dispatch, progress and the engine backstop all name one). */
const CallRef = Type.Object({ callId: Type.String(), tenantId: Type.String() });

export function callJobs(deps: {
  pipeline: {
    dispatch(job: Job<CallJobPayload>): Promise<void>;
    progress(job: Job<CallJobPayload>): Promise<void>;
  };
  engineReports: { check(job: Job<EngineCheckPayload>): Promise<void> };
}): JobDefinition[] {
  return [
    defineJob({ queue: DISPATCH_QUEUE, payload: CallRef, handle: (job) => deps.pipeline.dispatch(job) }),
    defineJob({ queue: PROGRESS_QUEUE, payload: CallRef, handle: (job) => deps.pipeline.progress(job) }),
    defineJob({
      queue: ENGINE_CHECK_QUEUE,
      payload: CallRef,
      handle: (job) => deps.engineReports.check(job),
    }),
  ];
}
