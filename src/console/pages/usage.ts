/**
 * Usage in the console (docs/usage.md): every user's month (minutes, calls, amounts), the totals,
 * the agency's margin per currency (retail billed − the wallet's wholesale cost), and the same rows
 * as CSV. Every member may read it. It calls the service of GET /api/v1/usage.
 */
import type { FastifyReply } from 'fastify';
import { type CsvCell, toCsv } from '../../core/csv.js';
import { ApiError } from '../../core/errors.js';
import { formatMoney } from '../../core/money.js';
import type { CurrencyTotals, TenantUsage, UnsettledOverageRow, UsageRow } from '../../usage/service.js';
import { badge, emptyState, inputField } from '../../web/components.js';
import { fieldIssues } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';

interface UsageQuery {
  period?: string;
}

const number = (n: number) => n.toLocaleString('en-US');
const money = (amount: number, currency: string | null) => (currency ? formatMoney(amount, currency) : '—');

function usageTable(report: TenantUsage): Html {
  const { minutes, calls } = report;
  return html`<div class="table-wrap" role="region" aria-label="Usage" tabindex="0"><table class="table-compact">
  <caption class="subtle">Minutes from the credit ledger; amounts in each user’s plan currency.</caption>
  <thead><tr>
    <th scope="col">User</th><th scope="col" class="numeric">Included</th><th scope="col" class="numeric">Used</th>
    <th scope="col" class="numeric">Topped up</th><th scope="col" class="numeric">Overage</th>
    <th scope="col" class="numeric">Balance</th><th scope="col" class="numeric">Calls</th>
    <th scope="col" class="numeric">Top-ups</th><th scope="col" class="numeric">Overage billed</th>
    <th scope="col" class="numeric">Total</th>
  </tr></thead>
  <tbody>
  ${report.rows.map(
    (row: UsageRow) => html`<tr>
    <th scope="row"><a href="/console/users/${row.user_id}">${row.name ?? row.email}</a><br><span class="subtle">${row.email}</span></th>
    <td class="numeric">${number(row.minutes.included)}</td>
    <td class="numeric">${number(row.minutes.used)}</td>
    <td class="numeric">${number(row.minutes.topped_up)}</td>
    <td class="numeric">${number(row.minutes.overage)}</td>
    <td class="numeric">${number(row.minutes.balance)}</td>
    <td class="numeric">${number(row.calls.total)}${row.calls.total > 0 && html`<br><span class="subtle">${row.calls.completed} completed</span>`}</td>
    <td class="numeric">${money(row.amounts.top_ups, row.amounts.currency)}</td>
    <td class="numeric">${money(row.amounts.overage, row.amounts.currency)}</td>
    <td class="numeric"><strong>${money(row.amounts.total, row.amounts.currency)}</strong></td>
  </tr>`,
  )}
  </tbody>
  <tfoot><tr>
    <th scope="row">All users</th>
    <td class="numeric">${number(minutes.included)}</td><td class="numeric">${number(minutes.used)}</td>
    <td class="numeric">${number(minutes.topped_up)}</td><td class="numeric">${number(minutes.overage)}</td>
    <td class="numeric">${number(minutes.balance)}</td><td class="numeric">${number(calls.total)}</td>
    <td class="subtle" colspan="3">${report.currencies.length === 0 ? '—' : 'see the totals above'}</td>
  </tr></tfoot>
</table></div>`;
}

function marginPanel(report: TenantUsage): Html {
  const line = (totals: CurrencyTotals) => html`<tr>
    <th scope="row">${totals.currency.toUpperCase()}</th>
    <td class="numeric">${formatMoney(totals.top_ups, totals.currency)}</td>
    <td class="numeric">${formatMoney(totals.overage, totals.currency)}</td>
    <td class="numeric">${formatMoney(totals.total, totals.currency)}</td>
    <td class="numeric">${totals.wholesale === null ? html`<span class="subtle">not metered</span>` : formatMoney(totals.wholesale, totals.currency)}</td>
    <td class="numeric"><strong>${totals.margin === null ? '—' : formatMoney(totals.margin, totals.currency)}</strong></td>
  </tr>`;
  return html`<section class="panel" aria-labelledby="margin-title">
  <h2 id="margin-title">Totals and margin</h2>
  ${!report.metered && html`<p class="muted">Wholesale not metered: your agency has no wallet, so its cost of calls is not counted.</p>`}
  ${
    report.currencies.length === 0
      ? html`<p class="muted">Nothing was billed this month.</p>`
      : html`<div class="table-wrap" role="region" aria-label="Billed this month" tabindex="0"><table>
  <thead><tr><th scope="col">Currency</th><th scope="col" class="numeric">Top-ups</th><th scope="col" class="numeric">Overage</th>
    <th scope="col" class="numeric">Retail billed</th><th scope="col" class="numeric">Wholesale cost</th><th scope="col" class="numeric">Margin</th></tr></thead>
  <tbody>${report.currencies.map(line)}</tbody>
</table></div>`
  }
  <p class="subtle">Retail billed: top-ups and overage of the month; subscription fees are not included.</p>
</section>`;
}

