/**
 * Console pages for the tenant's users: the list with the API's indexed search (the same
 * `users.list` as GET /api/v1/users?search=), a user's detail (balance, subscriptions, status),
 * and what an admin does to a user: block or unblock, grant credits, top up (./console-top-ups.ts),
 * delete.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ListAgentsQuery } from '../../agents/schemas.js';
import { ListPartnerCallsQuery } from '../../calls/schemas.js';
import { AddCreditsBody } from '../../credits/schemas.js';
import { balanceOf, grantCredits, latestCredits } from '../../credits/service.js';
import { ListUsersQuery, type UserListItem } from '../../users/schemas.js';
import {
  actionButton,
  dateTime,
  emptyState,
  field,
  inputField,
  pager,
  select,
  statusBadge,
} from '../../web/components.js';
import { fieldIssues, formOf, integerField, textField, validated } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { newFormKey } from '../../web/once.js';
import { redirectWithFlash } from '../cookies.js';
import { can, csrfField, memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';
import { agentsPanel, callsPanel, ledgerPanel } from './user-activity.js';
import { type TopUpForm, topUpList, topUpPanel } from './user-top-up-views.js';
import { postTopUp, topUpStanding, USER_PAGE_SERVICES, type UserPageServices } from './user-top-ups.js';

const PAGE_SIZE = 25;
const TOP_UPS_PAGE_SIZE = 10;
/** Agents, calls and credit movements shown on a user's page (the latest). */
const ACTIVITY_ROWS = 10;

function usersTable(users: UserListItem[]): Html {
  return html`<div class="panel panel-flush"><div class="table-wrap" role="region" aria-label="Users" tabindex="0"><table>
  <thead><tr>
    <th scope="col">User</th><th scope="col">Status</th>
    <th scope="col">Plan</th><th scope="col" class="hide-narrow">Created</th>
  </tr></thead>
  <tbody>${users.map(
    (user) => html`<tr>
    <td><a href="/console/users/${user.id}"><strong>${user.name ?? 'Unnamed user'}</strong></a><div class="subtle">${user.email}</div></td>
    <td>${statusBadge(user.status)}</td>
    <td>${user.plan_name ?? html`<span class="subtle">No plan</span>`}</td>
    <td class="hide-narrow">${dateTime(user.created_at)}</td>
  </tr>`,
  )}</tbody>
</table></div></div>`;
}

interface CreditForm {
  minutes?: string;
  reason?: string;
  errors: Record<string, string>;
}

/** What a refused form shows again: the credit form's or the top-up form's fields and reasons. */
interface UserPageState {
  credit?: CreditForm;
  topUp?: TopUpForm;
  status?: number;
}

/** The top-ups list's page (`?page=`): a page number, else the first. */
function topUpsPage(request: FastifyRequest): number {
  const page = (request.query as { page?: unknown } | undefined)?.page;
  return typeof page === 'string' && /^[1-9]\d{0,8}$/.test(page) ? Number(page) : 1;
}

