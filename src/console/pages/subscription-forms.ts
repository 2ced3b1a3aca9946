/**
 * Subscribing a user to a plan, changing their plan and cancelling at period end from the console
 * (docs/console.md), through the services of the API. Choosing a plan first shows what will happen
 * — `subscriptions.preview`, the same rules and refusals as `POST /api/v1/subscriptions`: a new
 * subscription and what it charges, or an upgrade or downgrade and its outcome (prorated by the
 * card processor, or for agency billing extra minutes now or the new plan from next month) — and
 * only the confirmation acts: `subscriptions.create` with the form's one-time key as its
 * Idempotency-Key (so a double click bills once). Cancelling asks on a page of its own first, then
 * is `subscriptions.cancelAtPeriodEnd` as `POST /api/v1/subscriptions/{id}/cancel`.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { answerRecorder } from '../../core/idempotency/answer.js';
import type { Plan } from '../../plans/schemas.js';
import { CreateSubscriptionBody, type Subscription } from '../../subscriptions/schemas.js';
import type { SubscribePreview } from '../../subscriptions/service.js';
import type { UserListItem } from '../../users/schemas.js';
import { actionButton, dateTime, field, select } from '../../web/components.js';
import { formOf, textField, validated } from '../../web/forms.js';
import { html } from '../../web/html.js';
import { newFormKey, oncePerFormKey } from '../../web/once.js';
import { redirectWithFlash } from '../cookies.js';
import { csrfField, memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';
import { money } from './plans.js';

const minutes = (count: number) => `${count.toLocaleString('en-US')} minute${count === 1 ? '' : 's'}`;
const day = (date: Date | string) => new Date(date).toISOString().slice(0, 10);
const priced = (plan: Pick<Plan, 'monthly_price' | 'currency'>) =>
  `${money(plan.monthly_price, plan.currency)} a month`;

/** The rule and its outcome, in words, before the agency confirms. */
export function previewWords(preview: SubscribePreview): { rule: string; outcome: string[] } {
  const { plan } = preview;
  if (preview.kind === 'create') {
    const trial = plan.trial_period_days > 0 ? `A ${plan.trial_period_days}-day trial starts now` : undefined;
    if (plan.provider === 'processor') {
      return {
        rule: 'New subscription, billed to the client’s card on file.',
        outcome: [
          trial
            ? `${trial}; then ${priced(plan)} is charged to the card.`
            : `${money(plan.monthly_price, plan.currency)} is charged to the card now, then every month. A declined charge leaves the subscription inactive.`,
          `${minutes(plan.included_minutes)} are included each period.`,
        ],
      };
    }
    return {
      rule: 'New subscription, billed by you (agency billing).',
      outcome: [
        `${trial ?? 'It starts now'}; ${minutes(plan.included_minutes)} are granted now and at each renewal.`,
        `${priced(plan)}: you invoice the client yourself.`,
      ],
    };
  }
  const { from, kind } = preview;
  const rule =
    kind === 'upgrade'
      ? `Upgrade: ${plan.name} (${priced(plan)}) costs at least as much as ${from.name} (${priced(from)}).`
      : `Downgrade: ${plan.name} (${priced(plan)}) costs less than ${from.name} (${priced(from)}).`;
  if (plan.provider === 'processor') {
    return {
      rule,
      outcome:
        kind === 'upgrade'
          ? [
              'The plan changes now.',
              'The card processor invoices the prorated difference for the rest of the current period and charges the card at once; a declined charge leaves the subscription past due.',
            ]
          : ['The plan changes now.', 'The unused part of the current plan is credited on the next invoice.'],
    };
  }
  const agency = preview.agency;
  if (agency?.action === 'cap_and_follow') {
    return {
      rule,
      outcome: [
        `${from.name} stays until ${day(agency.capEnd)} 23:59 UTC, the end of this month.`,
        `${plan.name} starts on ${day(agency.nextStart)}, with ${minutes(plan.included_minutes)}. Nothing changes before then.`,
      ],
    };
  }
  const extra = agency?.action === 'take_plan' ? agency.extraMinutes : 0;
  return {
    rule,
    outcome: [
      'The plan changes now; the current period keeps its end date.',
      extra > 0
        ? `${minutes(extra)} more are granted now for the current period (the difference of included minutes).`
        : 'No minutes are added for the current period.',
    ],
  };
}

