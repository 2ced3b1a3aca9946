/**
 * Calls analytics (`/console/analytics`): over a chosen range of UTC days (the last 30 by default),
 * the tenant's calls, answer rate, average and total minutes, outcomes and ended reasons per day,
 * and per agent. Each chart has its numbers as a table beside it. The numbers are
 * `services.insights.calls` (src/insights/analytics.ts): one pass over the range's calls.
 */
import { ApiError } from '../../core/errors.js';
import type { AgentTotals, CallAnalytics } from '../../insights/analytics.js';
import { barChart } from '../../web/charts.js';
import { emptyState, inputField } from '../../web/components.js';
import { fieldIssues } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';

type RangeQuery = { from?: string; to?: string };

const number = (n: number) => n.toLocaleString('en-US');
const minutes = (n: number) => n.toLocaleString('en-US', { maximumFractionDigits: 1 });
const percent = (rate: number | null) => (rate === null ? '—' : `${(rate * 100).toFixed(1)}%`);
const average = (value: number | null) => (value === null ? '—' : `${value.toFixed(1)} min`);

function stat(label: string, value: string, note: string): Html {
  return html`<div class="stat"><p class="stat-label">${label}</p><p class="stat-value">${value}</p><p class="stat-note">${note}</p></div>`;
}

/** A chart's numbers as a table, folded under it. */
function tableAlternative(label: string, head: string[], rows: (string | Html)[][]): Html {
  return html`<details class="chart-table">
  <summary>Show as a table</summary>
  <div class="table-wrap" role="region" aria-label="${label}" tabindex="0"><table class="table-compact">
    <thead><tr>${head.map((cell, i) => html`<th scope="col"${i > 0 ? html` class="numeric"` : ''}>${cell}</th>`)}</tr></thead>
    <tbody>${rows.map(
      (row) =>
        html`<tr>${row.map((cell, i) => (i === 0 ? html`<th scope="row">${cell}</th>` : html`<td class="numeric">${cell}</td>`))}</tr>`,
    )}</tbody>
  </table></div>
</details>`;
}

function outcomesPanel(data: CallAnalytics): Html {
  const days = data.days;
  const chart = barChart({
    label: `Calls per day by outcome, ${data.range.from} to ${data.range.to}: ${number(data.totals.calls)} in all`,
    series: [
      { label: 'completed', className: 'series-1' },
      { label: 'no answer', className: 'series-3' },
      { label: 'failed', className: 'series-4' },
      { label: 'not ended yet', className: 'series-6' },
    ],
    points: days.map((d) => ({
      label: d.day.slice(8),
      title: `${d.day}: ${d.completed} completed, ${d.no_answer} no answer, ${d.failed} failed, ${d.open} not ended`,
      values: [d.completed, d.no_answer, d.failed, d.open],
    })),
  });
  const rows = [...days]
    .reverse()
    .map((d) => [
      d.day,
      number(d.completed + d.no_answer + d.failed + d.open),
      number(d.completed),
      number(d.no_answer),
      number(d.failed),
      number(d.open),
      number(d.minutes),
    ]);
  return html`<section class="panel" aria-labelledby="outcomes-title">
  <h2 id="outcomes-title">Outcomes per day</h2>
  ${chart}
  ${tableAlternative('Outcomes per day', ['Day (UTC)', 'Calls', 'Completed', 'No answer', 'Failed', 'Not ended', 'Minutes'], rows)}
</section>`;
}

function reasonsPanel(data: CallAnalytics): Html {
  const hasOther = data.reasonDays.some((d) => d.other > 0);
  const labels = [...data.reasons, ...(hasOther ? ['other reasons'] : [])];
  const chart = barChart({
    label: `Calls per day by ended reason, ${data.range.from} to ${data.range.to}`,
    series: labels.map((label, i) => ({
      label,
      className: i < data.reasons.length ? `series-${i + 1}` : 'series-6',
    })),
    points: data.reasonDays.map((d) => ({
      label: d.day.slice(8),
      title: `${d.day}: ${labels.map((label, i) => `${i < d.counts.length ? d.counts[i] : d.other} ${label}`).join(', ')}`,
      values: hasOther ? [...d.counts, d.other] : d.counts,
    })),
  });
  const rows = [...data.reasonDays]
    .reverse()
    .map((d) => [d.day, ...d.counts.map(number), ...(hasOther ? [number(d.other)] : [])]);
  return html`<section class="panel" aria-labelledby="reasons-title">
  <h2 id="reasons-title">Why calls ended</h2>
  <p class="muted">The call's <code>ended_reason</code>: the ${data.reasons.length} most frequent of the range${hasOther ? ', the rest as “other reasons”' : ''}.</p>
  ${chart}
  ${tableAlternative('Ended reasons per day', ['Day (UTC)', ...labels], rows)}
</section>`;
}

