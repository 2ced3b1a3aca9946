/** The audit entries of the members capability (docs/audit.md). */
import type { AuditChange } from '../core/audit/record.js';

/** The audit entry of a change to a console member or invitation. */
export function memberChange(
  action: string,
  tenantId: string,
  memberId: string,
  fields: string[],
  at: Date,
  objectType = 'member',
): AuditChange {
  return { action, tenantId, objectType, objectId: memberId, fields, at };
}
