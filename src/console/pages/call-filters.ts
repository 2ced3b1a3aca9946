/** The calls list's filters in the console (calls.ts): the query as typed, as the API's filters, as a link. */

export interface ListQuery {
  page?: string;
  agent_id?: string;
  user_id?: string;
  status?: string;
  created_after?: string;
  created_before?: string;
  direction?: string;
  /** Only the calls to this number (the phone numbers page links here). */
  to?: string;
}

/** A `datetime-local` value (read as UTC) or a full timestamp, as the API's date-time. */
function timestampOf(value: string | undefined): string | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  if (/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(text)) return `${text}:00Z`;
  if (/^\d{4}-\d{2}-\d{2}$/.test(text)) return `${text}T00:00:00Z`;
  return text;
}

/** The API's timestamp back as the `datetime-local` value the filter shows. */
export function localValue(value: string | undefined): string | undefined {
  const text = value?.trim();
  if (!text) return undefined;
  const match = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2})/.exec(text);
  return match ? match[1] : text;
}

/** The list's filters as the API names them; blank ones left out. */
export function filtersOf(q: ListQuery) {
  return {
    agent_id: q.agent_id?.trim() || undefined,
    user_id: q.user_id?.trim() || undefined,
    status: q.status?.trim() || undefined,
    direction: q.direction?.trim() || undefined,
    created_after: timestampOf(q.created_after),
    created_before: timestampOf(q.created_before),
  };
}

/** The filters' query string (for the export link): what the member typed, blanks left out. */
export function filterQuery(q: ListQuery): string {
  const params = new URLSearchParams();
  for (const name of [
    'agent_id',
    'user_id',
    'status',
    'direction',
    'to',
    'created_after',
    'created_before',
  ] as const) {
    const value = q[name]?.trim();
    if (value) params.set(name, value);
  }
  const text = params.toString();
  return text ? `?${text}` : '';
}
