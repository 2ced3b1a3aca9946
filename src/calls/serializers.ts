/** A call's own fields, from its row: the base of the partner's and the operator's views. */
import type { CallRow } from './repository.js';
import type { Call, CallListItem, OperatorCall } from './schemas.js';

export function toCall(row: CallRow): Call {
  return {
    id: row.id,
    agent_id: row.agent_id,
    agent_version: row.agent_version,
    user_id: row.user_id,
    direction: row.direction,
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

/** Who answered, the analysis and the transfer, as partners see them (docs/calls.md, "Outcomes"). */
export function outcomeOf(row: CallRow): Pick<CallListItem, 'answered_by' | 'analysis' | 'transferred_to'> {
  return {
    answered_by: row.answered_by ?? 'unknown',
    analysis: row.analysis ?? { summary: null, successful: null, data: null },
    transferred_to: row.transferred_to,
  };
}

/** The operator's view: the call, its outcome, and the engine's own cost and duration. */
export function toOperatorCall(row: CallRow): OperatorCall {
  return {
    ...toCall(row),
    ...outcomeOf(row),
    ended_reason: row.ended_reason,
    engine_cost_usd: row.engine_cost_usd,
    engine_duration_seconds: row.engine_duration_seconds,
  };
}
