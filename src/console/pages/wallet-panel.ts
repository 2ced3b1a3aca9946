/**
 * The wallet on the console's overview: the agency sees its wholesale minutes and rate, read-only
 * (the operator credits them), and a warning when they are used up. Nothing for an unmetered tenant.
 */

import { formatRate } from '../../core/money.js';
import type { Wallet } from '../../wallets/schemas.js';
import { type Html, html } from '../../web/html.js';

export function walletPanel(wallet: Wallet): Html {
  if (!wallet.metered || wallet.balance_minutes === null) return html``;
  const balance = wallet.balance_minutes.toLocaleString('en-US');
  const rate = formatRate(wallet.wholesale_rate ?? 0, wallet.currency ?? 'usd');
  const exhausted = wallet.balance_minutes <= 0;
  return html`<section class="panel" aria-labelledby="wallet-title" id="wallet">
  <h2 id="wallet-title">Wholesale minutes</h2>
  ${
    exhausted &&
    html`<div class="flash flash-error" role="alert">Your wholesale minutes are used up: calls are refused for all your clients until the platform credits your wallet.</div>`
  }
  <p class="stat-value">${balance} min</p>
  <p class="stat-note">at ${rate} per minute, billed by the platform${
    wallet.auto_refill &&
    html`; refilled with ${wallet.auto_refill.refill_minutes.toLocaleString('en-US')} minutes below ${wallet.auto_refill.threshold_minutes.toLocaleString('en-US')}`
  }</p>
</section>`;
}
