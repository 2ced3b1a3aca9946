/** A call as the operator API shows it (`GET /admin/v1/calls/{id}`), from its row. */
import type { CallRow } from './repository.js';
import type { Call } from './schemas.js';

export function toCall(row: CallRow): Call {
  return {
    id: row.id,
    agent_id: row.agent_id,
    agent_version: row.agent_version,
    user_id: row.user_id,
    from: row.from_number,
    to: row.to_number,
    name: row.name,
    email: row.email,
    context: (row.context ?? {}) as Record<string, unknown>,
    prompt: row.prompt,
    welcome_message: row.welcome_message,
    status: row.status,
    created_at: row.created_at.toISOString(),
    started_at: row.started_at?.toISOString() ?? null,
    ended_at: row.ended_at?.toISOString() ?? null,
    duration_seconds: row.duration_seconds,
    failure_reason: row.failure_reason,
  };
}
