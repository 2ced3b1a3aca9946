/** The audit entries of agents (docs/audit.md): one per create, update, publish, rotation, delete. */
import type { AuditChange } from '../core/audit/record.js';

export function agentChange(
  action: string,
  tenantId: string,
  agentId: string,
  fields: string[],
  at: Date,
): AuditChange {
  return { action, tenantId, objectType: 'agent', objectId: agentId, fields, at };
}
