/**
 * What the Minutes page shows: the "Buy minutes" form (presets with their price, another amount,
 * who collects the money), why a user cannot buy when they cannot, and the list of past top-ups.
 * All in the agency's words: its name, its support address, the plan's currency.
 */
import type { FastifyRequest } from 'fastify';
import type { Brand } from '../branding/service.js';
import type { Plan } from '../plans/schemas.js';
import { topUpAmount } from '../top-ups/pricing.js';
import { MAX_TOP_UP_MINUTES, MIN_TOP_UP_MINUTES, type TopUp } from '../top-ups/schemas.js';
import { emptyState, namedIssue, pager } from '../web/components.js';
import { type Html, html } from '../web/html.js';
import { href } from './context.js';
import { day, minutes, price, rate } from './views.js';

/** The amounts offered with one click; any other amount goes in the field beside them. */
export const PRESETS = [100, 500, 1000, 2500];
export const OTHER = 'other';

export interface BuyForm {
  /** A preset's minutes as text, or `other`. */
  choice: string;
  /** What was typed as another amount. */
  other: string;
  formKey: string;
  issues: { minutes?: string; other_minutes?: string };
}

/** Who to ask: the support address as a link, else the agency by name. */
export function contact(brand: Brand): Html {
  return brand.supportEmail
    ? html`<a href="mailto:${brand.supportEmail}">${brand.supportEmail}</a>`
    : html`${brand.name}`;
}

/** Where the money goes, said before the user buys. */
export function paymentNote(plan: Plan, brand: Brand): Html {
  return plan.provider === 'processor'
    ? html`The price is charged to your card on file as soon as you buy; the minutes are added at once.`
    : html`The minutes are added at once; ${brand.name} will invoice you for them.`;
}

export function buyForm(options: {
  request: FastifyRequest;
  plan: Plan;
  brand: Brand;
  csrf: Html;
  form: BuyForm;
}): Html {
  const { plan, form } = options;
  const each = rate(plan.topup_rate, plan.currency);
  const issues = form.issues;
  const otherChosen = form.choice === OTHER;
  const otherDescribed = ['other_minutes-hint', issues.other_minutes && 'other_minutes-error']
    .filter(Boolean)
    .join(' ');
  return html`<form method="post" action="${href(options.request, '/top-ups')}" class="buy-form" novalidate>
  ${options.csrf}<input type="hidden" name="form_key" value="${form.formKey}">
  <fieldset class="choices"${issues.minutes ? html` aria-describedby="minutes-error"` : ''}>
    <legend>How many minutes?</legend>
    <div class="choice-list">
      ${PRESETS.map(
        (count) => html`<label class="choice">
        <input type="radio" name="minutes" value="${count}"${form.choice === String(count) ? html` checked` : ''}>
        <span class="choice-minutes">${minutes(count)}</span>
        <span class="choice-price">${price(topUpAmount(count, plan.topup_rate, plan.currency), plan.currency)}</span>
      </label>`,
      )}
      <label class="choice">
        <input type="radio" name="minutes" value="${OTHER}"${otherChosen ? html` checked` : ''}>
        <span class="choice-minutes">Another amount</span>
        <span class="choice-price">${each} a minute</span>
      </label>
    </div>
    ${issues.minutes && html`<p class="error" id="minutes-error">${namedIssue('Minutes', issues.minutes)}</p>`}
  </fieldset>
  <div class="field other-amount">
    <label for="other_minutes">Another amount, in minutes</label>
    <input id="other_minutes" name="other_minutes" type="number" inputmode="numeric" min="${MIN_TOP_UP_MINUTES}" max="${MAX_TOP_UP_MINUTES}" step="1" value="${form.other}" aria-describedby="${otherDescribed}"${
      issues.other_minutes ? html` aria-invalid="true"` : ''
    }>
    <p class="hint" id="other_minutes-hint">Choose “Another amount” above, then enter ${MIN_TOP_UP_MINUTES} to ${MAX_TOP_UP_MINUTES.toLocaleString('en-US')} minutes at ${each} a minute.</p>
    ${issues.other_minutes && html`<p class="error" id="other_minutes-error">${namedIssue('Another amount', issues.other_minutes)}</p>`}
  </div>
  <p class="payment-note">${paymentNote(plan, options.brand)}</p>
  <div class="form-actions"><button class="button button-primary" type="submit">Review the purchase</button></div>
</form>`;
}

