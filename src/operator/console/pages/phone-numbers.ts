/**
 * Phone numbers (docs/operator-console.md, "Phone numbers"): every number the platform holds, by
 * tenant and engine; for admins, importing a number the voice engine holds, reassigning it to
 * another tenant and releasing it. Each form goes through the phone-numbers service, the same as
 * POST, PATCH and DELETE /admin/v1/phone-numbers, so it is refused exactly when the API refuses.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../core/errors.js';
import { ImportPhoneNumberBody, ReassignPhoneNumberBody } from '../../../phone-numbers/schemas.js';
import {
  actionButton,
  dateTime,
  emptyState,
  input,
  inputField,
  namedIssue,
  pager,
  select,
} from '../../../web/components.js';
import { type Flash, fieldIssues, formOf, textField, validated } from '../../../web/forms.js';
import { html } from '../../../web/html.js';
import { redirectWithFlash } from '../cookies.js';
import { can, csrfField, sendPage } from '../layout.js';
import { operatorPages } from '../plugin.js';

const PAGE_SIZE = 25;
const ENGINES = ['simulated', 'vapi', 'retell'];
const BASE = '/operator/phone-numbers';

type Query = { Querystring: Record<string, string | undefined> };
type Params = { Params: { number: string } };

/** A refused form shown again: which form (the import, or the number reassigned), what was typed, the issues. */
interface FormState {
  form?: string;
  values?: Record<string, string | undefined>;
  errors?: Record<string, string>;
  status?: number;
  flash?: Flash;
}

const pathOf = (phoneNumber: string) => `${BASE}/${encodeURIComponent(phoneNumber)}`;