interface ChooseState {
  planId?: string;
  preview?: SubscribePreview;
  refusal?: string;
  status?: number;
}

async function choosePage(
  request: FastifyRequest,
  reply: FastifyReply,
  user: UserListItem,
  plans: Plan[],
  state: ChooseState,
) {
  const name = user.name ?? user.email;
  const changing = user.plan_id !== null;
  const title = changing ? `Change ${name}’s plan` : `Subscribe ${name} to a plan`;
  const choices = plans
    .filter((plan) => plan.id !== user.plan_id)
    .map((plan) => ({
      value: plan.id,
      label: `${plan.name} — ${priced(plan)}, ${minutes(plan.included_minutes)} (${plan.provider === 'processor' ? 'card' : 'agency billing'})`,
    }));
  const words = state.preview && previewWords(state.preview);
  const confirm =
    state.preview &&
    words &&
    html`<section class="panel" aria-labelledby="preview-title">
  <h2 id="preview-title">What happens</h2>
  <p><strong>${words.rule}</strong></p>
  <ul>${words.outcome.map((line) => html`<li>${line}</li>`)}</ul>
  <form method="post" action="/console/users/${user.id}/subscription" class="form-actions">
    ${csrfField(reply)}<input type="hidden" name="form_key" value="${newFormKey()}">
    <input type="hidden" name="plan_id" value="${state.preview.plan.id}">
    <button class="button button-primary" type="submit">${changing ? `Confirm: move to ${state.preview.plan.name}` : `Confirm: subscribe to ${state.preview.plan.name}`}</button>
    <a class="button button-quiet" href="/console/users/${user.id}">Cancel</a>
  </form>
</section>`;
  return sendPage(request, reply, {
    title,
    section: 'users',
    parent: { href: `/console/users/${user.id}`, label: name },
    status: state.status ?? 200,
    flash: state.refusal ? { kind: 'error', message: state.refusal } : undefined,
    body: html`${changing && html`<p class="muted">Now on <strong>${user.plan_name}</strong>. Pick the new plan: what the change does is shown before anything happens.</p>`}
<form method="get" action="/console/users/${user.id}/subscription" class="panel">
  <div class="form-grid">
    ${
      choices.length === 0
        ? html`<p class="muted field-wide">No other active plan to offer. <a href="/console/plans">Create a plan</a> first.</p>`
        : field({
            id: 'plan_id',
            label: 'Plan',
            wide: true,
            control: select({ id: 'plan_id', choices, selected: state.planId }),
          })
    }
  </div>
  ${choices.length > 0 && html`<div class="form-actions"><button class="button" type="submit">Show what happens</button></div>`}
</form>
${confirm}`,
  });
}

/** A refusal the page shows in words (the API's message), or undefined for a bug. */
function refusalOf(error: unknown): ApiError | undefined {
  return error instanceof ApiError && error.status < 500 ? error : undefined;
}

