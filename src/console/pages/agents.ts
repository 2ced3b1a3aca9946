/**
 * Agents in the console (docs/console.md): the list, create, and each agent's page with its draft
 * and settings editor, publish, versions, webhook URL (copy, rotate), delete and a test call.
 * Everything goes through services.agents and services.calls, as the API routes do.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Agent, AgentDefaultsBody, CreateAgentBody, UpdateAgentBody } from '../../agents/schemas.js';
import { checkSettings } from '../../agents/service.js';
import type { AgentSettings } from '../../agents/settings.js';
import { ApiError } from '../../core/errors.js';
import { configFromForm, issuesByControl, pathIssues } from '../../web/agent-config-read.js';
import { actionButton, emptyState, field, inputField, pager } from '../../web/components.js';
import { formOf, textField, validated } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { redirectWithFlash } from '../cookies.js';
import { can, csrfField, memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';
import {
  choicesOf,
  configEditor,
  configOf,
  configSummary,
  dangerPanel,
  defaultsFromForm,
  defaultsIssues,
  defaultsPanel,
  draftDiffers,
  previewPanel,
  samplesOf,
} from './agent-config.js';
import { testCallRoute } from './agent-test-call.js';
import {
  agentTable,
  type DetailState,
  type DraftValues,
  draftFields,
  draftFromForm,
  type Issues,
  issuesOf,
  ownerLabel,
  pageNumber,
  publishedBadge,
  settingsFields,
  settingsFromForm,
  settingsSummary,
  testCallForm,
  versionsTable,
  webhookPanel,
} from './agent-views.js';

const PAGE_SIZE = 20;

type IdParams = { Params: { id: string } };

export const agentPages = consolePages(
  ['agents', 'calls', 'users', 'idempotency'],
  async (app, { agents, calls, users, idempotency }) => {
    const listPage = async (
      request: FastifyRequest,
      reply: FastifyReply,
      issues?: Issues,
      typed?: object,
    ) => {
      const query = request.query as { page?: string; user_id?: string };
      const userId = query.user_id?.trim() || undefined;
      const page = pageNumber(query.page);
      const result = await agents.list(memberTenantId(request), {
        page,
        limit: PAGE_SIZE,
        user_id: userId,
        sort_by: 'created_at',
        sort_order: 'desc',
      });
      const admin = can(request, 'admin');
      const newButton =
        admin && html`<a class="button button-primary" href="/console/agents/new">New agent</a>`;
      const body =
        result.pagination.total === 0 && !userId
          ? html`<div class="panel">${emptyState({
              title: 'No agents yet',
              text: 'An agent places calls for one of your users: its prompt, its welcome message and its caller ID. Create one, publish it, then place a test call.',
              action: newButton || undefined,
            })}</div>`
          : html`${userId && html`<p class="filter-note">Agents of user <code>${userId}</code> · <a href="/console/agents">Show all agents</a></p>`}
<section class="panel panel-flush" aria-label="Agents">
  ${result.data.length > 0 ? agentTable(result.data) : emptyState({ title: 'No agents', text: 'This user has no agents.' })}
  ${pager(result.pagination, '/console/agents', { user_id: userId })}
</section>`;
      const defaults =
        admin &&
        defaultsPanel(
          { ...(await agents.defaults.get(memberTenantId(request))), ...typed },
          csrfField(reply),
          issues ?? {},
        );
      return sendPage(request, reply, {
        title: 'Agents',
        section: 'agents',
        actions: newButton || undefined,
        status: issues ? 422 : undefined,
        body: html`${body}${defaults}`,
      });
    };
    app.get('/agents', (request, reply) => listPage(request, reply));
    app.post('/agents/defaults', async (request, reply) => {
      const typed = defaultsFromForm(formOf(request));
      try {
        await agents.defaults.set(memberTenantId(request), validated(AgentDefaultsBody, typed));
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 422) throw error;
        return listPage(request, reply, defaultsIssues(pathIssues(error)), typed);
      }
      return redirectWithFlash(reply, '/console/agents#defaults', 'Default voice and model saved.');
    });

    const newForm = async (
      request: FastifyRequest,
      reply: FastifyReply,
      options: { search?: string; userId?: string; values?: DraftValues; issues?: Issues; status?: number },
    ) => {
      const issues = options.issues ?? {};
      const found = await users.list(memberTenantId(request), {
        page: 1,
        limit: PAGE_SIZE,
        search: options.search,
        sort_by: 'created_at',
        sort_order: 'desc',
      });
      const choices = found.data;
      const ownerControl =
        choices.length > 0
          ? html`<select id="user_id" name="user_id"${issues.user_id ? html` aria-invalid="true" aria-describedby="user_id-error"` : ''}>
  ${choices.map(
    (user) =>
      html`<option value="${user.id}"${user.id === options.userId ? html` selected` : ''}>${ownerLabel(user)} · ${user.id}</option>`,
  )}
</select>`
          : html`<input id="user_id" name="user_id" type="text" value="${options.userId ?? ''}" placeholder="usr_…" required>`;
      const body = html`<section class="panel" aria-labelledby="owner-search-title">
  <h2 id="owner-search-title">Choose the owner</h2>
  <p class="muted">The user whose credits pay for the agent’s calls. Find them by name or email, or type their user id below.</p>
  <form method="get" action="/console/agents/new" class="filters" role="search">
    ${inputField({ id: 'owner_search', label: 'Find a user', type: 'search', value: options.search, placeholder: 'name or email' })}
    <button class="button" type="submit">Search</button>
  </form>
  ${choices.length === 0 && html`<p class="subtle">${options.search ? `No user matches “${options.search}”.` : 'No users yet: add a user first, or type a user id.'}</p>`}
</section>
<section class="panel" aria-labelledby="agent-form-title">
  <h2 id="agent-form-title">The agent</h2>
  <form method="post" action="/console/agents" class="form-grid">
    ${csrfField(reply)}
    ${field({
      id: 'user_id',
      label:
        choices.length > 0
          ? `Owner (${choices.length === 1 ? '1 user' : `${choices.length} users`} found)`
          : 'Owner’s user id',
      control: ownerControl,
      error: issues.user_id,
      wide: true,
    })}
    ${draftFields(options.values ?? {}, issues)}
    <div class="form-actions field-wide">
      <button class="button button-primary" type="submit">Create agent</button>
      <a class="button button-quiet" href="/console/agents">Cancel</a>
    </div>
  </form>
</section>`;
      return sendPage(request, reply, {
        title: 'New agent',
        section: 'agents',
        parent: { href: '/console/agents', label: 'Agents' },
        status: options.status,
        body,
      });
    };

    app.get<{ Querystring: { owner_search?: string; user_id?: string } }>(
      '/agents/new',
      { config: { consoleAccess: 'admin' } },
      async (request, reply) =>
        newForm(request, reply, {
          search: request.query.owner_search?.trim().slice(0, 200) || undefined,
          userId: request.query.user_id,
        }),
    );

    app.post('/agents', async (request, reply) => {
      const fields = formOf(request);
      const values = draftFromForm(fields);
      const userId = textField(fields, 'user_id') ?? '';
      try {
        const input = validated(CreateAgentBody, { user_id: userId, ...values });
        const agent = await agents.create(memberTenantId(request), input);
        return redirectWithFlash(
          reply,
          `/console/agents/${agent.id}`,
          `Agent “${agent.name}” created. Publish it to place calls.`,
        );
      } catch (error) {
        if (!(error instanceof ApiError) || (error.status !== 422 && error.status !== 404)) throw error;
        const issues = error.status === 404 ? { user_id: 'No such user in your agency.' } : issuesOf(error);
        return newForm(request, reply, {
          userId,
          values: values as DraftValues,
          issues,
          status: error.status,
        });
      }
    });

    const detailPage = async (
      request: FastifyRequest,
      reply: FastifyReply,
      agent: Agent,
      state: DetailState = {},
    ) => {
      const tenantId = memberTenantId(request);
      const versionsPage = state.versionsPage ?? 1;
      const [versions, owner, newest] = await Promise.all([
        agents.versions(tenantId, agent.id, { page: versionsPage, limit: PAGE_SIZE }),
        users.get(tenantId, agent.user_id).catch(() => undefined),
        agents.versions(tenantId, agent.id, { page: 1, limit: 1 }),
      ]);
      const changed = draftDiffers(agent, newest.data[0]);
      const draftConfig = state.config?.values ?? configOf(agent.draft);
      const admin = can(request, 'admin');
      const csrf = admin ? csrfField(reply) : html``;
      const issues = state.issues ?? {};
      const draft = state.draft ?? {
        name: agent.name,
        phone_number: agent.phone_number,
        prompt: agent.draft.prompt,
        welcome_message: agent.draft.welcome_message,
      };
      const overview = html`<section class="panel" aria-labelledby="overview-title">
  <h2 id="overview-title">Overview</h2>
  <dl class="details">
    <dt>Status</dt><dd>${publishedBadge(agent)}${agent.published_version === null ? html` <span class="subtle">not published: it cannot place calls yet</span>` : ''}</dd>
    <dt>Owner</dt><dd>${owner ? ownerLabel(owner) : ''} <span class="subtle mono">${agent.user_id}</span></dd>
    <dt>Caller ID (draft)</dt><dd class="mono">${agent.phone_number}</dd>
    <dt>Agent id</dt><dd class="mono">${agent.id}</dd>
    <dt>Calls</dt><dd><a href="/console/calls?agent_id=${encodeURIComponent(agent.id)}">See this agent’s calls</a></dd>
  </dl>
</section>`;
      const rotate =
        admin &&
        actionButton({
          action: `/console/agents/${agent.id}/rotate-webhook`,
          label: 'Rotate URL',
          csrf,
          confirm: 'Rotate the webhook URL? The current URL stops working at once.',
        });
      const editor = admin
        ? html`<section class="panel" aria-labelledby="draft-title" id="draft">
  <h2 id="draft-title">Draft</h2>
  <p class="muted">Changes to the prompt, welcome message and caller ID are used from the next publish; published versions never change. The name and settings apply at once.</p>
  ${Object.keys(issues).length > 0 && html`<div class="flash flash-error" role="alert">The draft was not saved: fix the fields marked below.</div>`}
  <form method="post" action="/console/agents/${agent.id}#draft" class="form-grid" novalidate>
    ${csrf}
    ${draftFields(draft, issues)}
    ${settingsFields(state.settings ?? agent.settings, issues)}
    <div class="form-actions field-wide">
      <button class="button button-primary" type="submit">Save draft</button>
    </div>
  </form>
</section>`
        : html`<section class="panel" aria-labelledby="draft-title">
  <h2 id="draft-title">Draft</h2>
  <dl class="details">
    <dt>Prompt</dt><dd class="pre">${agent.draft.prompt}</dd>
    <dt>Welcome message</dt><dd class="pre">${agent.draft.welcome_message || html`<span class="subtle">—</span>`}</dd>
  </dl>
  <h3 class="subheading">Settings</h3>
  ${settingsSummary(agent.settings)}
</section>`;
      const versionsPanel = html`<section class="panel panel-flush" aria-labelledby="versions-title">
  <div class="panel-header"><h2 id="versions-title">Versions</h2><span class="subtle">${versions.pagination.total} published, newest first</span></div>
  ${versionsTable(versions.data, agent.published_version)}
  ${versions.pagination.total > PAGE_SIZE && pager(versions.pagination, `/console/agents/${agent.id}`, {})}
</section>`;
      const danger = admin && dangerPanel(agent, csrf);
      const publish =
        admin &&
        changed &&
        actionButton({
          action: `/console/agents/${agent.id}/publish`,
          label:
            agent.published_version === null
              ? 'Publish version 1'
              : `Publish version ${agent.published_version + 1}`,
          csrf,
          tone: 'primary',
          confirm: 'Publish the draft? Calls placed from now on use it.',
        });
      const body: Html = html`<div class="grid grid-2">${overview}${webhookPanel(agent, rotate, admin)}</div>
${editor}
${admin ? configEditor({ agent, config: draftConfig, choices: choicesOf(agents.defaults.options()), issues: issuesByControl(state.config?.issues ?? {}), csrf }) : html`<section class="panel" aria-labelledby="config-title"><h2 id="config-title">Voice, behaviour and analysis</h2>${configSummary(draftConfig)}</section>`}
${previewPanel(agent, configOf(agent.draft), state.samples ?? {})}
${versionsPanel}
${admin && testCallForm({ agent, csrf, values: state.testCall?.values ?? {}, issues: state.testCall?.issues ?? {}, refusal: state.testCall?.refusal })}
${danger}`;
      return sendPage(request, reply, {
        title: agent.name,
        section: 'agents',
        parent: { href: '/console/agents', label: 'Agents' },
        actions:
          publish ||
          (admin ? html`<span class="subtle">Published: the draft has no changes</span>` : undefined),
        status: state.status,
        body,
      });
    };

    app.get<IdParams & { Querystring: Record<string, string> }>('/agents/:id', async (request, reply) => {
      const agent = await agents.get(memberTenantId(request), request.params.id);
      const samples = samplesOf(request.query);
      return detailPage(request, reply, agent, { versionsPage: pageNumber(request.query.page), samples });
    });

    app.post<IdParams>('/agents/:id', async (request, reply) => {
      const tenantId = memberTenantId(request);
      const agent = await agents.get(tenantId, request.params.id);
      const fields = formOf(request);
      const draft = draftFromForm(fields);
      const settings = settingsFromForm(fields);
      try {
        const input = validated(UpdateAgentBody, { ...draft, settings });
        await agents.update(tenantId, agent.id, input);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 422) throw error;
        // The schema's issues and the service's own (time zone, equal hours) together, at once.
        const extra = checkSettings(settings as AgentSettings).map((issue) => [
          issue.field?.replace(/^settings\./, '') ?? '',
          issue.issue,
        ]);
        return detailPage(request, reply, agent, {
          draft: draft as DraftValues,
          settings,
          issues: { ...Object.fromEntries(extra), ...issuesOf(error) },
          status: 422,
        });
      }
      return redirectWithFlash(
        reply,
        `/console/agents/${agent.id}`,
        'Draft saved. Publish it to use it for calls.',
      );
    });

    app.post<IdParams>('/agents/:id/config', async (request, reply) => {
      const tenantId = memberTenantId(request);
      const agent = await agents.get(tenantId, request.params.id);
      const read = configFromForm(formOf(request));
      const refuse = (issues: Record<string, string>) =>
        detailPage(request, reply, agent, { config: { values: read.config, issues }, status: 422 });
      if (Object.keys(read.issues).length > 0) return refuse(read.issues);
      try {
        await agents.update(tenantId, agent.id, validated(UpdateAgentBody, { config: read.config }));
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 422) throw error;
        return refuse(pathIssues(error));
      }
      return redirectWithFlash(
        reply,
        `/console/agents/${agent.id}#config`,
        'Configuration saved to the draft. Publish it to use it for calls.',
      );
    });

    app.post<IdParams>('/agents/:id/publish', async (request, reply) => {
      const agent = await agents.publish(memberTenantId(request), request.params.id);
      return redirectWithFlash(
        reply,
        `/console/agents/${agent.id}`,
        `Published version ${agent.published_version}.`,
      );
    });

    app.post<IdParams>('/agents/:id/rotate-webhook', async (request, reply) => {
      const agent = await agents.rotateWebhook(memberTenantId(request), request.params.id);
      return redirectWithFlash(
        reply,
        `/console/agents/${agent.id}`,
        'Webhook URL rotated: the old URL no longer works.',
      );
    });

    app.post<IdParams>('/agents/:id/delete', async (request, reply) => {
      const agent = await agents.get(memberTenantId(request), request.params.id);
      await agents.remove(memberTenantId(request), agent.id);
      return redirectWithFlash(reply, '/console/agents', `Agent “${agent.name}” deleted.`);
    });

    testCallRoute(app, { agents, calls, idempotency }, detailPage);
  },
);
