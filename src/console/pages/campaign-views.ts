/**
 * What the console shows of campaigns (docs/campaigns.md): the list's table, a campaign's live
 * progress (recipients by status, outcomes, minutes: the fragment the page refreshes while the
 * campaign can still change), the rows an upload refused with their lines, and the recipients.
 */
import type { Campaign, ImportReport, Recipient } from '../../campaigns/schemas.js';
import { dateTime, statusBadge } from '../../web/components.js';
import { type Html, html } from '../../web/html.js';

const count = (value: number) => value.toLocaleString('en-US');

export const PAUSE_REASONS: Record<string, string> = {
  manual: 'paused by hand',
  insufficient_credits: 'paused: the user’s credits ran out; it resumes after a top-up',
  tenant_balance_exhausted: 'paused: your wholesale balance ran out; it resumes after a refill',
  agent_unavailable: 'paused: the agent is not available',
};

const REFUSAL_WORDS: Record<string, string> = {
  invalid_number: 'not a phone number (use international format, like +14155550123)',
  do_not_call: 'on your do-not-call list',
  duplicate: 'already in the campaign',
};

/** Whether the campaign can still change by itself (its page keeps refreshing). */
export const isLive = (campaign: Campaign) => ['scheduled', 'running', 'paused'].includes(campaign.status);

export function campaignTable(campaigns: Campaign[], agentNames: Map<string, string>): Html {
  return html`<div class="panel panel-flush"><div class="table-wrap" tabindex="0" role="region" aria-label="Campaigns"><table>
  <thead><tr>
    <th scope="col">Campaign</th><th scope="col">Status</th><th scope="col">Agent</th>
    <th scope="col" class="numeric">Recipients</th><th scope="col" class="numeric">Called</th><th scope="col">Created</th>
  </tr></thead>
  <tbody>${campaigns.map(
    (c) => html`<tr>
    <td><a href="/console/campaigns/${c.id}"><strong>${c.name}</strong></a></td>
    <td>${statusBadge(c.status)}${c.status === 'scheduled' && html`<div class="subtle">${dateTime(c.scheduled_at)}</div>`}</td>
    <td>${agentNames.get(c.agent_id) ?? html`<span class="mono subtle">${c.agent_id}</span>`}</td>
    <td class="numeric">${count(c.recipients.total)}</td>
    <td class="numeric">${count(c.recipients.done)}</td>
    <td>${dateTime(c.created_at)}</td>
  </tr>`,
  )}</tbody>
</table></div></div>`;
}

/** The progress fragment: served alone at /progress for the page's refresh, and inside the page. */
export function progressRegion(campaign: Campaign): Html {
  const r = campaign.recipients;
  const o = campaign.outcomes;
  const total = Math.max(1, r.total);
  const finished = r.done + r.skipped + r.canceled;
  const percent = Math.round((finished / total) * 100);
  const stat = (label: string, value: number, note?: string) =>
    html`<div class="stat"><p class="stat-label">${label}</p><p class="stat-value">${count(value)}</p>${note && html`<p class="stat-note">${note}</p>`}</div>`;
  return html`<div class="campaign-progress">
  <p class="call-status-line"><span class="stat-label">Status</span> ${statusBadge(campaign.status)}
  ${campaign.pause_reason && html`<span class="subtle">${PAUSE_REASONS[campaign.pause_reason] ?? campaign.pause_reason}</span>`}
  ${
    isLive(campaign)
      ? html`<span class="subtle live-note">Updating live</span>`
      : campaign.status === 'draft'
        ? html`<span class="subtle" data-final>Not started</span>`
        : html`<span class="subtle" data-final>Final</span>`
  }</p>
  <p><progress max="100" value="${percent}" aria-label="Recipients finished">${percent}%</progress> <span class="subtle">${count(finished)} of ${count(r.total)} recipients finished (${percent}%)</span></p>
  <h2 class="row-title">Recipients by status</h2>
  <div class="stats">
    ${stat('Waiting', r.pending)}${stat('Calling now', r.calling)}${stat('Called', r.done)}${stat('Skipped', r.skipped, 'refused when dialled')}${stat('Canceled', r.canceled)}
  </div>
  <h2 class="row-title">Outcomes of the calls</h2>
  <div class="stats">
    ${stat('Completed', o.completed)}${stat('No answer', o.no_answer)}${stat('Failed', o.failed)}${stat('Minutes billed', campaign.minutes_used)}
  </div>
</div>`;
}

/** The rows an upload did not store, by reason and line. */
export function importReport(report: ImportReport, source: 'file' | 'pasted'): Html {
  const refusedTotal = report.refusals.length;
  return html`<section class="panel" aria-labelledby="import-title">
  <h2 id="import-title">Import: ${count(report.accepted)} recipient${report.accepted === 1 ? '' : 's'} added${refusedTotal > 0 ? `, ${count(refusedTotal)} row${refusedTotal === 1 ? '' : 's'} refused` : ''}</h2>
  ${
    refusedTotal === 0
      ? html`<p class="muted">Every row was added.</p>`
      : html`<p class="muted">Only these rows were left out; the others were added. Lines are those of the ${source === 'file' ? 'file (the header is line 1)' : 'pasted text'}.</p>
  <div class="table-wrap" tabindex="0" role="region" aria-labelledby="import-title"><table>
    <thead><tr><th scope="col" class="numeric">Line</th><th scope="col">Phone as given</th><th scope="col">Why it was refused</th></tr></thead>
    <tbody>${report.refusals.map(
      (refusal) =>
        html`<tr><td class="numeric">${refusal.line}</td><td class="mono">${refusal.phone}</td><td>${REFUSAL_WORDS[refusal.reason] ?? refusal.reason}</td></tr>`,
    )}</tbody>
  </table></div>`
  }
</section>`;
}

export function recipientTable(recipients: Recipient[]): Html {
  return html`<div class="table-wrap" tabindex="0" role="region" aria-labelledby="recipients-title"><table>
  <thead><tr>
    <th scope="col" class="numeric">#</th><th scope="col">Recipient</th><th scope="col">Status</th>
    <th scope="col">Outcome</th><th scope="col" class="numeric">Attempts</th><th scope="col">Call</th>
  </tr></thead>
  <tbody>${recipients.map(
    (r) => html`<tr>
    <td class="numeric">${r.position}</td>
    <td><strong class="mono">${r.phone}</strong>${r.name && html`<div class="subtle">${r.name}</div>`}</td>
    <td>${statusBadge(r.status)}${r.skip_reason && html`<div class="subtle">${r.skip_reason.replace(/_/g, ' ')}</div>`}</td>
    <td>${r.outcome ? statusBadge(r.outcome) : html`<span class="subtle">—</span>`}</td>
    <td class="numeric">${r.attempts}</td>
    <td>${r.call_id ? html`<a href="/console/calls/${r.call_id}">View call</a>` : html`<span class="subtle">—</span>`}</td>
  </tr>`,
  )}</tbody>
</table></div>`;
}