export const subscriptionFormPages = consolePages(
  ['users', 'plans', 'subscriptions', 'idempotency'],
  async (app, { users, plans, subscriptions, idempotency }) => {
    const activePlans = async (tenantId: string) =>
      (
        await plans.list(tenantId, {
          page: 1,
          limit: 100,
          active: 'true',
          sort_by: 'name',
          sort_order: 'asc',
        })
      ).data as Plan[];

    app.get<{ Params: { id: string } }>(
      '/users/:id/subscription',
      { config: { consoleAccess: 'admin' } },
      async (request, reply) => {
        const tenantId = memberTenantId(request);
        const user = await users.get(tenantId, request.params.id);
        const planId = (request.query as { plan_id?: string }).plan_id?.trim() || undefined;
        const offered = await activePlans(tenantId);
        if (!planId) return choosePage(request, reply, user, offered, {});
        try {
          const body = validated(CreateSubscriptionBody, { user_id: user.id, plan_id: planId });
          const preview = await subscriptions.preview(tenantId, body);
          return choosePage(request, reply, user, offered, { planId, preview });
        } catch (error) {
          const refused = refusalOf(error);
          if (!refused) throw error;
          return choosePage(request, reply, user, offered, {
            planId,
            refusal: `This plan cannot be chosen: ${refused.message}`,
            status: refused.status,
          });
        }
      },
    );

    app.post<{ Params: { id: string } }>('/users/:id/subscription', async (request, reply) => {
      const tenantId = memberTenantId(request);
      const user = await users.get(tenantId, request.params.id);
      const fields = formOf(request);
      const planId = textField(fields, 'plan_id') ?? '';
      const path = `/console/users/${user.id}/subscription`;
      const answer = (result: { subscription: Subscription }) => ({
        status: 201,
        body: { data: result.subscription },
        headers: {},
      });
      try {
        const body = validated(CreateSubscriptionBody, { user_id: user.id, plan_id: planId });
        const subscription = await oncePerFormKey(
          idempotency,
          { tenantId, formKey: textField(fields, 'form_key'), path, fields: body },
          async (claim) =>
            (await subscriptions.create(tenantId, body, answerRecorder(claim, answer))).subscription,
          (stored) => (stored as { data: Subscription }).data,
        );
        const planName = (await plans.namesOf(tenantId, [subscription.plan_id])).get(subscription.plan_id);
        const starts = Date.parse(subscription.current_period_start) > Date.now();
        return redirectWithFlash(
          reply,
          `/console/users/${user.id}`,
          starts
            ? `${planName} starts on ${day(subscription.current_period_start)}.`
            : `${user.name ?? user.email} is on ${planName} (${subscription.status.replace('_', ' ')}).`,
        );
      } catch (error) {
        const refused = refusalOf(error);
        if (!refused) throw error;
        return choosePage(request, reply, user, await activePlans(tenantId), {
          planId,
          refusal: `Nothing changed: ${refused.message}`,
          status: refused.status,
        });
      }
    });

    app.get<{ Params: { id: string } }>(
      '/subscriptions/:id/cancel',
      { config: { consoleAccess: 'admin' } },
      async (request, reply) => {
        const tenantId = memberTenantId(request);
        const sub = await subscriptions.get(tenantId, request.params.id);
        const [planName, who] = await Promise.all([
          plans.namesOf(tenantId, [sub.plan_id]).then((names) => names.get(sub.plan_id) ?? sub.plan_id),
          users.namesOf(tenantId, [sub.user_id]).then((names) => names.get(sub.user_id)),
        ]);
        const started = Date.parse(sub.current_period_start) <= Date.now();
        return sendPage(request, reply, {
          title: `Cancel ${planName}?`,
          section: 'subscriptions',
          parent: { href: `/console/subscriptions/${sub.id}`, label: `Subscription to ${planName}` },
          body: html`<div class="panel stack">
  <p>${who?.name ?? who?.email ?? 'The user'}’s subscription to <strong>${planName}</strong>:</p>
  <ul>${
    started
      ? html`<li>stays as it is until the end of the current period, ${dateTime(sub.current_period_end)}: the plan and its minutes remain;</li>
    <li>then ends: no renewal, nothing more billed${sub.provider === 'processor' ? ' to the card' : ''}.</li>
    <li>A downgrade scheduled to follow it is canceled too.</li>`
      : html`<li>has not started yet (it was to start ${dateTime(sub.current_period_start)}): it is canceled now and never starts.</li>`
  }</ul>
  <div class="form-actions">${actionButton({
    action: `/console/subscriptions/${sub.id}/cancel`,
    label: started ? 'Cancel at period end' : 'Cancel it now',
    csrf: csrfField(reply),
    tone: 'danger',
  })}<a class="button button-quiet" href="/console/subscriptions/${sub.id}">Keep it</a></div>
</div>`,
        });
      },
    );

    app.post<{ Params: { id: string } }>('/subscriptions/:id/cancel', async (request, reply) => {
      const tenantId = memberTenantId(request);
      const sub = await subscriptions.cancelAtPeriodEnd(tenantId, request.params.id);
      return redirectWithFlash(
        reply,
        `/console/subscriptions/${sub.id}`,
        sub.status === 'canceled'
          ? 'The subscription is canceled.'
          : `The subscription ends on ${day(sub.current_period_end)}; nothing more is billed after that.`,
      );
    });
  },
);
