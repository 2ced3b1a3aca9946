import { ListSubscriptionsQuery, PUBLIC_STATUSES } from '../../subscriptions/schemas.js';
import { dateTime, emptyState, field, pager, select, statusBadge } from '../../web/components.js';
import { validated } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { can, memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';

const PAGE_SIZE = 25;

const PROVIDERS: Record<string, string> = {
  processor: 'Card processor',
  agency: 'Agency',
  marketplace: 'Marketplace',
  custom: 'Custom',
};

function userCell(
  id: string,
  names: Map<string, { name: string | null; email: string; deleted: boolean }>,
): Html {
  const user = names.get(id);
  if (!user) return html`<span class="mono subtle">${id}</span>`;
  const label = html`<strong>${user.name ?? user.email}</strong><div class="subtle">${user.email}</div>`;
  return user.deleted
    ? html`${label}<div class="subtle">deleted</div>`
    : html`<a href="/console/users/${id}">${label}</a>`;
}

export const subscriptionPages = consolePages(['subscriptions', 'users', 'plans'], async (app, services) => {
  const { subscriptions, users, plans } = services;

  app.get('/subscriptions', async (request, reply) => {
    const raw = request.query as Record<string, string | undefined>;
    const status = (PUBLIC_STATUSES as readonly string[]).includes(raw.status ?? '') ? raw.status : undefined;
    const userId = raw.user_id?.trim() || undefined;
    const planId = raw.plan_id?.trim() || undefined;
    const page = raw.page && /^\d{1,9}$/.test(raw.page) ? Number(raw.page) : (raw.page ?? 1);
    const query = validated(ListSubscriptionsQuery, {
      page,
      limit: PAGE_SIZE,
      ...(status ? { status } : {}),
      ...(userId ? { user_id: userId } : {}),
      ...(planId ? { plan_id: planId } : {}),
    });
    const tenantId = memberTenantId(request);
    const { data, pagination } = await subscriptions.list(tenantId, query);
    const [userNames, planNames] = await Promise.all([
      users.namesOf(
        tenantId,
        data.map((s) => s.user_id),
      ),
      plans.namesOf(
        tenantId,
        data.map((s) => s.plan_id),
      ),
    ]);
    const filters = html`<form method="get" action="/console/subscriptions" class="filters">
  ${field({
    id: 'status',
    label: 'Status',
    control: select({
      id: 'status',
      choices: [
        { value: '', label: 'Any status' },
        ...PUBLIC_STATUSES.map((s) => ({ value: s, label: s.replace('_', ' ') })),
      ],
      selected: status ?? '',
    }),
  })}
  ${userId && html`<input type="hidden" name="user_id" value="${userId}">`}
  ${planId && html`<input type="hidden" name="plan_id" value="${planId}">`}
  <button class="button" type="submit">Filter</button>
  ${(status || userId || planId) && html`<a class="button button-quiet" href="/console/subscriptions">Clear</a>`}
</form>
${planId && html`<p class="subtle">Subscriptions to ${planNames.get(planId) ?? planId} only.</p>`}
${userId && html`<p class="subtle">Subscriptions of ${userNames.get(userId)?.email ?? userId} only.</p>`}`;
    const body =
      pagination.total === 0
        ? html`${(status || userId || planId) && filters}<div class="panel">${
            status || userId || planId
              ? emptyState({
                  title: 'No subscription matches',
                  text: 'Try another status, or clear the filters.',
                })
              : emptyState({
                  title: 'No subscriptions yet',
                  text: 'Your app subscribes users to your plans through the API (POST /api/v1/subscriptions). Create a plan first.',
                  action: html`<a class="button" href="/console/plans">Go to plans</a>`,
                })
          }</div>`
        : html`${filters}<div class="panel panel-flush"><div class="table-wrap" role="region" aria-label="Subscriptions" tabindex="0"><table>
  <thead><tr>
    <th scope="col">User</th><th scope="col">Plan</th><th scope="col">Status</th>
    <th scope="col">Billed by</th><th scope="col">Period ends</th><th scope="col">Created</th>
  </tr></thead>
  <tbody>${data.map(
    (s) => html`<tr>
    <td>${userCell(s.user_id, userNames)}</td>
    <td><a href="/console/subscriptions/${s.id}">${planNames.get(s.plan_id) ?? s.plan_id}</a></td>
    <td>${statusBadge(s.status)}${s.cancel_at_period_end && html` <span class="subtle">ends at period end</span>`}</td>
    <td>${PROVIDERS[s.provider] ?? s.provider}</td>
    <td>${dateTime(s.current_period_end)}</td>
    <td>${dateTime(s.created_at)}</td>
  </tr>`,
  )}</tbody>
</table></div></div>
${pager(pagination, '/console/subscriptions', { status, user_id: userId, plan_id: planId })}`;
    return sendPage(request, reply, { title: 'Subscriptions', section: 'subscriptions', body });
  });

  app.get<{ Params: { id: string } }>('/subscriptions/:id', async (request, reply) => {
    const tenantId = memberTenantId(request);
    const s = await subscriptions.get(tenantId, request.params.id);
    const [userNames, planNames] = await Promise.all([
      users.namesOf(tenantId, [s.user_id]),
      plans.namesOf(tenantId, [s.plan_id]),
    ]);
    const planName = planNames.get(s.plan_id) ?? s.plan_id;
    const live = ['trialing', 'active', 'past_due', 'unpaid', 'paused'].includes(s.status);
    const actions =
      can(request, 'admin') && live && !s.cancel_at_period_end
        ? html`<a class="button" href="/console/subscriptions/${s.id}/cancel">Cancel at period end</a>`
        : undefined;
    return sendPage(request, reply, {
      title: `Subscription to ${planName}`,
      section: 'subscriptions',
      parent: { href: '/console/subscriptions', label: 'Subscriptions' },
      actions,
      body: html`<div class="stats">
  <div class="stat"><p class="stat-label">Status</p><p class="stat-value">${statusBadge(s.status)}</p>${s.cancel_at_period_end && html`<p class="stat-note">Ends at the end of the period</p>`}</div>
  <div class="stat"><p class="stat-label">Plan</p><p class="stat-value"><a href="/console/plans/${s.plan_id}">${planName}</a></p></div>
  <div class="stat"><p class="stat-label">Period ends</p><p class="stat-value">${dateTime(s.current_period_end)}</p></div>
  <div class="stat"><p class="stat-label">Billed by</p><p class="stat-value">${PROVIDERS[s.provider] ?? s.provider}</p></div>
</div>
<div class="panel">
  <dl class="details">
    <dt>User</dt><dd>${userCell(s.user_id, userNames)}</dd>
    <dt>Current period</dt><dd>${dateTime(s.current_period_start)} → ${dateTime(s.current_period_end)}</dd>
    <dt>Provider’s id</dt><dd class="mono">${s.provider_subscription_id ?? '—'}</dd>
    <dt>Created</dt><dd>${dateTime(s.created_at)}</dd>
    <dt>Updated</dt><dd>${dateTime(s.updated_at)}</dd>
    <dt>Id</dt><dd class="mono">${s.id}</dd>
  </dl>
</div>`,
    });
  });
});