function agentName(agent: AgentTotals): Html {
  return html`<a href="/console/agents/${agent.agent_id}">${agent.name ?? agent.agent_id}</a>`;
}

function agentsPanel(data: CallAnalytics): Html {
  const charted = data.agents.slice(0, 12);
  const chart = barChart({
    label: `Calls per agent, ${data.range.from} to ${data.range.to}: the ${charted.length} busiest`,
    series: [
      { label: 'answered', className: 'series-1' },
      { label: 'not answered', className: 'series-2' },
    ],
    points: charted.map((agent) => ({
      label: (agent.name ?? agent.agent_id).slice(0, 10),
      title: `${agent.name ?? agent.agent_id}: ${agent.calls} calls, ${agent.answered} answered`,
      values: [agent.answered, agent.calls - agent.answered],
    })),
  });
  return html`<section class="panel panel-flush" aria-labelledby="agents-title">
  <div class="panel-header"><h2 id="agents-title">Per agent</h2></div>
  <div class="panel-body">${chart}</div>
  <div class="table-wrap" role="region" aria-label="Calls per agent" tabindex="0"><table>
    <thead><tr><th scope="col">Agent</th><th scope="col" class="numeric">Calls</th><th scope="col" class="numeric">Answered</th>
      <th scope="col" class="numeric">Answer rate</th><th scope="col" class="numeric">Average</th><th scope="col" class="numeric">Minutes billed</th></tr></thead>
    <tbody>${data.agents.map(
      (
        agent,
      ) => html`<tr><th scope="row">${agentName(agent)}</th><td class="numeric">${number(agent.calls)}</td>
      <td class="numeric">${number(agent.answered)}</td><td class="numeric">${percent(agent.answerRate)}</td>
      <td class="numeric">${average(agent.averageMinutes)}</td><td class="numeric">${number(agent.minutes)}</td></tr>`,
    )}</tbody>
  </table></div>
</section>`;
}

function analyticsBody(data: CallAnalytics): Html {
  const t = data.totals;
  const stats = html`<div class="stats">
  ${stat('Calls', number(t.calls), `${data.range.days} days, ${data.range.from} to ${data.range.to} (UTC)`)}
  ${stat('Answer rate', percent(t.answerRate), `${number(t.answered)} answered of ${number(t.ended)} ended`)}
  ${stat('Average call', average(t.averageMinutes), 'talk time of an answered call')}
  ${stat('Minutes billed', minutes(t.minutes), 'in all, over the range')}
</div>`;
  if (t.calls === 0) {
    return html`${stats}<section class="panel">${emptyState({
      title: 'No calls in this range',
      text: 'Choose other dates, or place a call from an agent’s page.',
      action: html`<a class="button" href="/console/agents">Go to agents</a>`,
    })}</section>`;
  }
  return html`${stats}${outcomesPanel(data)}${reasonsPanel(data)}${agentsPanel(data)}`;
}

/** The range form: the dates asked for (kept when refused) and shortcuts to common ranges. */
function rangeForm(values: RangeQuery, issues: Record<string, string>, today: string): Html {
  const shortcut = (days: number) => {
    const from = new Date(Date.parse(`${today}T00:00:00Z`) - (days - 1) * 86_400_000)
      .toISOString()
      .slice(0, 10);
    return html`<a class="button button-quiet button-small" href="/console/analytics?from=${from}&amp;to=${today}">Last ${days} days</a>`;
  };
  return html`<form method="get" action="/console/analytics" class="filters panel" aria-label="Choose the dates">
  ${inputField({ id: 'from', label: 'From (UTC)', type: 'date', value: values.from, placeholder: 'YYYY-MM-DD', error: issues.from })}
  ${inputField({ id: 'to', label: 'To (UTC), included', type: 'date', value: values.to, placeholder: 'YYYY-MM-DD', error: issues.to })}
  <button class="button" type="submit">Show</button>
  <span class="range-shortcuts">${shortcut(7)}${shortcut(30)}${shortcut(90)}</span>
</form>`;
}

export const analyticsPages = consolePages(['insights', 'clock'], async (app, { insights, clock }) => {
  app.get<{ Querystring: RangeQuery }>('/analytics', async (request, reply) => {
    const asked = { from: request.query.from?.trim(), to: request.query.to?.trim() };
    const today = clock.now().toISOString().slice(0, 10);
    let data: CallAnalytics;
    try {
      data = await insights.calls(memberTenantId(request), asked);
    } catch (error) {
      if (!(error instanceof ApiError) || error.status !== 422) throw error;
      return sendPage(request, reply, {
        title: 'Analytics',
        section: 'analytics',
        status: 422,
        body: html`${rangeForm(asked, fieldIssues(error), today)}`,
      });
    }
    return sendPage(request, reply, {
      title: 'Analytics',
      section: 'analytics',
      body: html`${rangeForm({ from: data.range.from, to: data.range.to }, {}, today)}${analyticsBody(data)}`,
    });
  });
});
