/** The audit entry of a call placed by a partner's key or a console member (docs/audit.md). */
import { currentAuditScope } from '../core/audit/context.js';
import { recordAudit } from '../core/audit/record.js';
import type { Executor } from '../core/db/database.js';

/**
 * Whether a call is placed in a transaction: to store its idempotent answer, or its audit entry
 * (a request with an actor); the webhook's anonymous calls keep their single statement.
 */
export const needsTransaction = (recorder: unknown): boolean =>
  recorder !== undefined || currentAuditScope()?.actor !== undefined;

export function recordCallCreated(
  executor: Executor,
  tenantId: string,
  callId: string,
  fields: string[],
  createdAt: string,
): Promise<void> {
  return recordAudit(executor, {
    action: 'call.created',
    tenantId,
    objectType: 'call',
    objectId: callId,
    fields,
    at: new Date(createdAt),
  });
}