export const operatorPhoneNumberPages = operatorPages(
  ['phoneNumbers', 'tenants'],
  async (app, { phoneNumbers, tenants }) => {
    async function listPage(request: FastifyRequest, reply: FastifyReply, form: FormState = {}) {
      const query = request.query as Record<string, string | undefined>;
      const tenantId = query.tenant_id?.trim() || undefined;
      const engine = ENGINES.includes(query.engine ?? '') ? query.engine : undefined;
      const page = Math.max(1, Number.parseInt(query.page ?? '1', 10) || 1);
      const [numbers, known] = await Promise.all([
        phoneNumbers.list({ page, limit: PAGE_SIZE, tenant_id: tenantId, engine }),
        tenants.list({ page: 1, limit: 100, sort_by: 'name', sort_order: 'asc' }),
      ]);
      const names = await tenants.namesOf(numbers.data.map((number) => number.tenant_id));
      const admin = can(request, 'admin');
      const csrf = csrfField(reply);
      const tenantChoices = html`<datalist id="tenant-ids">${known.data.map(
        (tenant) => html`<option value="${tenant.id}">${tenant.name}</option>`,
      )}</datalist>`;

      const rows = numbers.data.map((number, index) => {
        const mine = form.form === number.phone_number;
        const reassignId = `reassign-${index}`;
        return html`<tr>
  <td><code>${number.phone_number}</code>${number.label && html`<br><span class="subtle">${number.label}</span>`}</td>
  <td><a href="/operator/tenants/${number.tenant_id}">${names.get(number.tenant_id) ?? number.tenant_id}</a></td>
  <td>${number.engine}</td>
  <td>${number.inbound_agent_id ? html`<code>${number.inbound_agent_id}</code>` : html`<span class="subtle">none</span>`}</td>
  <td>${dateTime(number.created_at)}</td>
  ${
    admin &&
    html`<td class="actions actions-stack">
    <form method="post" action="${pathOf(number.phone_number)}/reassign" class="inline-form" data-confirm="${`Move ${number.phone_number} to another tenant? Its inbound agent and label are cleared.`}">${csrf}
      <label for="${reassignId}" class="visually-hidden">New tenant for ${number.phone_number}</label>
      ${input({ id: reassignId, name: 'tenant_id', placeholder: 'New tenant id', value: mine ? form.values?.tenant_id : undefined, error: mine ? form.errors?.tenant_id : undefined, attributes: html`list="tenant-ids" autocomplete="off"` })}
      ${mine && form.errors?.tenant_id && html`<p class="error" id="${reassignId}-error">${namedIssue('The tenant id', form.errors.tenant_id)}</p>`}
      <button class="button button-small" type="submit">Reassign</button>
    </form>
    ${actionButton({ action: `${pathOf(number.phone_number)}/release`, label: 'Release', csrf, small: true, tone: 'danger', confirm: `Release ${number.phone_number}? No tenant holds it any more; its past calls keep it.` })}
  </td>`
  }
</tr>`;
      });

      const table =
        rows.length === 0
          ? emptyState({
              title: tenantId || engine ? 'No number matches' : 'No phone numbers yet',
              text:
                tenantId || engine
                  ? 'No number is held by that tenant or engine.'
                  : 'Import a number the voice engine holds to give it to a tenant.',
            })
          : html`<div class="table-wrap" role="region" aria-label="Phone numbers" tabindex="0"><table>
  <thead><tr><th scope="col">Number</th><th scope="col">Tenant</th><th scope="col">Engine</th><th scope="col">Inbound agent</th><th scope="col">Imported</th>${admin && html`<th scope="col">Actions</th>`}</tr></thead>
  <tbody>${rows}</tbody></table></div>
  ${pager({ page, limit: PAGE_SIZE, total: numbers.pagination.total, pages: numbers.pagination.pages, has_more: numbers.pagination.has_more }, BASE, { tenant_id: tenantId, engine })}`;

      const importing = form.form === 'import';
      const importPanel = html`<section class="panel" aria-labelledby="import-title">
  <h2 id="import-title">Import a number</h2>
  <p class="hint">The voice engine must already hold the number; importing points its inbound calls at this platform.</p>
  <form method="post" action="${BASE}">${csrf}
    <div class="form-grid">
      ${inputField({ id: 'phone_number', label: 'Phone number', required: true, value: importing ? form.values?.phone_number : undefined, error: importing ? form.errors?.phone_number : undefined, hint: 'E.164: a plus, the country code and the number, e.g. +14155550100.' })}
      ${inputField({ id: 'tenant_id', label: 'Tenant id', required: true, value: importing ? form.values?.tenant_id : undefined, error: importing ? form.errors?.tenant_id : undefined, hint: 'Type a name to pick from the list.', attributes: html`list="tenant-ids" autocomplete="off"` })}
    </div>
    <div class="form-actions"><button class="button button-primary" type="submit">Import</button></div>
  </form>
</section>`;

      return sendPage(request, reply, {
        title: 'Phone numbers',
        section: 'phone-numbers',
        status: form.status,
        flash: form.flash,
        body: html`${tenantChoices}
<form method="get" action="${BASE}" class="filters" role="search" aria-label="Filter phone numbers">
  <div class="field"><label for="filter-tenant">Tenant id</label><input id="filter-tenant" name="tenant_id" type="search" list="tenant-ids" autocomplete="off" value="${tenantId ?? ''}"></div>
  <div class="field"><label for="filter-engine">Engine</label>${select({ id: 'filter-engine', name: 'engine', selected: engine ?? '', choices: [{ value: '', label: 'Every engine' }, ...ENGINES.map((name) => ({ value: name, label: name }))] })}</div>
  <button class="button" type="submit">Filter</button>
</form>
<section class="panel panel-flush" aria-label="Phone numbers">${table}</section>
${admin ? importPanel : emptyState({ title: 'Read-only', text: 'Your role (support) shows the numbers; an admin imports, reassigns and releases them.' })}`,
      });
    }

    /** Runs a form's change; a refusal (4xx) shows the list again with the form's issues. */
    function form(
      name: (request: FastifyRequest<Params>) => string,
      change: (request: FastifyRequest<Params>, fields: ReturnType<typeof formOf>) => Promise<string>,
    ) {
      return async (request: FastifyRequest<Params>, reply: FastifyReply) => {
        const fields = formOf(request);
        try {
          return redirectWithFlash(reply, BASE, await change(request, fields));
        } catch (error) {
          if (!(error instanceof ApiError) || error.status >= 500) throw error;
          const values = Object.fromEntries(Object.keys(fields).map((key) => [key, textField(fields, key)]));
          return listPage(request, reply, {
            form: name(request),
            values,
            errors: fieldIssues(error),
            status: error.status,
            flash: { kind: 'error', message: error.message },
          });
        }
      };
    }

    app.get<Query>('/phone-numbers', async (request, reply) => listPage(request, reply));

    app.post<Params>(
      '/phone-numbers',
      form(
        () => 'import',
        async (_request, fields) => {
          const body = validated(ImportPhoneNumberBody, {
            phone_number: textField(fields, 'phone_number'),
            tenant_id: textField(fields, 'tenant_id'),
          });
          const number = await phoneNumbers.import(body);
          return `Imported ${number.phone_number} for ${(await tenants.get(number.tenant_id)).name}.`;
        },
      ),
    );

    app.post<Params>(
      '/phone-numbers/:number/reassign',
      form(
        (request) => request.params.number,
        async (request, fields) => {
          const body = validated(ReassignPhoneNumberBody, { tenant_id: textField(fields, 'tenant_id') });
          const number = await phoneNumbers.reassign(request.params.number, body);
          return `${number.phone_number} now belongs to ${(await tenants.get(number.tenant_id)).name}.`;
        },
      ),
    );

    app.post<Params>(
      '/phone-numbers/:number/release',
      form(
        (request) => request.params.number,
        async (request) => {
          const number = await phoneNumbers.release(request.params.number);
          return `${number.phone_number} is released: no tenant holds it any more.`;
        },
      ),
    );
  },
);
