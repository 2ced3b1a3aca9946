/**
 * Buying minutes in the portal (docs/wallets.md, docs/top-ups.md): the Minutes page shows the
 * balance, the "Buy minutes" form priced by the current plan's topup_rate, and the user's past
 * top-ups; its POST tops the signed-in user up through services.topUps, the service behind
 * `POST /api/v1/users/{id}/top-ups`. The form's one-time key is the top-up's Idempotency-Key,
 * bound to the user (./once.ts): a double click or a refresh answers the first purchase and never
 * charges again. Every refusal is the page again with its reason (beside the field when it is
 * the amount); a declined card credits nothing.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Brand } from '../branding/service.js';
import { ApiError } from '../core/errors.js';
import { balanceOf } from '../credits/service.js';
import type { Plan } from '../plans/schemas.js';
import { NO_CARD_MESSAGE } from '../subscriptions/plan-change-rules.js';
import { MAX_TOP_UP_MINUTES, MIN_TOP_UP_MINUTES, type TopUp } from '../top-ups/schemas.js';
import { type FormFields, fieldIssues, formOf, textField } from '../web/forms.js';
import { type Html, html } from '../web/html.js';
import { pageNumber } from './agents.js';
import type { PortalServices } from './context.js';
import { portalOf, redirectWithFlash, userOf } from './context.js';
import { csrfField, sendPage } from './layout.js';
import { isFormKey, newFormKey, oncePerUserFormKey } from './once.js';
import type { PortalPage } from './router.js';
import {
  type BuyForm,
  buyForm,
  cannotBuy,
  confirmBuy,
  contact,
  OTHER,
  PRESETS,
  topUpTable,
} from './top-up-views.js';
import { minutes, price, rate } from './views.js';

const PAGE_SIZE = 20;
/** What the form key's fingerprint names: the same for the slug and the custom-domain address. */
const ACTION = '/portal/top-ups';
/** Subscriptions a top-up can be priced by (the service's rule: active or trialing, already started). */
const BUYABLE = ['active', 'trialing'];

type Standing = { plan: Plan } | { reason: 'no-plan' | 'past-due' };

interface PageState {
  form?: BuyForm;
  /** The minutes asked for, awaiting the client's confirmation. */
  confirming?: number;
  /** A refusal shown above the form (the flash of a redirect is for successes). */
  error?: Html;
  status?: number;
}

/** Nothing chosen: the client picks the amount, then confirms it with its price. */
const freshForm = (): BuyForm => ({
  choice: '',
  other: '',
  formKey: newFormKey(),
  issues: {},
});

/** The minutes the form asks for, or the reason beside the field that is wrong. */
function minutesOf(fields: FormFields): { minutes: number } | { issues: BuyForm['issues'] } {
  const choice = textField(fields, 'minutes');
  const other = textField(fields, 'other_minutes');
  const bounds = `Enter a whole number from ${MIN_TOP_UP_MINUTES} to ${MAX_TOP_UP_MINUTES.toLocaleString('en-US')}.`;
  if (choice === OTHER || (choice === undefined && other !== undefined)) {
    if (other === undefined) return { issues: { other_minutes: 'Enter how many minutes to buy.' } };
    const count = /^\d{1,9}$/.test(other) ? Number(other) : Number.NaN;
    if (!Number.isInteger(count) || count < MIN_TOP_UP_MINUTES || count > MAX_TOP_UP_MINUTES) {
      return { issues: { other_minutes: bounds } };
    }
    return { minutes: count };
  }
  if (choice === undefined || !PRESETS.map(String).includes(choice)) {
    return { issues: { minutes: 'Choose how many minutes to buy.' } };
  }
  if (other !== undefined && other !== choice) {
    // Two different amounts: buying either could be the wrong one.
    return {
      issues: {
        other_minutes: `To buy ${other} minutes choose “Another amount”; to buy ${choice}, clear this field.`,
      },
    };
  }
  return { minutes: Number(choice) };
}

