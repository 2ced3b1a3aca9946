/**
 * The agency's processor account in the console (docs/processor-accounts.md): a panel on the Plans
 * page naming the connected Stripe account the agency's processor-billed plans are charged in. Only
 * owners change it (owners handle billing settings), through the same tenant service as the
 * operator's PATCH; everyone else reads it. The application fee is the operator's, shown only.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { ProcessorAccountInput, type Tenant } from '../../tenants/schemas.js';
import type { TenantService } from '../../tenants/service.js';
import { badge, inputField } from '../../web/components.js';
import { type FormFields, fieldIssues, textField, validated } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { can, csrfField } from '../layout.js';

/** The form as posted, with its errors by field, when it is shown again. */
export interface ProcessorAccountForm {
  value?: string;
  error?: string;
}

export const PROCESSOR_ACCOUNT_ACTION = '/console/plans/processor-account';

function feeText(tenant: Tenant): Html | string {
  if (tenant.application_fee_percent === null) return 'None';
  return tenant.processor_account_id
    ? `${tenant.application_fee_percent}%`
    : html`${tenant.application_fee_percent}% <span class="subtle">(charged only with a connected account)</span>`;
}

export function processorAccountPanel(
  request: FastifyRequest,
  reply: FastifyReply,
  tenant: Tenant,
  form: ProcessorAccountForm = {},
): Html {
  const account = tenant.processor_account_id;
  const status = account ? badge('Connected account', 'success') : badge('Platform account');
  const intro = html`<p class="subtle">Your clients’ card customers, subscriptions and top-up charges are made in this Stripe account (Stripe Connect). Empty: the platform’s own account. It can change only before the first client has a card on file: objects cannot move between Stripe accounts.</p>`;
  const fee = html`<dl class="details"><dt>Platform fee</dt><dd>${feeText(tenant)}</dd></dl>`;
  if (!can(request, 'owner')) {
    return html`<section class="panel" aria-labelledby="processor-account-title">
  <h2 id="processor-account-title">Card processor account ${status}</h2>
  ${intro}
  <dl class="details"><dt>Stripe account</dt><dd>${account ? html`<code>${account}</code>` : 'The platform’s'}</dd></dl>
  ${fee}
  <p class="subtle">Only owners change the processor account.</p>
</section>`;
  }
  return html`<section class="panel" aria-labelledby="processor-account-title">
  <h2 id="processor-account-title">Card processor account ${status}</h2>
  ${intro}
  <form method="post" action="${PROCESSOR_ACCOUNT_ACTION}" novalidate>
    ${csrfField(reply)}
    <div class="form-grid">
      ${inputField({ id: 'processor_account_id', label: 'Connected Stripe account', value: form.value ?? account ?? undefined, error: form.error, placeholder: 'acct_1Nv0FGQ9RKHgCVdK', hint: 'Leave empty to use the platform’s account.' })}
    </div>
    ${fee}
    <div class="form-actions"><button class="button button-primary" type="submit">Save account</button></div>
  </form>
</section>`;
}

/**
 * Saves the posted account through the tenant service. A refusal the form can show (a malformed
 * id: 422; objects already at the processor: 409) comes back as the form to show again.
 */
export async function saveProcessorAccount(
  tenants: TenantService,
  tenantId: string,
  fields: FormFields,
): Promise<{ ok: true; tenant: Tenant } | { ok: false; status: number; form: ProcessorAccountForm }> {
  const value = textField(fields, 'processor_account_id');
  try {
    const input = validated(ProcessorAccountInput, { processor_account_id: value ?? null });
    return { ok: true, tenant: await tenants.update(tenantId, input) };
  } catch (error) {
    if (error instanceof ApiError && error.code === 'conflict') {
      return { ok: false, status: 409, form: { value, error: error.message } };
    }
    const issue = fieldIssues(error).processor_account_id;
    if (!issue) throw error;
    const error_ =
      issue === 'has an invalid format.'
        ? 'must be a Stripe account id: acct_ and letters or digits.'
        : issue;
    return { ok: false, status: 422, form: { value, error: error_ } };
  }
}