async function sendUserPage(
  request: FastifyRequest,
  reply: FastifyReply,
  services: UserPageServices,
  userId: string,
  state: UserPageState = {},
) {
  const credit = state.credit ?? { errors: {} };
  const tenantId = memberTenantId(request);
  const deps = { db: services.database.db, clock: services.clock };
  const user = await services.users.get(tenantId, userId);
  const [balance, subscriptions, topUps, agents, calls, ledger] = await Promise.all([
    balanceOf(deps, { tenantId, userId }),
    services.subscriptions.list(tenantId, { user_id: userId, page: 1, limit: 10, sort_order: 'desc' }),
    services.topUps.list(tenantId, userId, { page: topUpsPage(request), limit: TOP_UPS_PAGE_SIZE }),
    services.agents.list(tenantId, validated(ListAgentsQuery, { user_id: userId, limit: ACTIVITY_ROWS })),
    services.calls.listForTenant(
      tenantId,
      validated(ListPartnerCallsQuery, { user_id: userId, limit: ACTIVITY_ROWS }),
    ),
    latestCredits(deps, { tenantId, userId }, ACTIVITY_ROWS),
  ]);
  const planNames = await services.plans.namesOf(
    tenantId,
    subscriptions.data.map((s) => s.plan_id),
  );
  const admin = can(request, 'admin');
  const csrf = admin ? csrfField(reply) : html``;
  const name = user.name ?? user.email;
  const actions =
    admin &&
    html`<a class="button" href="/console/users/${user.id}/edit">Edit</a>${actionButton({
      action: `/console/users/${user.id}/invitation`,
      label: 'Email a password link',
      csrf: html`${csrf}<input type="hidden" name="form_key" value="${newFormKey()}">`,
    })}${
      user.status === 'blocked'
        ? actionButton({ action: `/console/users/${user.id}/unblock`, label: 'Unblock', csrf })
        : actionButton({
            action: `/console/users/${user.id}/block`,
            label: 'Block',
            csrf,
            confirm: `Block ${name}? They can no longer sign in or place calls until unblocked.`,
          })
    }<a class="button button-danger" href="/console/users/${user.id}/delete">Delete user</a>`;
  const creditForm =
    admin &&
    html`<form method="post" action="/console/users/${user.id}/credits" class="panel" novalidate>
  <h2>Grant credits</h2>
  ${csrf}
  <div class="form-grid">
    ${inputField({
      id: 'minutes',
      label: 'Minutes',
      type: 'number',
      value: credit.minutes,
      hint: 'Negative to deduct.',
      error: credit.errors.minutes,
      required: true,
    })}
    ${inputField({ id: 'reason', label: 'Reason', value: credit.reason, hint: 'Shown in the ledger, e.g. "Goodwill".', error: credit.errors.reason })}
  </div>
  <div class="form-actions"><button class="button button-primary" type="submit">Grant credits</button></div>
</form>`;
  const topUpForm =
    admin &&
    topUpPanel({
      userId: user.id,
      standing: await topUpStanding(services, tenantId, user, subscriptions.data),
      csrf,
      form: state.topUp ?? {},
    });
  const current = subscriptions.data.find((s) => ['active', 'trialing', 'past_due'].includes(s.status));
  return sendPage(request, reply, {
    title: name,
    section: 'users',
    parent: { href: '/console/users', label: 'Users' },
    status: state.status ?? 200,
    actions: actions || undefined,
    flash: Object.keys(credit.errors).length
      ? { kind: 'error', message: 'The credits were not granted: check the fields marked below.' }
      : undefined,
    body: html`<div class="stats">
  <div class="stat"><p class="stat-label">Credit balance</p><p class="stat-value">${balance.balance_minutes.toLocaleString('en-US')}</p><p class="stat-note">minutes</p></div>
  <div class="stat"><p class="stat-label">Status</p><p class="stat-value">${statusBadge(user.status)}</p></div>
  <div class="stat"><p class="stat-label">Plan</p><p class="stat-value">${user.plan_name ?? '—'}</p>${current && html`<p class="stat-note">${current.status.replace('_', ' ')} until ${dateTime(current.current_period_end)}</p>`}</div>
  <div class="stat"><p class="stat-label">Subscriptions</p><p class="stat-value">${subscriptions.pagination.total}</p></div>
</div>
<div class="grid grid-2">
  <div class="panel">
    <h2>Profile</h2>
    <dl class="details">
      <dt>Email</dt><dd>${user.email}</dd>
      <dt>Phone</dt><dd>${user.phone ?? html`<span class="subtle">—</span>`}</dd>
      <dt>Created</dt><dd>${dateTime(user.created_at)}</dd>
      <dt>Id</dt><dd class="mono">${user.id}</dd>
    </dl>
  </div>
  ${creditForm}
</div>
${topUpForm}
${topUpList(user.id, topUps)}
<div class="grid grid-2">
${agentsPanel(agents.data, agents.pagination.total)}
${callsPanel(calls.data, calls.pagination.total)}
</div>
${ledgerPanel(ledger)}
<div class="panel panel-flush">
  <div class="panel-header"><h2>Subscriptions</h2><div class="page-actions">${
    subscriptions.pagination.has_more &&
    html`<a href="/console/subscriptions?user_id=${user.id}">All ${subscriptions.pagination.total} →</a>`
  }${
    admin &&
    user.status !== 'blocked' &&
    html`<a class="button button-small${current ? '' : ' button-primary'}" href="/console/users/${user.id}/subscription">${current ? 'Change plan' : 'Subscribe to a plan'}</a>`
  }${
    admin &&
    current &&
    !current.cancel_at_period_end &&
    html`<a class="button button-small" href="/console/subscriptions/${current.id}/cancel">Cancel at period end</a>`
  }</div></div>
  ${
    subscriptions.data.length === 0
      ? html`<div class="empty-state"><p>No subscription yet: subscribe the user to one of your plans here, or let your app do it through the API (POST /api/v1/subscriptions).</p></div>`
      : html`<div class="table-wrap" role="region" aria-label="Subscriptions" tabindex="0"><table>
    <thead><tr><th scope="col">Plan</th><th scope="col">Status</th><th scope="col">Current period ends</th><th scope="col">Created</th></tr></thead>
    <tbody>${subscriptions.data.map(
      (s) => html`<tr>
      <td><a href="/console/subscriptions/${s.id}">${planNames.get(s.plan_id) ?? s.plan_id}</a></td>
      <td>${statusBadge(s.status)}${s.cancel_at_period_end && html` <span class="subtle">ends at period end</span>`}</td>
      <td>${dateTime(s.current_period_end)}</td>
      <td>${dateTime(s.created_at)}</td>
    </tr>`,
    )}</tbody>
  </table></div>`
  }
</div>`,
  });
}

