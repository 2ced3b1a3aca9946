/** The fake Retell's calls: list-calls' filters, ids, and signatures at a chosen time. */
import crypto from 'node:crypto';

/** Reasons of calls that never connected (no call_started; call_status not_connected). */
export const NOT_CONNECTED = new Set(
  `dial_no_answer dial_busy dial_failed invalid_destination telephony_provider_permission_denied
   telephony_provider_unavailable sip_routing_error marked_as_spam user_declined registered_call_timeout`.split(
    /\s+/,
  ),
);

/** The list filters the fake applies (list-calls' filter_criteria), each an exact match on a field. */
const LIST_FILTER_FIELDS = ['call_id', 'agent_id', 'call_status', 'from_number', 'to_number'] as const;

/** Whether a call passes list-calls' filter_criteria (the fields the fake implements). */
export function passesListFilters(call: Record<string, any>, criteria: Record<string, any>): boolean {
  for (const field of LIST_FILTER_FIELDS) {
    const allowed = criteria[field];
    if (Array.isArray(allowed) && !allowed.includes(call[field])) return false;
  }
  for (const [path, values] of Object.entries((criteria.metadata ?? {}) as Record<string, string[]>)) {
    const key = path.startsWith('metadata.') ? path.slice('metadata.'.length) : path;
    const value = call.metadata?.[key];
    if (value === undefined || !values.includes(String(value))) return false;
  }
  return true;
}

export const LIST_LIMIT_MAX = 1000;

export const randomId = () => crypto.randomBytes(16).toString('hex');

/** A signature like sign()'s, at a chosen time (sign() always uses now). */
export function signAt(body: string, key: string, timestamp: number): string {
  const digest = crypto
    .createHmac('sha256', key)
    .update(body + timestamp)
    .digest('hex');
  return `v=${timestamp},d=${digest}`;
}
