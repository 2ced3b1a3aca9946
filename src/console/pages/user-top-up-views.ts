/**
 * What the user page shows of top-ups (docs/wallets.md, docs/top-ups.md): the "Top up" form for
 * admins (minutes, the price at the current plan's topup_rate, who pays), why a user cannot be
 * topped up when they cannot, and the user's top-ups (succeeded and declined), newest first.
 */

import { formatMoney, formatRate, minorUnitDigits } from '../../core/money.js';
import type { Plan } from '../../plans/schemas.js';
import { topUpAmount } from '../../top-ups/pricing.js';
import { MAX_TOP_UP_MINUTES, MIN_TOP_UP_MINUTES, type TopUp } from '../../top-ups/schemas.js';
import { badge, dateTime, emptyState, field, pager, statusBadge } from '../../web/components.js';
import { type Html, html } from '../../web/html.js';
import { newFormKey } from '../../web/once.js';

/** What the form shows again after a refusal: the minutes as typed, the key, and why. */
export interface TopUpForm {
  minutes?: string;
  /** The one-time key to render (kept after "the processor did not answer", so a retry resumes). */
  formKey?: string;
  /** Beside the minutes field. */
  issue?: string;
  /** Above the form: a refusal that is not about the minutes (a declined card, no card, blocked). */
  refusal?: string;
}

/** The plan a top-up is priced by, or why there is none. */
export type TopUpStanding = { plan: Plan } | { reason: 'blocked' | 'no-plan' };

export interface TopUpListPage {
  data: TopUp[];
  pagination: Parameters<typeof pager>[0];
}

const minutesText = (count: number) => `${count.toLocaleString('en-US')} minute${count === 1 ? '' : 's'}`;

/** The minutes as typed, when they are a number the form accepts. */
function validMinutes(text: string | undefined): number | undefined {
  if (!text || !/^\d{1,9}$/.test(text)) return undefined;
  const count = Number(text);
  return count >= MIN_TOP_UP_MINUTES && count <= MAX_TOP_UP_MINUTES ? count : undefined;
}

/** Who pays, said before the admin presses the button. */
export function payerNote(plan: Plan): string {
  return plan.provider === 'processor'
    ? 'Charged to the client’s card on file at once; the minutes are added when the charge succeeds.'
    : 'Added at once and recorded for your invoicing: you bill the client yourself.';
}

function priceLine(plan: Plan, minutes: number | undefined): string {
  const each = `${formatRate(plan.topup_rate, plan.currency)} a minute`;
  if (minutes === undefined) return `${each} (${plan.name} plan)`;
  return `${minutesText(minutes)} cost ${formatMoney(topUpAmount(minutes, plan.topup_rate, plan.currency), plan.currency)} at ${each}`;
}

function reasonText(reason: 'blocked' | 'no-plan'): string {
  return reason === 'blocked'
    ? 'The user is blocked, so they cannot be topped up. Unblock them first.'
    : 'The user has no active or trialing subscription. A top-up is priced by the current plan’s top-up rate, so there is nothing to price it by.';
}

function topUpForm(userId: string, plan: Plan, csrf: Html, form: TopUpForm): Html {
  const minutes = validMinutes(form.minutes);
  const described = ['top_up_minutes-hint', form.issue && 'top_up_minutes-error'].filter(Boolean).join(' ');
  const rateMicros = Math.round(plan.topup_rate * 1_000_000);
  return html`<form method="post" action="/console/users/${userId}/top-ups#top-up" novalidate>
  ${csrf}<input type="hidden" name="form_key" value="${form.formKey ?? newFormKey()}">
  <div class="form-grid">
    ${field({
      id: 'top_up_minutes',
      label: 'Minutes to top up',
      hint: `${MIN_TOP_UP_MINUTES} to ${MAX_TOP_UP_MINUTES.toLocaleString('en-US')}.`,
      error: form.issue,
      control: html`<input id="top_up_minutes" name="minutes" type="number" inputmode="numeric" min="${MIN_TOP_UP_MINUTES}" max="${MAX_TOP_UP_MINUTES}" step="1" required value="${form.minutes ?? ''}" aria-describedby="${described}"${
        form.issue ? html` aria-invalid="true"` : ''
      }>`,
    })}
    <div class="field">
      <p class="field-label" id="top_up_price-label">Price</p>
      <p class="top-up-price"><output id="top_up_price" for="top_up_minutes" aria-labelledby="top_up_price-label" data-top-up-price data-rate-micros="${rateMicros}" data-digits="${minorUnitDigits(plan.currency)}" data-currency="${plan.currency.toUpperCase()}" data-each="${formatRate(plan.topup_rate, plan.currency)}" data-plan="${plan.name}">${priceLine(plan, minutes)}</output></p>
      <p class="hint">${payerNote(plan)}</p>
    </div>
  </div>
  <div class="form-actions"><button class="button button-primary" type="submit">${
    plan.provider === 'processor' ? 'Top up and charge the card' : 'Top up'
  }</button></div>
</form>`;
}

/** The "Top up" panel of an admin: the form, or why the user cannot be topped up. */
export function topUpPanel(options: {
  userId: string;
  standing: TopUpStanding;
  csrf: Html;
  form: TopUpForm;
}): Html {
  const { standing, form } = options;
  return html`<section class="panel" id="top-up" aria-labelledby="top-up-title">
  <h2 id="top-up-title">Top up</h2>
  ${form.refusal && html`<div class="flash flash-error" role="alert">${form.refusal}</div>`}
  ${
    'plan' in standing
      ? topUpForm(options.userId, standing.plan, options.csrf, form)
      : html`<p class="muted">${reasonText(standing.reason)}</p>`
  }
</section>`;
}

function billingText(topUp: TopUp): string {
  return topUp.billing === 'processor' ? 'Card on file' : 'Your invoicing';
}

/** The user's top-ups: date, minutes, amount, billing, status, decline code. */
export function topUpList(userId: string, page: TopUpListPage): Html {
  const body =
    page.pagination.total === 0
      ? emptyState({
          title: 'No top-ups yet',
          text: 'Minutes bought here, in the client portal or through the API (POST /api/v1/users/{id}/top-ups) are listed with their price.',
        })
      : html`<div class="table-wrap" tabindex="0" role="region" aria-labelledby="top-ups-title"><table>
    <thead><tr>
      <th scope="col">Date</th><th scope="col" class="numeric">Minutes</th><th scope="col" class="numeric">Amount</th>
      <th scope="col">Billing</th><th scope="col">Status</th><th scope="col">Decline code</th>
    </tr></thead>
    <tbody>${page.data.map(
      (topUp) => html`<tr>
      <td>${dateTime(topUp.created_at)}</td>
      <td class="numeric">${topUp.minutes.toLocaleString('en-US')}</td>
      <td class="numeric">${formatMoney(topUp.amount, topUp.currency)}</td>
      <td>${billingText(topUp)}</td>
      <td>${topUp.status === 'declined' ? badge('declined', 'danger') : statusBadge(topUp.status)}</td>
      <td>${topUp.decline_code ? html`<code>${topUp.decline_code}</code>` : html`<span class="subtle">—</span>`}</td>
    </tr>`,
    )}</tbody>
  </table></div>${page.pagination.pages > 1 && pager(page.pagination, `/console/users/${userId}`, {})}`;
  return html`<section class="panel panel-flush" id="top-ups" aria-labelledby="top-ups-title">
  <div class="panel-header"><h2 id="top-ups-title">Top-ups</h2></div>
  ${body}
</section>`;
}
