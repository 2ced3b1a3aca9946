/**
 * One tenant as the operator sees it: its numbers (users, calls this month), members, plans,
 * wallet and its ledger, failing webhook endpoints, branding and domains; and, for admins and
 * owners, the forms that change them (tenant-forms.ts renders them, tenant-actions.ts takes them).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { badge, dateTime, emptyState, statusBadge } from '../../../web/components.js';
import { type Html, html } from '../../../web/html.js';
import { can, sendPage } from '../layout.js';
import { operatorPages } from '../plugin.js';
import { tenantActions } from './tenant-actions.js';
import { type FormState, settingsForms } from './tenant-forms.js';

const number = (value: number) => value.toLocaleString('en-US');

function table(caption: string, headers: string[], rows: Html[], empty: string): Html {
  const id = caption.toLowerCase().replace(/[^a-z]+/g, '-');
  return html`<section class="panel panel-flush" aria-labelledby="${id}">
  <div class="panel-header"><h2 id="${id}">${caption}</h2></div>
  ${
    rows.length === 0
      ? html`<p class="panel-note subtle">${empty}</p>`
      : html`<div class="table-wrap" role="region" aria-labelledby="${id}" tabindex="0"><table><thead><tr>${headers.map((h) => html`<th scope="col">${h}</th>`)}</tr></thead><tbody>${rows}</tbody></table></div>`
  }
</section>`;
}

export const operatorTenantPage = operatorPages(
  [
    'tenants',
    'members',
    'plans',
    'wallets',
    'events',
    'branding',
    'operatorReports',
    'suspension',
    'idempotency',
  ],
  async (app, services) => {
    const { tenants, members, plans, wallets, events, branding, operatorReports } = services;

    async function tenantPage(
      request: FastifyRequest,
      reply: FastifyReply,
      tenantId: string,
      form: FormState = {},
    ) {
      const tenant = await tenants.get(tenantId);
      const suspended = tenant.suspended_at !== null;
      const [counts, team, planPage, wallet, ledger, endpoints, brand, domains] = await Promise.all([
        operatorReports.tenantCounts(tenantId),
        members.list(tenantId),
        plans.list(tenantId, {
          page: 1,
          limit: 50,
          active: 'false',
          sort_by: 'created_at',
          sort_order: 'desc',
        }),
        wallets.get(tenantId),
        wallets.ledger(tenantId, { page: 1, limit: 20 }),
        events.list(tenantId, { page: 1, limit: 100 }),
        branding.get(tenantId),
        branding.listDomains(tenantId),
      ]);
      const failing = endpoints.data.filter((endpoint) => endpoint.failing_since !== null);
      const stats = html`<div class="stats">
  <div class="stat"><p class="stat-label">Users</p><p class="stat-value">${number(counts.users)}</p></div>
  <div class="stat"><p class="stat-label">Calls this month</p><p class="stat-value">${number(counts.calls_this_month)}</p></div>
  <div class="stat"><p class="stat-label">Wallet</p><p class="stat-value">${wallet.metered ? `${number(wallet.balance_minutes ?? 0)} min` : 'Unmetered'}</p></div>
  <div class="stat"><p class="stat-label">Status</p><p class="stat-value">${suspended ? badge('Suspended', 'danger') : badge('Active', 'success')}</p></div>
</div>`;
      const memberRows = team.map(
        (member) =>
          html`<tr><td>${member.email}</td><td>${badge(member.role, member.role === 'owner' ? 'accent' : 'neutral')}</td><td>${member.totp_enabled ? 'On' : 'Off'}</td><td>${dateTime(member.created_at)}</td></tr>`,
      );
      const planRows = planPage.data.map(
        (plan) =>
          html`<tr><td>${plan.name}</td><td>${plan.active ? statusBadge('active') : statusBadge('archived')}</td><td>${plan.provider}</td><td class="numeric">${(plan.monthly_price / 100).toFixed(2)} ${plan.currency.toUpperCase()}</td></tr>`,
      );
      const ledgerRows = ledger.data.map(
        (entry) =>
          html`<tr><td>${dateTime(entry.created_at)}</td><td>${entry.reason}</td><td class="numeric">${number(entry.minutes)}</td><td class="numeric">${entry.wholesale_rate}</td><td>${entry.note ?? entry.reference ?? ''}</td></tr>`,
      );
      const endpointRows = failing.map(
        (endpoint) =>
          html`<tr><td><code>${endpoint.url}</code></td><td>${dateTime(endpoint.failing_since)}</td><td>${endpoint.enabled ? 'Enabled' : 'Disabled'}</td></tr>`,
      );
      return sendPage(request, reply, {
        title: tenant.name,
        section: 'tenants',
        parent: { href: '/operator/tenants', label: 'Tenants' },
        status: form.status,
        flash: form.flash,
        body: html`<p class="subtle"><code>${tenant.id}</code> · created ${dateTime(tenant.created_at)}</p>
        ${stats}
        ${table('Members', ['Email', 'Role', 'Two-factor', 'Joined'], memberRows, 'No members: the tenant has no one who can sign in to its console.')}
        ${table('Plans', ['Name', 'Status', 'Billing', 'Monthly price'], planRows, 'No plans yet.')}
        ${table('Wallet ledger', ['When', 'Reason', 'Minutes', 'Rate', 'Note'], ledgerRows, wallet.metered ? 'No entries yet.' : 'The tenant is unmetered: no wallet.')}
        ${table('Failing webhook endpoints', ['URL', 'Failing since', 'State'], endpointRows, 'Every webhook endpoint answers.')}
        ${
          can(request, 'admin')
            ? settingsForms(reply, { tenant, wallet, suspended, brand, domains }, form)
            : emptyState({
                title: 'Read-only',
                text: 'Your role (support) shows the tenant; an admin changes it.',
              })
        }`,
      });
    }

    app.get<{ Params: { id: string } }>('/tenants/:id', async (request, reply) =>
      tenantPage(request, reply, request.params.id),
    );
    await tenantActions(app, services, tenantPage);
  },
);