export function topUpPages(services: PortalServices): PortalPage[] {
  const { subscriptions, plans, topUps, idempotency } = services;

  /** The plan the user's minutes are priced by, or why there is none to buy with. */
  async function standing(tenantId: string, userId: string): Promise<Standing> {
    const now = services.clock.now().getTime();
    const page = await subscriptions.list(tenantId, {
      user_id: userId,
      page: 1,
      limit: 10,
      sort_order: 'desc',
    });
    const current = page.data.find(
      (s) => BUYABLE.includes(s.status) && Date.parse(s.current_period_start) <= now,
    );
    if (!current) {
      return { reason: page.data.some((s) => s.status === 'past_due') ? 'past-due' : 'no-plan' };
    }
    const plan = await plans.get(tenantId, current.plan_id, { includeArchived: true });
    return { plan };
  }

  async function minutesPage(
    request: FastifyRequest,
    reply: FastifyReply,
    state: PageState = {},
  ): Promise<FastifyReply> {
    const { brand } = portalOf(request);
    const { tenantId, userId } = userOf(request);
    const query = request.query as { page?: unknown };
    const [balance, found, history] = await Promise.all([
      balanceOf({ db: services.database.db }, { tenantId, userId }),
      standing(tenantId, userId),
      topUps.list(tenantId, userId, { page: pageNumber(query.page), limit: PAGE_SIZE }),
    ]);
    const left = balance.balance_minutes;
    const priced = 'plan' in found ? found.plan : undefined;
    const stats = html`<div class="stats stats-2">
  <section class="stat stat-primary" aria-labelledby="minutes-label">
    <h2 class="stat-label" id="minutes-label">Minutes left</h2>
    <p class="stat-value${left <= 0 ? ' stat-value-danger' : ''}">${left.toLocaleString('en-US')}</p>
    <p class="stat-note${left <= 0 ? ' stat-note-danger' : ''}">${
      left <= 0 ? 'Your agents cannot place calls until minutes are added.' : 'Available for calls'
    }</p>
  </section>
  <section class="stat" aria-labelledby="price-label">
    <h2 class="stat-label" id="price-label">Price per minute</h2>
    <p class="stat-value stat-value-text">${priced ? rate(priced.topup_rate, priced.currency) : '—'}</p>
    <p class="stat-note">${priced ? `With your ${priced.name} plan` : 'Set by your plan'}</p>
  </section>
</div>`;
    const form = state.form ?? freshForm();
    const buy = !priced
      ? cannotBuy('reason' in found ? found.reason : 'no-plan', brand)
      : state.confirming !== undefined
        ? confirmBuy({ request, plan: priced, brand, csrf: csrfField(reply), form, count: state.confirming })
        : buyForm({ request, plan: priced, brand, csrf: csrfField(reply), form });
    return sendPage(request, reply, {
      title: 'Minutes',
      section: 'top-ups',
      status: state.status,
      body: html`${stats}
<section class="panel" aria-labelledby="buy-title" id="buy">
  <h2 id="buy-title">Buy minutes</h2>
  ${state.error && html`<div class="flash flash-error" role="alert">${state.error}</div>`}
  ${buy}
</section>
<section class="panel panel-flush" aria-labelledby="history-title">
  <div class="panel-header"><h2 id="history-title">Your purchases</h2></div>
  ${topUpTable(request, history, brand)}
</section>`,
    });
  }

  /** The refusal of a purchase as words for the client; undefined for what is not a refusal. */
  function refusal(
    error: ApiError,
    brand: Brand,
  ): { message: Html; status: number; keepKey: boolean } | undefined {
    const details = error.details as { top_up_id?: unknown } | undefined;
    if (error.code === 'unprocessable_entity' && typeof details?.top_up_id === 'string') {
      return {
        message: html`Your card was declined, so nothing was charged and no minutes were added. To use another card, contact ${contact(brand)}.`,
        status: 422,
        keepKey: false,
      };
    }
    if (error.code === 'unprocessable_entity' && error.message === NO_CARD_MESSAGE) {
      return {
        message: html`There is no card on file for you yet, so minutes cannot be charged. Contact ${contact(brand)} to add one.`,
        status: 422,
        keepKey: false,
      };
    }
    if (error.code === 'unprocessable_entity') {
      return {
        message: html`This purchase could not be made, and nothing was charged. Try another amount, or contact ${contact(brand)}.`,
        status: 422,
        keepKey: false,
      };
    }
    if (error.code === 'service_unavailable' || error.code === 'conflict') {
      // The same key again resumes this purchase (never a second charge), so the form keeps it.
      return {
        message: html`The payment is taking longer than usual and no minutes have been added yet. Buy the same amount again in a moment: you will not be charged twice.`,
        status: error.status,
        keepKey: true,
      };
    }
    if (error.code === 'idempotency_key_reuse') {
      return {
        message: html`This form was already used to buy another amount. Check your purchases below before buying again.`,
        status: 409,
        keepKey: false,
      };
    }
    return undefined;
  }

  return [
    {
      method: 'GET',
      path: '/top-ups',
      handler: (request, reply) => minutesPage(request, reply),
    },
    {
      method: 'POST',
      path: '/top-ups',
      async handler(request, reply) {
        const { tenantId, userId } = userOf(request);
        const fields = formOf(request);
        const formKey = textField(fields, 'form_key');
        const form: BuyForm = {
          choice: textField(fields, 'minutes') ?? '',
          other: textField(fields, 'other_minutes') ?? '',
          formKey: isFormKey(formKey) ? formKey : newFormKey(),
          issues: {},
        };
        if (!isFormKey(formKey)) {
          return minutesPage(request, reply, {
            form,
            status: 422,
            error: html`This form is out of date and nothing was bought. Check the amount and buy again.`,
          });
        }
        const asked = minutesOf(fields);
        if ('issues' in asked) {
          return minutesPage(request, reply, {
            form: { ...form, issues: asked.issues },
            status: 422,
            error: html`Nothing was bought: fix the amount marked below.`,
          });
        }
        if (textField(fields, 'confirm') !== 'yes') {
          // The first step only shows the minutes and their price; nothing is charged.
          return minutesPage(request, reply, { form, confirming: asked.minutes });
        }
        const body = { minutes: asked.minutes };
        let topUp: TopUp;
        try {
          topUp = await oncePerUserFormKey(
            idempotency,
            { tenantId, userId, formKey, action: ACTION, fields: body },
            (claim) =>
              topUps.create(tenantId, userId, body, {
                claim,
                answer: (result) => ({ status: 201, body: { data: result }, headers: {} }),
              }),
            (stored) => (stored as { data: TopUp }).data,
          );
        } catch (error) {
          if (!(error instanceof ApiError)) throw error;
          const amountIssue = fieldIssues(error).minutes;
          if (error.code === 'validation_failed' && amountIssue) {
            // The service's own rule on the amount (one that rounds to nothing at the plan's rate).
            const field = form.choice === OTHER ? 'other_minutes' : 'minutes';
            return minutesPage(request, reply, {
              form: { ...form, issues: { [field]: `This amount ${amountIssue}.` } },
              status: 422,
              error: html`Nothing was bought: fix the amount marked below.`,
            });
          }
          const refused = refusal(error, portalOf(request).brand);
          if (!refused) throw error;
          return minutesPage(request, reply, {
            form: { ...form, formKey: refused.keepKey ? formKey : newFormKey() },
            status: refused.status,
            error: refused.message,
          });
        }
        const balance = await balanceOf({ db: services.database.db }, { tenantId, userId });
        const paid =
          topUp.amount === 0
            ? 'at no charge'
            : topUp.billing === 'processor'
              ? `${price(topUp.amount, topUp.currency)} charged to your card on file`
              : `${price(topUp.amount, topUp.currency)} to be invoiced by ${portalOf(request).brand.name}`;
        return redirectWithFlash(
          reply,
          '/top-ups',
          `${minutes(topUp.minutes)} added (${paid}). You now have ${minutes(balance.balance_minutes)}.`,
        );
      },
    },
  ];
}
