/**
 * Revenue: each metered tenant's wholesale minutes and amount in a UTC month (the wallets'
 * usage, as GET /admin/v1/tenants/{id}/wallet/usage answers it), beside the voice engine's own
 * cost of the same tenant's calls where the engine reports it, and the margin between them.
 */
import { formatMoney } from '../../../core/money.js';
import { emptyState } from '../../../web/components.js';
import { html } from '../../../web/html.js';
import { sendPage } from '../layout.js';
import { operatorPages } from '../plugin.js';

const MAX_TENANTS = 200;

export const operatorRevenuePages = operatorPages(
  ['operatorReports', 'wallets', 'clock'],
  async (app, { operatorReports, wallets, clock }) => {
    app.get<{ Querystring: { period?: string } }>('/revenue', async (request, reply) => {
      const current = clock.now().toISOString().slice(0, 7);
      const period = /^\d{4}-(0[1-9]|1[0-2])$/.test(request.query.period ?? '')
        ? (request.query.period as string)
        : current;
      const { rows } = await operatorReports.searchTenants({ page: 1, limit: MAX_TENANTS });
      const costs = await operatorReports.engineCosts(period);
      const usage = await Promise.all(
        rows.map(async (row) => ({ row, used: await wallets.usage(row.id, { period }) })),
      );
      const metered = usage.filter(({ used }) => used.metered || costs.has(used.tenant_id));
      const body =
        metered.length === 0
          ? emptyState({ title: 'Nothing billed', text: `No metered tenant used minutes in ${period}.` })
          : html`<div class="table-wrap" role="region" aria-label="Revenue" tabindex="0"><table>
        <thead><tr><th scope="col">Tenant</th><th scope="col" class="numeric">Calls</th><th scope="col" class="numeric">Wholesale minutes</th><th scope="col" class="numeric">Wholesale amount</th><th scope="col" class="numeric">Engine cost (USD)</th><th scope="col" class="numeric">Margin</th></tr></thead>
        <tbody>${metered.map(({ row, used }) => {
          const cost = costs.get(row.id);
          const amount = used.currency ? formatMoney(used.amount, used.currency) : '—';
          const margin =
            cost !== undefined && used.currency === 'usd'
              ? `${used.amount / 100 - cost >= 0 ? '' : '−'}$${Math.abs(used.amount / 100 - cost).toFixed(2)}`
              : '—';
          return html`<tr><td><a href="/operator/tenants/${row.id}">${row.name}</a></td><td class="numeric">${used.calls.toLocaleString('en-US')}</td>
          <td class="numeric">${used.minutes.toLocaleString('en-US')}</td><td class="numeric">${amount}</td>
          <td class="numeric">${cost === undefined ? '—' : `$${cost.toFixed(2)}`}</td><td class="numeric">${margin}</td></tr>`;
        })}</tbody></table></div>`;
      return sendPage(request, reply, {
        title: 'Revenue',
        section: 'revenue',
        body: html`<form method="get" action="/operator/revenue" class="filters">
          <div class="field"><label for="period">Month</label><input id="period" name="period" type="month" value="${period}"></div>
          <button class="button" type="submit">Show</button>
        </form>
        <p class="hint">Margin: the wholesale amount less the engines’ reported cost, for tenants billed in USD; “—” where an engine reports no cost.</p>
        <section class="panel panel-flush" aria-label="Revenue by tenant">${body}</section>`,
      });
    });
  },
);
