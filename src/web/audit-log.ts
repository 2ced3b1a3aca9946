/**
 * The audit log as a page (docs/audit.md): the filters of GET /api/v1/audit-events as a form and
 * a page of entries as a table. The agency console shows one tenant's; the operator console adds
 * the tenant filter and column.
 */
import { dateTime, emptyState, field, inputField, pager, select } from './components.js';
import { type Html, html } from './html.js';

/** An entry as the API serializes it (audit/schemas.ts). */
export interface AuditEntryView {
  id: string;
  tenant_id: string | null;
  actor: { type: string; id: string };
  action: string;
  object: { type: string; id: string | null };
  fields: string[];
  ip: string | null;
  user_agent: string | null;
  request_id: string | null;
  created_at: string;
}

/** What the filter form holds, as typed (dates as YYYY-MM-DD). */
export interface AuditFilterForm {
  actor_type?: string;
  actor_id?: string;
  action?: string;
  object_id?: string;
  from?: string;
  to?: string;
  tenant_id?: string;
  page?: string;
}

const ACTOR_LABELS: Record<string, string> = {
  api_key: 'API key',
  member: 'Console member',
  operator_token: 'Operator token',
  operator_staff: 'Operator staff',
  cli: 'Command line',
  system: 'Platform',
};

const DAY_MS = 24 * 60 * 60 * 1000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

const trimmed = (value: string | undefined) => value?.trim() || undefined;

/**
 * The API query of the form: blanks left out, the dates widened to whole UTC days (from the
 * start of `from` to the end of `to`); a date that is not one is named in `issues`.
 */
export function auditQueryOf(form: AuditFilterForm): {
  query: Record<string, string | undefined>;
  issues: Record<string, string>;
} {
  const issues: Record<string, string> = {};
  const day = (name: 'from' | 'to', value: string | undefined, shift: number) => {
    const text = trimmed(value);
    if (!text) return undefined;
    const at = DATE.test(text) ? Date.parse(`${text}T00:00:00Z`) : Number.NaN;
    if (Number.isNaN(at)) {
      issues[name] = 'must be a date, like 2026-03-31.';
      return undefined;
    }
    return new Date(at + shift).toISOString();
  };
  return {
    query: {
      actor_type: trimmed(form.actor_type),
      actor_id: trimmed(form.actor_id),
      action: trimmed(form.action),
      object_id: trimmed(form.object_id),
      tenant_id: trimmed(form.tenant_id),
      created_after: day('from', form.from, -1),
      created_before: day('to', form.to, DAY_MS),
    },
    issues,
  };
}

export function auditFilters(options: {
  action: string;
  form: AuditFilterForm;
  issues: Record<string, string>;
  withTenant?: boolean;
}): Html {
  const { form, issues } = options;
  return html`<form method="get" action="${options.action}" class="filters panel" aria-label="Filter the audit log">
  ${options.withTenant && inputField({ id: 'tenant_id', label: 'Tenant id', value: form.tenant_id, placeholder: 'ten_…', error: issues.tenant_id })}
  ${field({
    id: 'actor_type',
    label: 'Actor kind',
    error: issues.actor_type,
    control: select({
      id: 'actor_type',
      choices: [
        { value: '', label: 'Anyone' },
        ...Object.entries(ACTOR_LABELS).map(([value, label]) => ({ value, label })),
      ],
      selected: form.actor_type ?? '',
    }),
  })}
  ${inputField({ id: 'actor_id', label: 'Actor id', value: form.actor_id, placeholder: 'key_… or mem_…', error: issues.actor_id })}
  ${inputField({ id: 'action', label: 'Action', value: form.action, placeholder: 'user.created', error: issues.action })}
  ${inputField({ id: 'object_id', label: 'Object id', value: form.object_id, placeholder: 'usr_…', error: issues.object_id })}
  ${inputField({ id: 'from', label: 'From', type: 'date', value: form.from, error: issues.from ?? issues.created_after })}
  ${inputField({ id: 'to', label: 'To', type: 'date', value: form.to, error: issues.to ?? issues.created_before })}
  <button class="button" type="submit">Filter</button>
  <a class="button button-quiet" href="${options.action}">Clear</a>
</form>`;
}

export function auditTable(options: {
  path: string;
  result: {
    data: AuditEntryView[];
    pagination: Parameters<typeof pager>[0];
  };
  form: AuditFilterForm;
  filtered: boolean;
  /** The operator's column: each entry's tenant, by name where known, linked to its page. */
  withTenant?: { names: Map<string, string> };
}): Html {
  const { result } = options;
  if (result.pagination.total === 0) {
    return html`<div class="panel">${
      options.filtered
        ? emptyState({
            title: 'No entries match',
            text: 'Nothing recorded matches these filters: widen the dates or clear a filter.',
          })
        : emptyState({
            title: 'Nothing recorded yet',
            text: 'Every change made with an API key, in the console or by the operator appears here, kept 400 days.',
          })
    }</div>`;
  }
  const { page: _page, ...query } = options.form;
  return html`<section class="panel panel-flush" aria-label="Audit log entries">
  <div class="table-wrap" role="region" aria-label="Audit log entries" tabindex="0"><table>
    <thead><tr><th scope="col">When</th>${options.withTenant && html`<th scope="col">Tenant</th>`}<th scope="col">Actor</th><th scope="col">Action</th><th scope="col">Object</th><th scope="col">Fields</th><th scope="col">From</th></tr></thead>
    <tbody>
    ${result.data.map(
      (entry) => html`<tr>
      <td>${dateTime(entry.created_at)}</td>
      ${options.withTenant && html`<td>${tenantCell(entry.tenant_id, options.withTenant.names)}</td>`}
      <td>${ACTOR_LABELS[entry.actor.type] ?? entry.actor.type}<br><span class="mono subtle">${entry.actor.id}</span></td>
      <td class="mono">${entry.action}</td>
      <td>${entry.object.type}${entry.object.id && html`<br><span class="mono subtle">${entry.object.id}</span>`}</td>
      <td>${entry.fields.length > 0 ? entry.fields.join(', ') : html`<span class="subtle">—</span>`}</td>
      <td>${entry.ip ?? html`<span class="subtle">—</span>`}${entry.request_id && html`<br><span class="mono subtle" title="Request id">${entry.request_id}</span>`}</td>
    </tr>`,
    )}
    </tbody>
  </table></div>
  ${pager(result.pagination, options.path, query)}
</section>`;
}

function tenantCell(tenantId: string | null, names: Map<string, string>): Html {
  if (tenantId === null) return html`<span class="subtle">platform</span>`;
  const name = names.get(tenantId);
  return name
    ? html`<a href="/operator/tenants/${tenantId}" title="${tenantId}">${name}</a>`
    : html`<a class="mono" href="/operator/tenants/${tenantId}">${tenantId}</a>`;
}
