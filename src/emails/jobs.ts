import { defineTenantJob, type JobDefinition, type TenantJob } from '../core/jobs/definitions.js';
import { EmailJobPayload } from './schemas.js';
import { EMAIL_QUEUE } from './service.js';

export function emailJobs(emails: {
  deliver(job: TenantJob<EmailJobPayload>): Promise<void>;
}): JobDefinition[] {
  return [
    defineTenantJob({ queue: EMAIL_QUEUE, payload: EmailJobPayload, handle: (job) => emails.deliver(job) }),
  ];
}
