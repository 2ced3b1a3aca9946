import { Type } from '@sinclair/typebox';
import { defineTenantJob, type JobDefinition } from '../core/jobs/definitions.js';
import { OVERAGE_INVOICE_QUEUE, type OverageInvoicing } from './service.js';

/** The `overage.invoice` job: bill one period's overage at the processor, once. */
const OverageInvoicePayload = Type.Object({ overage_charge_id: Type.String() });

export function overageJobs(overage: Pick<OverageInvoicing, 'invoice'>): JobDefinition[] {
  return [
    defineTenantJob({
      queue: OVERAGE_INVOICE_QUEUE,
      payload: OverageInvoicePayload,
      handle: (job) => overage.invoice(job.tenantId, job.payload.overage_charge_id),
    }),
  ];
}
