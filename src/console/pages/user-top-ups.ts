/**
 * Topping a user up from the console (docs/wallets.md, docs/top-ups.md): the user page's "Top up"
 * form posts here, and the top-up is made by services.topUps exactly as
 * `POST /api/v1/users/{id}/top-ups` makes it (processor plans: the card on file is charged;
 * agency plans: credited and recorded for the agency's invoicing). The form's one-time key is the
 * top-up's Idempotency-Key (src/web/once.ts): a double click or a refreshed POST answers the
 * first top-up and never charges twice. Every refusal is the user page again with its reason,
 * beside the minutes when it is about them; a declined card credits nothing.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { answerRecorder } from '../../core/idempotency/answer.js';
import { formatMoney } from '../../core/money.js';
import { balanceOf } from '../../credits/service.js';
import type { Plan } from '../../plans/schemas.js';
import { NO_CARD_MESSAGE } from '../../subscriptions/plan-change-rules.js';
import type { Subscription } from '../../subscriptions/schemas.js';
import {
  CreateTopUpBody,
  MAX_TOP_UP_MINUTES,
  MIN_TOP_UP_MINUTES,
  type TopUp,
} from '../../top-ups/schemas.js';
import { fieldIssues, formOf, integerField, textField, validated } from '../../web/forms.js';
import { isFormKey, newFormKey, oncePerFormKey } from '../../web/once.js';
import { redirectWithFlash } from '../cookies.js';
import { memberTenantId } from '../layout.js';
import type { ConsoleServices } from '../plugin.js';
import type { TopUpForm, TopUpStanding } from './user-top-up-views.js';

/** What the user pages (and these top-up forms on them) use. */
export const USER_PAGE_SERVICES = [
  'agents',
  'calls',
  'clock',
  'database',
  'idempotency',
  'plans',
  'subscriptions',
  'topUps',
  'users',
] as const;
export type UserPageServices = Pick<ConsoleServices, (typeof USER_PAGE_SERVICES)[number]>;

/** Subscriptions a top-up is priced by (the service's rule: active or trialing, already started). */
const PRICED_BY = ['active', 'trialing'];

const BOUNDS = `Enter a whole number of minutes from ${MIN_TOP_UP_MINUTES} to ${MAX_TOP_UP_MINUTES.toLocaleString('en-US')}.`;

/** The plan the user's top-ups are priced by, or why they cannot be topped up (shown before a post). */
export async function topUpStanding(
  services: UserPageServices,
  tenantId: string,
  user: { status: string },
  subscriptions: Subscription[],
): Promise<TopUpStanding> {
  if (user.status === 'blocked') return { reason: 'blocked' };
  const now = services.clock.now().getTime();
  const current = subscriptions.find(
    (s) => PRICED_BY.includes(s.status) && Date.parse(s.current_period_start) <= now,
  );
  if (!current) return { reason: 'no-plan' };
  const plan: Plan = await services.plans.get(tenantId, current.plan_id, { includeArchived: true });
  return { plan };
}

/** A refusal of the service as words for the agency, and whether the form keeps its key. */
function refusalOf(error: ApiError): { message: string; keepKey: boolean } | undefined {
  const details = error.details as { top_up_id?: unknown; decline_code?: unknown } | undefined;
  if (error.code === 'unprocessable_entity' && typeof details?.top_up_id === 'string') {
    const code = typeof details.decline_code === 'string' ? ` (${details.decline_code})` : '';
    return {
      message: `The client’s card was declined${code}: nothing was charged and no minutes were added. The declined attempt is listed below.`,
      keepKey: false,
    };
  }
  if (error.code === 'unprocessable_entity' && error.message === NO_CARD_MESSAGE) {
    return {
      message:
        'The client has no card on file, and this plan is billed to their card, so nothing was charged and no minutes were added.',
      keepKey: false,
    };
  }
  if (error.code === 'unprocessable_entity') {
    return { message: `No minutes were added: ${error.message}`, keepKey: false };
  }
  if (error.code === 'service_unavailable' || error.code === 'conflict') {
    // The same key again resumes this top-up with the same processor key: never a second charge.
    return {
      message:
        'The card processor has not answered yet and no minutes have been added. Press the button again in a moment: the card will not be charged twice.',
      keepKey: true,
    };
  }
  if (error.code === 'idempotency_key_reuse') {
    return {
      message:
        'This form was already sent with another number of minutes. Check the top-ups below before topping up again.',
      keepKey: false,
    };
  }
  return undefined;
}

/** How the top-up was paid, for the flash that follows it. */
function paidBy(topUp: TopUp): string {
  if (topUp.amount === 0) return 'at no charge';
  const amount = formatMoney(topUp.amount, topUp.currency);
  return topUp.billing === 'processor'
    ? `${amount} charged to the client’s card on file`
    : `${amount} recorded for your invoicing`;
}

/**
 * POST /console/users/{id}/top-ups. `render` shows the user page again with the form's state (a
 * refusal); success is a redirect with a flash, so a refresh never posts again.
 */
export async function postTopUp(
  request: FastifyRequest<{ Params: { id: string } }>,
  reply: FastifyReply,
  services: UserPageServices,
  render: (form: TopUpForm, status: number) => Promise<FastifyReply>,
): Promise<FastifyReply> {
  const tenantId = memberTenantId(request);
  // Another tenant's user (or a deleted one) is the 404 page before anything is read from the form.
  const user = await services.users.get(tenantId, request.params.id);
  const fields = formOf(request);
  const typed = textField(fields, 'minutes');
  const formKey = textField(fields, 'form_key');
  if (!isFormKey(formKey)) {
    // Without its key a second post would be a second charge: nothing is done without one.
    return render(
      {
        minutes: typed,
        refusal:
          'This form is out of date and nothing was done. Check the minutes and press the button again.',
      },
      422,
    );
  }
  let body: CreateTopUpBody;
  try {
    body = validated(CreateTopUpBody, { minutes: integerField(fields, 'minutes') });
  } catch (error) {
    if (!(error instanceof ApiError) || error.code !== 'validation_failed') throw error;
    return render({ minutes: typed, formKey, issue: BOUNDS }, 422);
  }
  const path = `/console/users/${user.id}/top-ups`;
  const answer = (topUp: TopUp) => ({ status: 201, body: { data: topUp }, headers: {} });
  let topUp: TopUp;
  try {
    topUp = await oncePerFormKey(
      services.idempotency,
      { tenantId, formKey, path, fields: body },
      (claim) => services.topUps.create(tenantId, user.id, body, answerRecorder(claim, answer)),
      (stored) => (stored as { data: TopUp }).data,
    );
  } catch (error) {
    if (!(error instanceof ApiError)) throw error;
    const issue = fieldIssues(error).minutes;
    if (error.code === 'validation_failed' && issue) {
      // The service's own rule on the amount (one that rounds to nothing at the plan's rate).
      return render({ minutes: typed, issue: `This number of minutes ${issue}.` }, 422);
    }
    const refused = refusalOf(error);
    if (!refused) throw error;
    return render(
      { minutes: typed, refusal: refused.message, formKey: refused.keepKey ? formKey : newFormKey() },
      error.status,
    );
  }
  const balance = await balanceOf({ db: services.database.db }, { tenantId, userId: user.id });
  return redirectWithFlash(
    reply,
    `/console/users/${user.id}#top-ups`,
    `${topUp.minutes.toLocaleString('en-US')} minutes added (${paidBy(topUp)}); the balance is ${balance.balance_minutes.toLocaleString('en-US')} minutes.`,
  );
}
