/**
 * Console pages for the plan catalog: the list (offered plans, or all with archived ones), a
 * plan's detail, creating a plan (validated with the API's CreatePlan schema, errors beside the
 * fields) and archiving one. The same plan service as the API.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { CreatePlanBody, ListPlansQuery, type Plan } from '../../plans/schemas.js';
import {
  actionButton,
  badge,
  dateTime,
  emptyState,
  field,
  inputField,
  pager,
  select,
} from '../../web/components.js';
import { type FormFields, fieldIssues, formOf, integerField, textField, validated } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { redirectWithFlash } from '../cookies.js';
import { can, csrfField, memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';
import {
  type ProcessorAccountForm,
  processorAccountPanel,
  saveProcessorAccount,
} from './processor-account.js';

const PAGE_SIZE = 25;

function fractionDigits(currency: string): number {
  try {
    return (
      new Intl.NumberFormat('en-US', { style: 'currency', currency }).resolvedOptions()
        .maximumFractionDigits ?? 2
    );
  } catch {
    return 2;
  }
}

/** A price in the currency's minor unit as people read it: 2900 usd → $29.00. */
export function money(minor: number, currency: string): string {
  const digits = fractionDigits(currency);
  try {
    return new Intl.NumberFormat('en-US', { style: 'currency', currency: currency.toUpperCase() }).format(
      minor / 10 ** digits,
    );
  } catch {
    return `${(minor / 10 ** digits).toFixed(digits)} ${currency.toUpperCase()}`;
  }
}

/** "29.00" (major units) → 2900 (minor units); anything else is passed on as typed for the schema to refuse. */
function amountField(fields: FormFields, name: string, currency: string): number | string | undefined {
  const text = textField(fields, name);
  if (text === undefined) return undefined;
  const digits = fractionDigits(currency);
  const match = /^(\d{1,13})(?:\.(\d+))?$/.exec(text);
  if (!match || (match[2] ?? '').length > digits) return text;
  return Number(match[1]) * 10 ** digits + Number((match[2] ?? '').padEnd(digits, '0') || 0);
}

function decimalField(fields: FormFields, name: string): number | string | undefined {
  const text = textField(fields, name);
  if (text === undefined) return undefined;
  return /^\d+(\.\d+)?$/.test(text) ? Number(text) : text;
}

function planStatus(plan: Plan): Html {
  return plan.active ? badge('offered', 'success') : badge('archived', 'neutral');
}

type Values = Record<string, string | undefined>;

function planForm(reply: FastifyReply, values: Values, errors: Record<string, string>): Html {
  const text = (id: string, label: string, hint?: string, type = 'text', wide = false) =>
    inputField({ id, label, value: values[id], hint, error: errors[id], type, wide });
  return html`<form method="post" action="/console/plans" class="panel" novalidate>
  ${csrfField(reply)}
  <div class="form-grid">
    ${text('name', 'Name', 'What your clients see, e.g. "Starter".')}
    ${field({
      id: 'provider',
      label: 'Billed by',
      control: select({
        id: 'provider',
        choices: [
          { value: 'processor', label: 'Card processor (automatic)' },
          { value: 'agency', label: 'Your agency (offline invoices)' },
        ],
        selected: values.provider ?? 'processor',
        error: errors.provider,
      }),
      error: errors.provider,
    })}
    ${text('description', 'Description', 'Optional.', 'text', true)}
    ${text('currency', 'Currency', 'Lowercase ISO 4217 code, e.g. usd or eur.')}
    ${text('included_minutes', 'Included minutes', 'Call minutes granted each period.')}
    ${text('monthly_price', 'Monthly price', 'In the currency, e.g. 29.00.')}
    ${text('annual_price', 'Annual price', 'In the currency, e.g. 290.00.')}
    ${text('overage_rate', 'Overage rate', 'Per minute beyond the included ones, e.g. 0.12.')}
    ${text('topup_rate', 'Top-up rate', 'Per minute of a top-up, e.g. 0.10.')}
    ${text('trial_period_days', 'Trial days', 'Optional; 0 means no trial.')}
  </div>
  <div class="form-actions">
    <button class="button button-primary" type="submit">Create plan</button>
    <a class="button button-quiet" href="/console/plans">Cancel</a>
  </div>
</form>`;
}

