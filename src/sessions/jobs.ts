import { defineJob, type JobDefinition } from '../core/jobs/definitions.js';
import type { Job } from '../core/jobs/types.js';
import { PasswordResetJobPayload } from './schemas.js';
import { PASSWORD_RESET_QUEUE } from './service.js';

export function sessionJobs(sessions: {
  issuePasswordReset(job: Job<PasswordResetJobPayload>): Promise<void>;
}): JobDefinition[] {
  return [
    defineJob({
      queue: PASSWORD_RESET_QUEUE,
      payload: PasswordResetJobPayload,
      handle: (job) => sessions.issuePasswordReset(job),
    }),
  ];
}