/** The month's overage the processor did not collect: the agency follows it up with the user. */
export function unsettledPanel(report: TenantUsage): Html {
  if (report.unsettled.length === 0) return html``;
  const line = (charge: UnsettledOverageRow) => html`<tr>
    <th scope="row"><a href="/console/users/${charge.user_id}">${charge.name ?? charge.email}</a></th>
    <td>${charge.period_start.slice(0, 10)} – ${charge.period_end.slice(0, 10)}</td>
    <td class="numeric">${formatMoney(charge.amount, charge.currency)}</td>
    <td>${charge.status === 'unpaid' ? badge('unpaid', 'danger') : badge('failed', 'danger')}</td>
    <td>${charge.message ?? '—'}</td>
  </tr>`;
  return html`<section class="panel" aria-labelledby="unsettled-title">
  <h2 id="unsettled-title">Overage not paid</h2>
  <p class="muted">Unpaid: the card on file was declined and the invoice stays open at the card processor until the
  client pays it (it counts in the overage billed). Failed: the processor refused to bill it (not counted).</p>
  <div class="table-wrap" role="region" aria-label="Overage not paid" tabindex="0"><table class="table-compact">
  <thead><tr><th scope="col">User</th><th scope="col">Period</th><th scope="col" class="numeric">Amount</th>
    <th scope="col">Status</th><th scope="col">Reason</th></tr></thead>
  <tbody>${report.unsettled.map(line)}</tbody>
</table></div>
</section>`;
}

/** The report as CSV rows: a header, one row per user. */
export function usageCsv(report: TenantUsage): string {
  const rows: CsvCell[][] = [
    [
      'user_id',
      'email',
      'name',
      'period',
      'included_minutes',
      'used_minutes',
      'topped_up_minutes',
      'overage_minutes',
      'adjustment_minutes',
      'balance_minutes',
      'calls_completed',
      'calls_no_answer',
      'calls_failed',
      'currency',
      'top_ups_amount',
      'overage_amount',
      'total_amount',
    ],
  ];
  for (const row of report.rows) {
    rows.push([
      row.user_id,
      row.email,
      row.name,
      report.period.key,
      row.minutes.included,
      row.minutes.used,
      row.minutes.topped_up,
      row.minutes.overage,
      row.minutes.adjustments,
      row.minutes.balance,
      row.calls.completed,
      row.calls.no_answer,
      row.calls.failed,
      row.amounts.currency,
      row.amounts.top_ups,
      row.amounts.overage,
      row.amounts.total,
    ]);
  }
  return toCsv(rows);
}

export const usagePages = consolePages(['usage'], async (app, { usage }) => {
  /** The month asked for, or the 422 page's field message when it is not one. */
  async function reportOf(
    tenantId: string,
    period: string | undefined,
  ): Promise<{ report?: TenantUsage; issues: Record<string, string> }> {
    try {
      return { report: await usage.tenantUsage(tenantId, period?.trim() || undefined), issues: {} };
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 422) throw error;
      return { report: undefined, issues: fieldIssues(error) };
    }
  }

  app.get<{ Querystring: UsageQuery }>('/usage', async (request, reply) => {
    const { report, issues } = await reportOf(memberTenantId(request), request.query.period);
    const period = report?.period.key ?? request.query.period;
    const form = html`<form method="get" action="/console/usage" class="filters panel" aria-label="Choose the month">
  ${inputField({ id: 'period', label: 'Month (UTC)', type: 'month', value: period, placeholder: 'YYYY-MM', error: issues.period })}
  <button class="button" type="submit">Show</button>
  ${report && html`<a class="button button-quiet" href="/console/usage.csv?period=${report.period.key}" download>Export CSV</a>`}
</form>`;
    const body = !report
      ? html`${form}`
      : html`${form}${unsettledPanel(report)}${marginPanel(report)}<section class="panel panel-flush" aria-labelledby="users-title">
  <div class="panel-header"><h2 id="users-title">Users in ${report.period.key}</h2></div>
  ${
    report.rows.length === 0
      ? emptyState({ title: 'No users yet', text: 'Users appear here once you create them.' })
      : usageTable(report)
  }
</section>`;
    return sendPage(request, reply, { title: 'Usage', section: 'usage', body, status: report ? 200 : 422 });
  });

  app.get<{ Querystring: UsageQuery }>('/usage.csv', async (request, reply: FastifyReply) => {
    const report = await usage.tenantUsage(
      memberTenantId(request),
      request.query.period?.trim() || undefined,
    );
    return reply
      .type('text/csv; charset=utf-8')
      .header('cache-control', 'no-store')
      .header('content-disposition', `attachment; filename="usage-${report.period.key}.csv"`)
      .send(usageCsv(report));
  });
});