export const userPages = consolePages(USER_PAGE_SERVICES, async (app, services) => {
  const { users } = services;
  const deps = { db: services.database.db, clock: services.clock };

  app.get('/users', async (request, reply) => {
    const raw = request.query as Record<string, string | undefined>;
    const search = raw.search?.trim() || undefined;
    const status = raw.status === 'active' || raw.status === 'blocked' ? raw.status : undefined;
    const page = raw.page && /^\d{1,9}$/.test(raw.page) ? Number(raw.page) : (raw.page ?? 1);
    const query = validated(ListUsersQuery, {
      page,
      limit: PAGE_SIZE,
      ...(search ? { search } : {}),
      ...(status ? { status } : {}),
    });
    const { data, pagination } = await users.list(memberTenantId(request), query);
    const filters = html`<form method="get" action="/console/users" class="filters" role="search">
  ${inputField({ id: 'search', label: 'Search', type: 'search', value: search, placeholder: 'Name or email' })}
  ${field({
    id: 'status',
    label: 'Status',
    control: select({
      id: 'status',
      choices: [
        { value: '', label: 'Any status' },
        { value: 'active', label: 'Active' },
        { value: 'blocked', label: 'Blocked' },
      ],
      selected: status ?? '',
    }),
  })}
  <button class="button" type="submit">Search</button>
  ${(search || status) && html`<a class="button button-quiet" href="/console/users">Clear</a>`}
</form>`;
    const filtered = Boolean(search || status);
    const body =
      pagination.total === 0
        ? html`${filtered && filters}<div class="panel">${
            filtered
              ? emptyState({
                  title: 'No user matches',
                  text: 'Try part of a name or an email address, or clear the filters.',
                })
              : emptyState({
                  title: 'No users yet',
                  text: 'Create your first client here, or let your app create them through the API (POST /api/v1/users).',
                  action: can(request, 'admin')
                    ? html`<a class="button button-primary" href="/console/users/new">New user</a>`
                    : undefined,
                })
          }</div>`
        : html`${filters}${usersTable(data)}${pager(pagination, '/console/users', { search, status })}`;
    const actions = can(request, 'admin')
      ? html`<a class="button button-primary" href="/console/users/new">New user</a>`
      : undefined;
    return sendPage(request, reply, { title: 'Users', section: 'users', body, actions });
  });

  app.get<{ Params: { id: string } }>('/users/:id', async (request, reply) =>
    sendUserPage(request, reply, services, request.params.id),
  );

  app.post<{ Params: { id: string } }>('/users/:id/block', async (request, reply) => {
    const user = await users.setStatus(memberTenantId(request), request.params.id, 'blocked');
    return redirectWithFlash(reply, `/console/users/${user.id}`, `${user.name ?? user.email} is blocked.`);
  });

  app.post<{ Params: { id: string } }>('/users/:id/unblock', async (request, reply) => {
    const user = await users.setStatus(memberTenantId(request), request.params.id, 'active');
    return redirectWithFlash(
      reply,
      `/console/users/${user.id}`,
      `${user.name ?? user.email} is active again.`,
    );
  });

  app.post<{ Params: { id: string } }>('/users/:id/delete', async (request, reply) => {
    const tenantId = memberTenantId(request);
    // As DELETE /api/v1/users/{id}: a repeat (a refreshed form) answers the same tombstone.
    const deleted = await users.remove(tenantId, request.params.id);
    const who = (await users.namesOf(tenantId, [deleted.id])).get(deleted.id);
    return redirectWithFlash(
      reply,
      '/console/users',
      `${who?.name ?? who?.email ?? 'The user'} was deleted.`,
    );
  });

  app.post<{ Params: { id: string } }>('/users/:id/credits', async (request, reply) => {
    const fields = formOf(request);
    const tenantId = memberTenantId(request);
    const minutes = textField(fields, 'minutes');
    const reason = textField(fields, 'reason');
    try {
      const body = validated(AddCreditsBody, {
        minutes: integerField(fields, 'minutes'),
        ...(reason ? { reason } : {}),
      });
      const member = request.consoleSession?.email ?? 'console';
      const balance = await grantCredits(
        deps,
        { tenantId, userId: request.params.id },
        body,
        `granted in the console by ${member}`,
      );
      return redirectWithFlash(
        reply,
        `/console/users/${request.params.id}`,
        `${body.minutes.toLocaleString('en-US')} minutes granted; the balance is ${balance.balance_minutes.toLocaleString('en-US')} minutes.`,
      );
    } catch (error) {
      const errors = fieldIssues(error);
      if (Object.keys(errors).length === 0) throw error;
      return sendUserPage(request, reply, services, request.params.id, {
        credit: { minutes, reason, errors },
        status: 422,
      });
    }
  });

  app.post<{ Params: { id: string } }>('/users/:id/top-ups', (request, reply) =>
    postTopUp(request, reply, services, (topUp, status) =>
      sendUserPage(request, reply, services, request.params.id, { topUp, status }),
    ),
  );
});
