/** Pieces several portal pages show: the calls table, durations, minutes and prices as people read them. */
import type { FastifyRequest } from 'fastify';
import type { CallListItem } from '../calls/schemas.js';
import { formatMoney, formatRate } from '../core/money.js';
import { dateTime, statusBadge } from '../web/components.js';
import { type Html, html } from '../web/html.js';
import { href } from './context.js';

export function duration(seconds: number | null): string {
  if (seconds === null) return '—';
  const minutes = Math.floor(seconds / 60);
  return minutes > 0 ? `${minutes} min ${seconds % 60} s` : `${seconds} s`;
}

export function minutes(count: number): string {
  return `${count.toLocaleString('en-US')} ${Math.abs(count) === 1 ? 'minute' : 'minutes'}`;
}

/** An amount in the minor unit of its currency, as the processor counts it: "$29.00", "¥500". */
export const price = formatMoney;

/** A per-minute rate (major unit, up to 6 decimals) in its currency: "$0.10", "$0.085". */
export const rate = formatRate;

/** The day only: "21 Nov 2026". */
export function day(iso: string): string {
  return new Date(iso).toLocaleDateString('en-GB', {
    day: 'numeric',
    month: 'short',
    year: 'numeric',
    timeZone: 'UTC',
  });
}

/** Why the call ended, when it says more than its status. */
export function outcomeNote(call: Pick<CallListItem, 'status' | 'ended_reason'>): string | undefined {
  const reason = call.ended_reason;
  return reason && reason !== call.status ? reason.replace(/[_-]/g, ' ') : undefined;
}

export function callTable(
  request: FastifyRequest,
  calls: CallListItem[],
  agentNames: Map<string, string>,
): Html {
  return html`<div class="table-wrap" role="region" aria-label="Calls" tabindex="0"><table>
  <thead><tr>
    <th scope="col">Number</th><th scope="col">Outcome</th><th scope="col" class="hide-narrow">Agent</th>
    <th scope="col" class="hide-narrow">When</th><th scope="col" class="numeric">Duration</th><th scope="col" class="numeric">Billed</th>
  </tr></thead>
  <tbody>
  ${calls.map((call) => {
    const note = outcomeNote(call);
    return html`<tr>
    <td><a href="${href(request, `/calls/${call.id}`)}"><strong class="phone">${call.direction === 'inbound' ? call.from : call.to}</strong></a><br><span class="subtle">${call.direction === 'inbound' ? 'Called in' : 'Called out'}</span>${call.name && html` · <span class="subtle">${call.name}</span>`}</td>
    <td>${statusBadge(call.status)}${note && html`<br><span class="subtle">${note}</span>`}</td>
    <td class="hide-narrow">${(call.agent_id && agentNames.get(call.agent_id)) ?? html`<span class="subtle">Removed agent</span>`}</td>
    <td class="hide-narrow">${dateTime(call.created_at)}</td>
    <td class="numeric">${duration(call.duration_seconds)}</td>
    <td class="numeric">${call.billed_minutes === null ? '—' : minutes(call.billed_minutes)}</td>
  </tr>`;
  })}
  </tbody>
</table></div>`;
}
