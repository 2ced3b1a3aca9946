/**
 * What a user's page shows of their activity: their agents, their latest calls (the same
 * `calls.listForTenant` as GET /api/v1/calls?user_id=) and their latest credit movements.
 */
import type { Agent } from '../../agents/schemas.js';
import type { CallListItem } from '../../calls/schemas.js';
import { dateTime, statusBadge } from '../../web/components.js';
import { type Html, html } from '../../web/html.js';

export interface LedgerEntry {
  id: string;
  minutes: number;
  reason: string | null;
  created_at: Date;
}

function panel(id: string, title: string, more: Html | false, body: Html): Html {
  return html`<section class="panel panel-flush" aria-labelledby="${id}-title">
  <div class="panel-header"><h2 id="${id}-title">${title}</h2>${more}</div>
  ${body}
</section>`;
}

const empty = (text: string) => html`<div class="empty-state"><p>${text}</p></div>`;

export function agentsPanel(agents: Agent[], total: number): Html {
  return panel(
    'user-agents',
    'Agents',
    total > agents.length && html`<span class="subtle">${agents.length} of ${total}</span>`,
    agents.length === 0
      ? empty('No agent yet: agents are created for the user in the Agents section or through the API.')
      : html`<div class="table-wrap" tabindex="0" role="region" aria-labelledby="user-agents-title"><table>
    <thead><tr><th scope="col">Agent</th><th scope="col">Published</th><th scope="col">Created</th></tr></thead>
    <tbody>${agents.map(
      (agent) => html`<tr>
      <td><a href="/console/agents/${agent.id}"><strong>${agent.name}</strong></a></td>
      <td>${agent.published_version === null ? html`<span class="subtle">Draft only</span>` : `Version ${agent.published_version}`}</td>
      <td>${dateTime(agent.created_at)}</td>
    </tr>`,
    )}</tbody>
  </table></div>`,
  );
}

export function callsPanel(calls: CallListItem[], total: number): Html {
  return panel(
    'user-calls',
    'Latest calls',
    total > calls.length &&
      html`<span class="subtle">${calls.length} of ${total.toLocaleString('en-US')}</span>`,
    calls.length === 0
      ? empty('No call yet.')
      : html`<div class="table-wrap" tabindex="0" role="region" aria-labelledby="user-calls-title"><table>
    <thead><tr><th scope="col">Called</th><th scope="col">Status</th><th scope="col">Created</th><th scope="col" class="numeric">Billed min</th></tr></thead>
    <tbody>${calls.map(
      (call) => html`<tr>
      <td><a href="/console/calls/${call.id}"><strong>${call.to}</strong></a>${call.name && html`<div class="subtle">${call.name}</div>`}</td>
      <td>${statusBadge(call.status)}</td>
      <td>${dateTime(call.created_at)}</td>
      <td class="numeric">${call.billed_minutes ?? '—'}</td>
    </tr>`,
    )}</tbody>
  </table></div>`,
  );
}

export function ledgerPanel(entries: LedgerEntry[]): Html {
  return panel(
    'user-ledger',
    'Credit movements',
    false,
    entries.length === 0
      ? empty('No credit movement yet: plan minutes, top-ups, grants and calls are listed here.')
      : html`<div class="table-wrap" tabindex="0" role="region" aria-labelledby="user-ledger-title"><table>
    <thead><tr><th scope="col">Date</th><th scope="col">What</th><th scope="col" class="numeric">Minutes</th></tr></thead>
    <tbody>${entries.map(
      (entry) => html`<tr>
      <td>${dateTime(entry.created_at.toISOString())}</td>
      <td>${entry.reason ?? html`<span class="subtle">—</span>`}</td>
      <td class="numeric">${entry.minutes > 0 ? `+${entry.minutes.toLocaleString('en-US')}` : entry.minutes.toLocaleString('en-US')}</td>
    </tr>`,
    )}</tbody>
  </table></div>`,
  );
}
