/** The overview: the agency's business at a glance, and the first steps when it is new. */

import type { Event } from '../../events/schemas.js';
import type { DailyCalls } from '../../insights/repository.js';
import type { TenantOverview } from '../../insights/service.js';
import { barChart } from '../../web/charts.js';
import { type Html, html } from '../../web/html.js';
import { can, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';
import { activityPanel, revenuePanel, revenueStat } from './overview-panels.js';
import { walletPanel } from './wallet-panel.js';

const number = (n: number) => n.toLocaleString('en-US');

function stat(label: string, value: string, note?: string): Html {
  return html`<div class="stat"><p class="stat-label">${label}</p><p class="stat-value">${value}</p>${
    note && html`<p class="stat-note">${note}</p>`
  }</div>`;
}

/** Calls per day as stacked bars: completed, then the other outcomes. */
export function callsChart(days: DailyCalls[]): Html {
  const total = days.reduce((sum, d) => sum + d.calls, 0);
  return barChart({
    label: `Calls per day for the last ${days.length} days: ${number(total)} in all`,
    series: [
      { label: 'completed', className: 'series-1' },
      { label: 'other outcomes', className: 'series-2' },
    ],
    points: days.map((d) => ({
      label: d.day.slice(8),
      title: `${d.day}: ${number(d.calls)} calls, ${number(d.completed)} completed, ${number(d.minutes)} min`,
      values: [d.completed, d.calls - d.completed],
    })),
  });
}

function firstSteps(request: Parameters<typeof can>[0]): Html {
  const admin = can(request, 'admin');
  const steps = [
    {
      href: '/console/api-keys',
      title: 'Create an API key',
      text: 'Connect your CRM or backend to the partner API.',
    },
    {
      href: '/console/plans',
      title: 'Set up your plans',
      text: 'Decide what your clients pay and the minutes included.',
    },
    {
      href: '/console/users',
      title: 'Add your first client',
      text: 'Provision users through the API, then manage them here.',
    },
    {
      href: '/console/agents',
      title: 'Build a voice agent',
      text: 'Write its prompt, publish it, place a test call.',
    },
  ];
  return html`<section class="panel" aria-labelledby="first-steps">
  <h2 id="first-steps">Get started</h2>
  <p class="muted">${admin ? 'Four steps to your first call.' : 'An owner or admin of your agency sets these up.'}</p>
  <ol class="steps">
    ${steps.map((step) => html`<li><a href="${step.href}">${step.title}</a><span class="subtle">${step.text}</span></li>`)}
  </ol>
</section>`;
}

export function overviewBody(overview: TenantOverview, started: Html, activity: Event[] = []): Html {
  const month = overview.periodStart.toLocaleString('en-US', { month: 'long', timeZone: 'UTC' });
  const days = overview.days;
  const billed = revenueStat(overview.revenue, month);
  return html`<div class="stats stats-5">
  ${stat('Users', number(overview.users))}
  ${stat('Active subscriptions', number(overview.liveSubscriptions), 'active, trialing or past due')}
  ${stat('Billed this month', billed.value, billed.note)}
  ${stat('Minutes used', number(overview.minutesThisPeriod), `billed since ${month} 1 (UTC)`)}
  ${stat('Calls today', number(overview.callsToday), 'since 00:00 UTC')}
</div>
${started}
<div class="grid grid-2 overview-business">
  ${revenuePanel(overview.revenue, month)}
  ${activityPanel(activity)}
</div>
<section class="panel" aria-labelledby="calls-per-day">
  <h2 id="calls-per-day">Calls per day</h2>
  ${callsChart(days)}
  <details class="chart-table">
    <summary>Show as a table</summary>
    <div class="table-wrap" role="region" aria-label="Calls per day" tabindex="0"><table>
      <thead><tr><th scope="col">Day (UTC)</th><th scope="col" class="numeric">Calls</th><th scope="col" class="numeric">Completed</th><th scope="col" class="numeric">Minutes</th></tr></thead>
      <tbody>${[...days]
        .reverse()
        .map(
          (d) =>
            html`<tr><td>${d.day}</td><td class="numeric">${number(d.calls)}</td><td class="numeric">${number(d.completed)}</td><td class="numeric">${number(d.minutes)}</td></tr>`,
        )}</tbody>
    </table></div>
  </details>
</section>`;
}

export const overviewPages = consolePages(
  ['insights', 'wallets', 'events'],
  async (app, { insights, wallets, events }) => {
    app.get('/', async (request, reply) => {
      const tenantId = request.consoleSession?.tenantId ?? '';
      const [overview, wallet, activity] = await Promise.all([
        insights.overview(tenantId),
        wallets.get(tenantId),
        events.recent(tenantId, 10),
      ]);
      const isNew = overview.users === 0 && overview.days.every((d) => d.calls === 0);
      return sendPage(request, reply, {
        title: 'Overview',
        section: 'overview',
        body: html`${walletPanel(wallet)}${overviewBody(overview, isNew ? firstSteps(request) : html``, activity)}`,
      });
    });
  },
);
