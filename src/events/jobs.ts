import { defineJob, type JobDefinition } from '../core/jobs/definitions.js';
import { deliveryLimit, type EventDelivery } from './delivery.js';
import { DELIVERY_QUEUE } from './repository.js';
import { DeliveryJobPayload } from './schemas.js';

export function eventJobs(delivery: Pick<EventDelivery, 'deliver'>): JobDefinition[] {
  return [
    defineJob({
      queue: DELIVERY_QUEUE,
      payload: DeliveryJobPayload,
      limit: deliveryLimit,
      handle: (job) => delivery.deliver(job),
    }),
  ];
}
