/**
 * The overview's business panels: what the agency billed this month (subscriptions, top-ups,
 * overage, per currency) and its recent activity (the tenant's latest events, in words).
 */
import { formatMoney } from '../../core/money.js';
import type { Event } from '../../events/schemas.js';
import type { RevenueTotals } from '../../insights/revenue-repository.js';
import { dateTime } from '../../web/components.js';
import { type Html, html } from '../../web/html.js';

const total = (r: RevenueTotals) => r.subscriptions + r.top_ups + r.overage;

/** "Billed this month" for the stats row: the first currency's total, others named in the note. */
export function revenueStat(revenue: RevenueTotals[], month: string): { value: string; note: string } {
  if (revenue.length === 0)
    return { value: formatMoney(0, 'usd'), note: `nothing billed since ${month} 1 (UTC)` };
  const [first, ...others] = [...revenue].sort((a, b) => total(b) - total(a));
  const more = others.map((r) => formatMoney(total(r), r.currency)).join(' + ');
  return {
    value: formatMoney(total(first), first.currency),
    note: `billed since ${month} 1 (UTC)${more ? `, and ${more}` : ''}`,
  };
}

export function revenuePanel(revenue: RevenueTotals[], month: string): Html {
  const line = (r: RevenueTotals) => html`<tr>
    <th scope="row">${r.currency.toUpperCase()}</th>
    <td class="numeric">${formatMoney(r.subscriptions, r.currency)}</td>
    <td class="numeric">${formatMoney(r.top_ups, r.currency)}</td>
    <td class="numeric">${formatMoney(r.overage, r.currency)}</td>
    <td class="numeric"><strong>${formatMoney(total(r), r.currency)}</strong></td>
  </tr>`;
  return html`<section class="panel panel-flush" aria-labelledby="revenue-title">
  <div class="panel-header"><h2 id="revenue-title">Revenue in ${month}</h2><a class="button button-quiet button-small" href="/console/usage">Usage report</a></div>
  ${
    revenue.length === 0
      ? html`<div class="panel-body"><p class="muted">Nothing billed yet this month. Paid subscription periods, top-ups and overage appear here as they are charged.</p></div>`
      : html`<div class="table-wrap" role="region" aria-label="Revenue this month" tabindex="0"><table class="table-compact">
    <thead><tr><th scope="col">Currency</th><th scope="col" class="numeric">Subscriptions</th><th scope="col" class="numeric">Top-ups</th><th scope="col" class="numeric">Overage</th><th scope="col" class="numeric">Total</th></tr></thead>
    <tbody>${revenue.map(line)}</tbody>
  </table></div>`
  }
  <div class="panel-body"><p class="revenue-lines">Subscriptions: each paid period at its plan's monthly price when it starts (trials bill nothing). Top-ups that succeeded; overage the processor did not refuse.</p></div>
</section>`;
}

const str = (value: unknown) => (typeof value === 'string' && value !== '' ? value : undefined);

const CALL_WORDS: Record<string, string> = {
  'call.queued': 'queued',
  'call.started': 'answered',
  'call.completed': 'completed',
  'call.no_answer': 'not answered',
  'call.failed': 'failed',
  'call.analyzed': 'analysed',
};
const SUBSCRIPTION_WORDS: Record<string, string> = {
  'subscription.created': 'created',
  'subscription.updated': 'changed',
  'subscription.canceled': 'canceled',
};

/** One event in words, with a link to what it is about. */
export function describeEvent(event: Event): Html {
  const o = event.data.object as Record<string, unknown>;
  const id = str(o.id) ?? '';
  const userId = str(o.user_id);
  const [kind] = event.type.split('.');
  switch (kind) {
    case 'user':
      return event.type === 'user.created'
        ? html`User <a href="/console/users/${id}">${str(o.name) ?? str(o.email) ?? id}</a> created`
        : html`User <code>${id}</code> deleted`;
    case 'subscription':
      return html`Subscription <a href="/console/subscriptions/${id}">${id}</a> ${SUBSCRIPTION_WORDS[event.type] ?? 'changed'}`;
    case 'call':
      return html`Call to <a href="/console/calls/${id}">${str(o.to) ?? id}</a> ${CALL_WORDS[event.type] ?? 'changed'}${
        event.type === 'call.failed' && str(o.failure_reason) ? `: ${str(o.failure_reason)}` : ''
      }`;
    case 'credits':
      return html`${event.type === 'credits.low' ? 'Credits low' : 'Credits used up'} for <a href="/console/users/${userId ?? ''}">${userId ?? 'a user'}</a>: ${String(o.balance_minutes ?? 0)} min left`;
    case 'campaign':
      return html`Campaign <a href="/console/campaigns/${id}">${str(o.name) ?? id}</a> ${event.type.split('.')[1]}`;
    case 'webhook':
      return html`Test event sent to <a href="/console/webhooks/${id}">${str(o.url) ?? id}</a>`;
    default:
      return html`<code>${event.type}</code>`;
  }
}

export function activityPanel(events: Event[]): Html {
  return html`<section class="panel" aria-labelledby="activity-title">
  <h2 id="activity-title">Recent activity</h2>
  ${
    events.length === 0
      ? html`<p class="muted">Nothing yet. Users, subscriptions, calls and campaigns show up here as they happen.</p>`
      : html`<ul class="activity">${events.map(
          (event) => html`<li><span>${describeEvent(event)}</span>${dateTime(event.created_at)}</li>`,
        )}</ul>`
  }
</section>`;
}