/**
 * The second step: the minutes and their price, said before anything is charged. The button
 * sends the same choice and the same one-time key with `confirm`, which alone buys.
 */
export function confirmBuy(options: {
  request: FastifyRequest;
  plan: Plan;
  brand: Brand;
  csrf: Html;
  form: BuyForm;
  count: number;
}): Html {
  const { plan, form, count } = options;
  const amount = price(topUpAmount(count, plan.topup_rate, plan.currency), plan.currency);
  const paying = plan.provider === 'processor' ? `Pay ${amount}` : `Buy for ${amount}`;
  return html`<div class="confirm-buy" role="group" aria-labelledby="confirm-title">
  <h3 id="confirm-title">Confirm your purchase</h3>
  <dl class="details">
    <dt>Minutes</dt><dd><strong>${minutes(count)}</strong></dd>
    <dt>Price</dt><dd><strong>${amount}</strong> <span class="muted">(${rate(plan.topup_rate, plan.currency)} a minute, ${plan.name} plan)</span></dd>
  </dl>
  <p class="payment-note">${paymentNote(plan, options.brand)}</p>
  <form method="post" action="${href(options.request, '/top-ups')}" class="form-actions">
    ${options.csrf}<input type="hidden" name="form_key" value="${form.formKey}">
    <input type="hidden" name="minutes" value="${form.choice}">
    ${form.choice === OTHER && html`<input type="hidden" name="other_minutes" value="${form.other}">`}
    <input type="hidden" name="confirm" value="yes">
    <button class="button button-primary" type="submit">${paying}</button>
    <a class="button" href="${href(options.request, '/top-ups')}">Change the amount</a>
  </form>
</div>`;
}

/** Why this user cannot buy now, and who can help. */
export function cannotBuy(reason: 'no-plan' | 'past-due', brand: Brand): Html {
  const text =
    reason === 'no-plan'
      ? 'Minutes are priced by your plan, and you have no plan at the moment.'
      : 'The last payment for your plan did not go through. You can buy minutes again once it is paid.';
  return html`<div class="empty-state">
  <h2>You cannot buy minutes right now</h2>
  <p>${text}</p>
  <p>To sort it out, contact ${contact(brand)}.</p>
</div>`;
}

function statusOf(topUp: TopUp): Html {
  return topUp.status === 'succeeded'
    ? html`<span class="badge badge-success">added</span>`
    : html`<span class="badge badge-danger">card declined</span>`;
}

export function topUpTable(
  request: FastifyRequest,
  page: { data: TopUp[]; pagination: Parameters<typeof pager>[0] },
  brand: Brand,
): Html {
  if (page.pagination.total === 0) {
    return emptyState({
      title: 'No purchases yet',
      text: 'Minutes you buy here are listed with their price and date.',
    });
  }
  // Focusable, so a keyboard can scroll it on a narrow screen (it has no links of its own).
  return html`<div class="table-wrap" tabindex="0" role="region" aria-labelledby="history-title"><table>
  <thead><tr>
    <th scope="col">Date</th><th scope="col" class="numeric">Minutes</th><th scope="col" class="numeric">Price</th>
    <th scope="col">Status</th><th scope="col" class="hide-narrow">Paid by</th>
  </tr></thead>
  <tbody>
  ${page.data.map(
    (topUp) => html`<tr>
    <td><time datetime="${topUp.created_at}" title="${topUp.created_at}">${day(topUp.created_at)}<span class="hide-narrow"> ${topUp.created_at.slice(11, 16)} UTC</span></time></td>
    <td class="numeric">${topUp.minutes.toLocaleString('en-US')}</td>
    <td class="numeric">${price(topUp.amount, topUp.currency)}</td>
    <td>${statusOf(topUp)}</td>
    <td class="hide-narrow">${topUp.billing === 'processor' ? 'Card on file' : html`Invoice from ${brand.name}`}</td>
  </tr>`,
  )}
  </tbody>
</table></div>
${page.pagination.pages > 1 ? pager(page.pagination, href(request, '/top-ups'), {}) : ''}`;
}
