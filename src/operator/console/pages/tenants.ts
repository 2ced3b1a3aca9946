/**
 * Tenants: search by name or id, and a new tenant with its first owner, whose generated password
 * is shown once (as `voiceplane owners create` prints it). The tenant's own page is tenant.ts.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../core/errors.js';
import { randomBase62 } from '../../../core/ids.js';
import { CreateMemberBody } from '../../../members/schemas.js';
import { CreateTenantBody } from '../../../tenants/schemas.js';
import { emptyState, inputField, pager, secretOnce } from '../../../web/components.js';
import { fieldIssues, formOf, textField, validated } from '../../../web/forms.js';
import { type Html, html } from '../../../web/html.js';
import { can, csrfField, sendPage } from '../layout.js';
import { operatorPages } from '../plugin.js';

const PAGE_SIZE = 25;

interface CreateForm {
  values?: Record<string, string | undefined>;
  errors?: Record<string, string>;
  created?: { id: string; name: string; email: string; password: string };
  status?: number;
}

function createPanel(reply: FastifyReply, form: CreateForm): Html {
  return html`<section class="panel" aria-labelledby="create-title">
  <h2 id="create-title">New tenant</h2>
  <form method="post" action="/operator/tenants">
    ${csrfField(reply)}
    <div class="form-grid">
      ${inputField({ id: 'name', label: 'Agency name', required: true, value: form.values?.name, error: form.errors?.name })}
      ${inputField({ id: 'owner_email', label: 'First owner’s email', type: 'email', required: true, value: form.values?.owner_email, error: form.errors?.owner_email ?? form.errors?.email, hint: 'They sign in to the agency console with a password shown once here.' })}
    </div>
    <div class="form-actions"><button class="button button-primary" type="submit">Create tenant</button></div>
  </form>
</section>`;
}

export const operatorTenantPages = operatorPages(
  ['operatorReports', 'tenants', 'members', 'config', 'database'],
  async (app, { operatorReports, tenants, members, config, database }) => {
    async function listPage(
      request: FastifyRequest<{ Querystring: Record<string, string> }>,
      reply: FastifyReply,
      form: CreateForm = {},
    ) {
      const q = (request.query.q ?? '').slice(0, 200);
      const page = Math.max(1, Number.parseInt(request.query.page ?? '1', 10) || 1);
      const { rows, total } = await operatorReports.searchTenants({ q, page, limit: PAGE_SIZE });
      const table =
        rows.length === 0
          ? emptyState({
              title: q ? 'No tenant matches' : 'No tenants yet',
              text: q ? `Nothing is named like “${q}”.` : 'Create the first agency below.',
            })
          : html`<div class="table-wrap" role="region" aria-label="Tenants" tabindex="0"><table>
      <thead><tr><th scope="col">Agency</th><th scope="col">Id</th><th scope="col" class="numeric">Users</th><th scope="col" class="numeric">Wallet (minutes)</th><th scope="col">Created</th></tr></thead>
      <tbody>${rows.map(
        (
          row,
        ) => html`<tr><td><a href="/operator/tenants/${row.id}">${row.name}</a></td><td><code>${row.id}</code></td>
        <td class="numeric">${row.users.toLocaleString('en-US')}</td>
        <td class="numeric">${row.balance_minutes === null ? html`<span class="subtle">unmetered</span>` : row.balance_minutes.toLocaleString('en-US')}</td>
        <td>${row.created_at.toISOString().slice(0, 10)}</td></tr>`,
      )}</tbody></table></div>
      ${pager({ page, limit: PAGE_SIZE, total, pages: Math.ceil(total / PAGE_SIZE), has_more: page * PAGE_SIZE < total }, '/operator/tenants', { q })}`;
      const created = form.created;
      return sendPage(request, reply, {
        title: 'Tenants',
        section: 'tenants',
        status: form.status,
        body: html`${
          created &&
          html`<div class="flash flash-success" role="status">Created <a href="/operator/tenants/${created.id}">${created.name}</a> with its first owner ${created.email}.</div>
        ${secretOnce({ id: 'owner-password', label: 'The owner’s password', value: created.password, note: `Shown only now: pass it on safely with the sign-in address ${config.publicBaseUrl}/console/sign-in.` })}`
        }
        <form method="get" action="/operator/tenants" class="filters" role="search">
          <div class="field"><label for="q">Search by name or id</label><input id="q" name="q" type="search" value="${q}"></div>
          <button class="button" type="submit">Search</button>
        </form>
        <section class="panel panel-flush" aria-label="Tenants">${table}</section>
        ${can(request, 'admin') && createPanel(reply, form)}`,
      });
    }

    app.get<{ Querystring: Record<string, string> }>('/tenants', async (request, reply) =>
      listPage(request, reply),
    );

    app.post<{ Querystring: Record<string, string> }>('/tenants', async (request, reply) => {
      const fields = formOf(request);
      const values = { name: textField(fields, 'name'), owner_email: textField(fields, 'owner_email') };
      const password = randomBase62(20);
      try {
        const tenantBody = validated(CreateTenantBody, { name: values.name });
        const ownerBody = validated(CreateMemberBody, { email: values.owner_email, password, role: 'owner' });
        // One transaction: whatever refuses the owner, no tenant is left without one.
        const { tenant, owner } = await database.db.transaction().execute(async (tx) => {
          const created = await tenants.create(tenantBody, tx);
          return { tenant: created, owner: await members.create(created.id, ownerBody, tx) };
        });
        return listPage(request, reply, {
          created: { id: tenant.id, name: tenant.name, email: owner.email, password },
        });
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        return listPage(request, reply, { values, errors: fieldIssues(error), status: error.status });
      }
    });
  },
);
