/**
 * The portal's overview: the user's minutes balance and plan, their agents at a glance, and their
 * latest calls. Read through the same services as the API (credits, subscriptions, plans, agents,
 * calls), always for the signed-in user of the portal's tenant.
 */

import { balanceOf } from '../credits/service.js';
import type { Plan } from '../plans/schemas.js';
import type { Subscription } from '../subscriptions/schemas.js';
import { emptyState, statusBadge } from '../web/components.js';
import { type Html, html } from '../web/html.js';
import type { PortalServices } from './context.js';
import { href, portalOf, userOf } from './context.js';
import { moreMinutesNote, sendPage } from './layout.js';
import type { PortalPage } from './router.js';
import { callTable, day, minutes, price } from './views.js';

const CURRENT = ['active', 'trialing', 'past_due'];
const RECENT_CALLS = 5;
/** Subscriptions whose plan prices a top-up (the top-up service's rule). */
const BUYABLE = ['active', 'trialing'];

function planCard(subscription: Subscription | undefined, plan: Plan | undefined): Html {
  if (!subscription || !plan) {
    return html`<section class="stat" aria-labelledby="plan-label">
  <h2 class="stat-label" id="plan-label">Plan</h2>
  <p class="stat-value stat-value-text">No plan</p>
  <p class="stat-note">You have no subscription at the moment.</p>
</section>`;
  }
  const renewal = subscription.cancel_at_period_end
    ? `Ends on ${day(subscription.current_period_end)}`
    : `Renews on ${day(subscription.current_period_end)}`;
  return html`<section class="stat" aria-labelledby="plan-label">
  <h2 class="stat-label" id="plan-label">Plan</h2>
  <p class="stat-value stat-value-text">${plan.name} ${statusBadge(subscription.status)}</p>
  <p class="stat-note">${minutes(plan.included_minutes)} a month${
    plan.monthly_price > 0 ? ` · ${price(plan.monthly_price, plan.currency)} a month` : ''
  }</p>
  <p class="stat-note">${renewal}</p>
</section>`;
}

export function homePages(services: PortalServices): PortalPage[] {
  const { users, subscriptions, plans, agents, calls } = services;
  return [
    {
      method: 'GET',
      path: '/',
      async handler(request, reply) {
        const { brand } = portalOf(request);
        const { tenantId, userId } = userOf(request);
        const [user, balance, subscriptionPage, agentPage, recent] = await Promise.all([
          users.get(tenantId, userId),
          balanceOf({ db: services.database.db }, { tenantId, userId }),
          subscriptions.list(tenantId, { user_id: userId, page: 1, limit: 10, sort_order: 'desc' }),
          agents.list(tenantId, {
            user_id: userId,
            page: 1,
            limit: 100,
            sort_by: 'name',
            sort_order: 'asc',
          }),
          calls.listForTenant(tenantId, {
            user_id: userId,
            page: 1,
            limit: RECENT_CALLS,
            sort_order: 'desc',
          }),
        ]);
        const subscription = subscriptionPage.data.find((s) => CURRENT.includes(s.status));
        const plan = subscription
          ? await plans.get(tenantId, subscription.plan_id, { includeArchived: true }).catch(() => undefined)
          : undefined;
        const left = balance.balance_minutes;
        const live = agentPage.data.filter((agent) => agent.published_version !== null).length;
        const agentNames = new Map(agentPage.data.map((agent) => [agent.id, agent.name]));

        const minutesCard = html`<section class="stat stat-primary" aria-labelledby="minutes-label">
  <h2 class="stat-label" id="minutes-label">Minutes left</h2>
  <p class="stat-value${left <= 0 ? ' stat-value-danger' : ''}">${left.toLocaleString('en-US')}</p>
  ${
    left <= 0
      ? html`<p class="stat-note stat-note-danger">Your agents cannot place calls until minutes are added.</p>`
      : html`<p class="stat-note">${plan ? `${minutes(plan.included_minutes)} included each month` : 'Minutes available for calls'}</p>`
  }
  <p class="stat-note">${
    subscription && BUYABLE.includes(subscription.status)
      ? html`<a class="button button-primary button-small" href="${href(request, '/top-ups')}">Buy minutes</a>`
      : moreMinutesNote(brand)
  }</p>
</section>`;
        const agentsCard = html`<section class="stat" aria-labelledby="agents-label">
  <h2 class="stat-label" id="agents-label">Agents</h2>
  <p class="stat-value">${agentPage.pagination.total}</p>
  <p class="stat-note">${live} published · <a href="${href(request, '/agents')}">Manage agents</a></p>
</section>`;
        const recentCalls =
          recent.pagination.total === 0
            ? html`<section class="panel" aria-labelledby="recent-title"><h2 id="recent-title">Recent calls</h2>${emptyState(
                {
                  title: 'No calls yet',
                  text: 'Calls your agents place appear here with their outcome and the minutes they used.',
                },
              )}</section>`
            : html`<section class="panel panel-flush" aria-labelledby="recent-title">
  <div class="panel-header"><h2 id="recent-title">Recent calls</h2><a href="${href(request, '/calls')}">All ${recent.pagination.total.toLocaleString('en-US')} calls →</a></div>
  ${callTable(request, recent.data, agentNames)}
</section>`;
        return sendPage(request, reply, {
          title: `Welcome, ${user.name ?? user.email}`,
          section: 'home',
          body: html`<div class="stats">${minutesCard}${planCard(subscription, plan)}${agentsCard}</div>
${recentCalls}`,
        });
      },
    },
  ];
}
