/** The tenant page's forms (admins and owners): status, wallet, credit, processor account, branding, domains. */
import type { FastifyReply } from 'fastify';
import type { Branding, Domain } from '../../../branding/schemas.js';
import type { Tenant } from '../../../tenants/schemas.js';
import type { Wallet } from '../../../wallets/schemas.js';
import { actionButton, dateTime, inputField, statusBadge } from '../../../web/components.js';
import type { Flash } from '../../../web/forms.js';
import { type Html, html } from '../../../web/html.js';
import { newFormKey } from '../../../web/once.js';
import { csrfField } from '../layout.js';

/** A refused form shown again: which form, what was typed, the issue beside each field. */
export interface FormState {
  form?: string;
  values?: Record<string, string | undefined>;
  errors?: Record<string, string>;
  status?: number;
  flash?: Flash;
}

interface TenantState {
  tenant: Tenant;
  wallet: Wallet;
  suspended: boolean;
  brand: Branding;
  domains: Domain[];
}

function panel(id: string, title: string, body: Html): Html {
  return html`<section class="panel" aria-labelledby="${id}-title"><h2 id="${id}-title">${title}</h2>${body}</section>`;
}

export function settingsForms(reply: FastifyReply, state: TenantState, form: FormState): Html {
  const { tenant, wallet, brand } = state;
  const base = `/operator/tenants/${tenant.id}`;
  const csrf = csrfField(reply);
  const value = (name: string, name2: string, current: unknown) =>
    form.form === name
      ? form.values?.[name2]
      : current === null || current === undefined
        ? undefined
        : String(current);
  const error = (name: string, field: string) => (form.form === name ? form.errors?.[field] : undefined);
  const submit = (label: string) =>
    html`<div class="form-actions"><button class="button button-primary" type="submit">${label}</button></div>`;

  return html`<div class="settings-grid">
  ${panel(
    'status',
    'Status',
    state.suspended
      ? html`<p>Suspended since ${dateTime(tenant.suspended_at)}${tenant.suspended_reason ? html` — “${tenant.suspended_reason}”` : ''}. Its API keys, call-trigger webhooks, console and client portal are refused and its queued calls wait; nothing is deleted.</p>
    ${actionButton({ action: `${base}/lift`, label: 'Lift the suspension', csrf, tone: 'primary', confirm: `Lift the suspension of ${tenant.name}? Its keys, console and portal work again at once.` })}`
      : html`<p>Active. Suspending refuses the tenant’s API keys, call-trigger webhooks, console and client portal and holds its queued calls; calls in progress finish. Nothing is deleted, and lifting restores everything.</p>
    <form method="post" action="${base}/suspend" data-confirm="${`Suspend ${tenant.name}? Its agency and their clients lose access until you lift it.`}">${csrf}
      ${inputField({ id: 'reason', label: 'Reason (for the operator only)', value: value('status', 'reason', undefined), error: error('status', 'reason') })}
      <div class="form-actions"><button class="button button-danger" type="submit">Suspend the tenant</button></div></form>`,
  )}
  ${panel(
    'wallet',
    'Metering and wholesale rate',
    html`<form method="post" action="${base}/wallet">${csrf}
    <div class="form-grid">
      ${inputField({ id: 'wholesale_rate', label: 'Wholesale rate per minute', value: value('wallet', 'wholesale_rate', wallet.wholesale_rate), error: error('wallet', 'wholesale_rate'), required: true, attributes: html`inputmode="decimal"` })}
      ${inputField({ id: 'currency', label: 'Currency', value: value('wallet', 'currency', wallet.currency ?? 'usd'), error: error('wallet', 'currency'), required: true, hint: 'Lower-case ISO 4217, e.g. usd.' })}
    </div>
    <p class="hint">${wallet.metered ? 'The tenant is metered: its calls debit its wallet.' : 'Saving meters the tenant: its calls then debit a wallet, refused at zero.'}</p>
    ${submit(wallet.metered ? 'Save the rate' : 'Meter this tenant')}</form>`,
  )}
  ${
    wallet.metered &&
    panel(
      'credit',
      'Credit the wallet',
      html`<form method="post" action="${base}/wallet/credit">${csrf}<input type="hidden" name="form_key" value="${newFormKey()}">
    <div class="form-grid">
      ${inputField({ id: 'minutes', label: 'Minutes', value: value('credit', 'minutes', undefined), error: error('credit', 'minutes'), required: true, hint: 'Negative takes minutes back.', attributes: html`inputmode="numeric"` })}
      ${inputField({ id: 'reason', label: 'Note', value: value('credit', 'reason', undefined), error: error('credit', 'reason') })}
    </div>${submit('Credit')}</form>`,
    )
  }
  ${panel(
    'processor',
    'Processor account and application fee',
    html`<form method="post" action="${base}/processor">${csrf}
    <div class="form-grid">
      ${inputField({ id: 'processor_account_id', label: 'Connected account', value: value('processor', 'processor_account_id', tenant.processor_account_id), error: error('processor', 'processor_account_id'), hint: 'acct_…; blank: the platform’s own account.' })}
      ${inputField({ id: 'application_fee_percent', label: 'Application fee (%)', value: value('processor', 'application_fee_percent', tenant.application_fee_percent), error: error('processor', 'application_fee_percent'), attributes: html`inputmode="decimal"` })}
    </div>${submit('Save')}</form>`,
  )}
  ${panel(
    'branding',
    'Branding',
    html`<form method="post" action="${base}/branding">${csrf}
    <div class="form-grid">
      ${inputField({ id: 'brand_name', label: 'Brand name', value: value('branding', 'brand_name', brand.brand_name), error: error('branding', 'brand_name') })}
      ${inputField({ id: 'slug', label: 'Portal slug', value: value('branding', 'slug', brand.slug), error: error('branding', 'slug') })}
      ${inputField({ id: 'logo_url', label: 'Logo URL', value: value('branding', 'logo_url', brand.logo_url), error: error('branding', 'logo_url') })}
      ${inputField({ id: 'primary_color', label: 'Colour', value: value('branding', 'primary_color', brand.primary_color), error: error('branding', 'primary_color'), hint: '#rrggbb' })}
      ${inputField({ id: 'support_email', label: 'Support email', type: 'email', value: value('branding', 'support_email', brand.support_email), error: error('branding', 'support_email') })}
    </div>${submit('Save branding')}</form>`,
  )}
  ${panel(
    'domains',
    'Custom domains',
    html`${
      state.domains.length > 0 &&
      html`<div class="table-wrap" role="region" aria-label="Domains" tabindex="0"><table><thead><tr><th scope="col">Domain</th><th scope="col">Status</th><th scope="col">TXT record</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead><tbody>
      ${state.domains.map(
        (
          domain,
        ) => html`<tr><td>${domain.hostname}</td><td>${statusBadge(domain.status === 'verified' ? 'active' : 'pending')}</td>
        <td><code>${domain.verification.name}</code><br><code>${domain.verification.value}</code></td>
        <td class="actions actions-stack">${domain.status !== 'verified' && actionButton({ action: `${base}/domains/${domain.id}/verify`, label: 'Verify', csrf, small: true })}
        ${actionButton({ action: `${base}/domains/${domain.id}/remove`, label: 'Remove', csrf, small: true, tone: 'danger', confirm: `Remove ${domain.hostname}?` })}</td></tr>`,
      )}</tbody></table></div>`
    }
    <form method="post" action="${base}/domains">${csrf}
      ${inputField({ id: 'hostname', label: 'Add a domain', value: value('domains', 'hostname', undefined), error: error('domains', 'hostname'), hint: 'e.g. portal.agency.example' })}
      ${submit('Add domain')}</form>`,
  )}
</div>`;
}