function sendFormPage(
  request: FastifyRequest,
  reply: FastifyReply,
  values: Values,
  errors: Record<string, string>,
  status = 200,
) {
  return sendPage(request, reply, {
    title: 'New plan',
    section: 'plans',
    parent: { href: '/console/plans', label: 'Plans' },
    status,
    flash: Object.keys(errors).length
      ? { kind: 'error', message: 'The plan was not created: check the fields marked below.' }
      : undefined,
    body: planForm(reply, values, errors),
  });
}

export const planPages = consolePages(['plans', 'tenants'], async (app, services) => {
  const { plans, tenants } = services;

  /** The list, under the agency's processor account panel (`account`: its form shown again). */
  async function plansPage(
    request: FastifyRequest,
    reply: FastifyReply,
    account: ProcessorAccountForm = {},
    status = 200,
  ) {
    const raw = request.query as Record<string, string | undefined>;
    const show = raw.show === 'offered' ? 'offered' : 'all';
    const page = raw.page && /^\d{1,9}$/.test(raw.page) ? Number(raw.page) : (raw.page ?? 1);
    const query = validated(ListPlansQuery, {
      page,
      limit: PAGE_SIZE,
      active: show === 'offered' ? 'true' : 'false',
    });
    const [{ data, pagination }, tenant] = await Promise.all([
      plans.list(memberTenantId(request), query),
      tenants.get(memberTenantId(request)),
    ]);
    const admin = can(request, 'admin');
    const newPlan = html`<a class="button button-primary" href="/console/plans/new">Create plan</a>`;
    const filters = html`<form method="get" action="/console/plans" class="filters">
  ${field({
    id: 'show',
    label: 'Show',
    control: select({
      id: 'show',
      choices: [
        { value: 'all', label: 'All plans, archived too' },
        { value: 'offered', label: 'Offered plans only' },
      ],
      selected: show,
    }),
  })}
  <button class="button" type="submit">Apply</button>
</form>`;
    const table = html`<div class="panel panel-flush"><div class="table-wrap" role="region" aria-label="Plans" tabindex="0"><table>
  <thead><tr>
    <th scope="col">Name</th><th scope="col">Billed by</th><th scope="col" class="numeric">Monthly</th>
    <th scope="col" class="numeric">Annual</th><th scope="col" class="numeric">Included minutes</th>
    <th scope="col">Status</th><th scope="col">Created</th>
  </tr></thead>
  <tbody>${data.map(
    (plan) => html`<tr>
    <td><a href="/console/plans/${plan.id}"><strong>${plan.name}</strong></a>${plan.trial_period_days > 0 && html`<div class="subtle">${plan.trial_period_days}-day trial</div>`}</td>
    <td>${plan.provider === 'agency' ? 'Agency' : 'Card processor'}</td>
    <td class="numeric">${money(plan.monthly_price, plan.currency)}</td>
    <td class="numeric">${money(plan.annual_price, plan.currency)}</td>
    <td class="numeric">${plan.included_minutes.toLocaleString('en-US')}</td>
    <td>${planStatus(plan)}</td>
    <td>${dateTime(plan.created_at)}</td>
  </tr>`,
  )}</tbody>
</table></div></div>
${pager(pagination, '/console/plans', { show })}`;
    const body =
      pagination.total === 0
        ? html`${show === 'offered' && filters}<div class="panel">${emptyState({
            title: show === 'offered' ? 'No plan is offered' : 'No plans yet',
            text: 'A plan is what your clients subscribe to: a price, the minutes it includes, who bills it. Create your first plan to start selling.',
            action: admin ? newPlan : undefined,
          })}</div>`
        : html`${filters}${table}`;
    return sendPage(request, reply, {
      title: 'Plans',
      section: 'plans',
      status,
      actions: admin && pagination.total > 0 ? newPlan : undefined,
      flash: account.error
        ? { kind: 'error', message: 'The processor account was not changed: see the form below.' }
        : undefined,
      body: html`${body}${processorAccountPanel(request, reply, tenant, account)}`,
    });
  }

  app.get('/plans', async (request, reply) => plansPage(request, reply));

  app.post('/plans/processor-account', { config: { consoleAccess: 'owner' } }, async (request, reply) => {
    const saved = await saveProcessorAccount(tenants, memberTenantId(request), formOf(request));
    if (!saved.ok) return plansPage(request, reply, saved.form, saved.status);
    const account = saved.tenant.processor_account_id;
    return redirectWithFlash(
      reply,
      '/console/plans',
      account
        ? `Card payments now go to the Stripe account ${account}.`
        : 'Card payments now go to the platform’s account.',
    );
  });

  app.get('/plans/new', { config: { consoleAccess: 'admin' } }, async (request, reply) =>
    sendFormPage(request, reply, { currency: 'usd', provider: 'processor', trial_period_days: '0' }, {}),
  );

  app.post('/plans', async (request, reply) => {
    const fields = formOf(request);
    const values: Values = {};
    for (const name of [
      'name',
      'description',
      'provider',
      'currency',
      'monthly_price',
      'annual_price',
      'included_minutes',
      'overage_rate',
      'topup_rate',
      'trial_period_days',
    ]) {
      values[name] = textField(fields, name);
    }
    const currency = values.currency ?? 'usd';
    const data: Record<string, unknown> = {
      name: values.name,
      description: values.description,
      provider: values.provider,
      currency: values.currency,
      monthly_price: amountField(fields, 'monthly_price', currency),
      annual_price: amountField(fields, 'annual_price', currency),
      included_minutes: integerField(fields, 'included_minutes'),
      overage_rate: decimalField(fields, 'overage_rate'),
      topup_rate: decimalField(fields, 'topup_rate'),
      trial_period_days: integerField(fields, 'trial_period_days'),
    };
    for (const key of Object.keys(data)) if (data[key] === undefined) delete data[key];
    let created: Plan;
    try {
      created = await plans.create(memberTenantId(request), validated(CreatePlanBody, data));
    } catch (error) {
      const errors = fieldIssues(error);
      if (Object.keys(errors).length === 0) throw error;
      // The schema's pattern, said in words.
      if (errors.currency === 'has an invalid format.') {
        errors.currency = 'must be three lowercase letters (ISO 4217), e.g. usd.';
      }
      return sendFormPage(request, reply, values, errors, 422);
    }
    return redirectWithFlash(
      reply,
      `/console/plans/${created.id}`,
      `The plan “${created.name}” was created.`,
    );
  });

  app.get<{ Params: { id: string } }>('/plans/:id', async (request, reply) => {
    const plan = await plans.get(memberTenantId(request), request.params.id, { includeArchived: true });
    const admin = can(request, 'admin');
    return sendPage(request, reply, {
      title: plan.name,
      section: 'plans',
      parent: { href: '/console/plans', label: 'Plans' },
      actions:
        admin && plan.active
          ? actionButton({
              action: `/console/plans/${plan.id}/archive`,
              label: 'Archive plan',
              csrf: csrfField(reply),
              tone: 'danger',
              confirm: `Archive “${plan.name}”? It is no longer offered; current subscribers keep it.`,
            })
          : undefined,
      body: html`<div class="stats">
  <div class="stat"><p class="stat-label">Monthly</p><p class="stat-value">${money(plan.monthly_price, plan.currency)}</p></div>
  <div class="stat"><p class="stat-label">Annual</p><p class="stat-value">${money(plan.annual_price, plan.currency)}</p></div>
  <div class="stat"><p class="stat-label">Included minutes</p><p class="stat-value">${plan.included_minutes.toLocaleString('en-US')}</p></div>
  <div class="stat"><p class="stat-label">Status</p><p class="stat-value">${planStatus(plan)}</p></div>
</div>
<div class="panel">
  <dl class="details">
    <dt>Description</dt><dd>${plan.description ?? html`<span class="subtle">—</span>`}</dd>
    <dt>Billed by</dt><dd>${plan.provider === 'agency' ? 'Your agency (offline invoices)' : 'Card processor'}</dd>
    <dt>Currency</dt><dd>${plan.currency.toUpperCase()}</dd>
    <dt>Overage rate</dt><dd>${plan.overage_rate} per minute</dd>
    <dt>Top-up rate</dt><dd>${plan.topup_rate} per minute</dd>
    <dt>Trial</dt><dd>${plan.trial_period_days > 0 ? `${plan.trial_period_days} days` : 'None'}</dd>
    <dt>Created</dt><dd>${dateTime(plan.created_at)}</dd>
    <dt>Id</dt><dd class="mono">${plan.id}</dd>
  </dl>
</div>
<p><a href="/console/subscriptions?plan_id=${plan.id}">Subscriptions to this plan →</a></p>`,
    });
  });

  app.post<{ Params: { id: string } }>('/plans/:id/archive', async (request, reply) => {
    const plan = await plans.archive(request.params.id, memberTenantId(request));
    return redirectWithFlash(reply, `/console/plans/${plan.id}`, `The plan “${plan.name}” is archived.`);
  });
});
