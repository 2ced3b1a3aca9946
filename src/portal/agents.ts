/**
 * The user's agents in the portal: the list, and each agent's page where the user edits the
 * draft (caller ID, welcome message, prompt), publishes it, and reads the published versions.
 * Through services.agents as the API does; an agent of another user (or tenant) is the portal's
 * 404, for reads and writes alike, before anything is changed.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type Agent, type AgentVersion, UpdateAgentBody } from '../agents/schemas.js';
import { ApiError, notFound } from '../core/errors.js';
import { type ConfigValues, choicesFromOptions, configFields } from '../web/agent-config-fields.js';
import { configFromForm, issuesByControl, pathIssues } from '../web/agent-config-read.js';
import {
  actionButton,
  dateTime,
  emptyState,
  field,
  inputField,
  pager,
  statusBadge,
} from '../web/components.js';
import { fieldIssues, formOf, textField, validated } from '../web/forms.js';
import { type Html, html } from '../web/html.js';
import type { PortalServices } from './context.js';
import { href, portalOf, redirectWithFlash, userOf } from './context.js';
import { csrfField, sendPage } from './layout.js';
import type { PortalPage } from './router.js';

const PAGE_SIZE = 20;
const VERSIONS_PAGE_SIZE = 10;

type Issues = Record<string, string>;
interface DraftValues {
  phone_number: string;
  welcome_message: string;
  prompt: string;
}

export function pageNumber(value: unknown): number {
  return typeof value === 'string' && /^\d{1,9}$/.test(value) && Number(value) > 0 ? Number(value) : 1;
}

function textArea(options: {
  id: string;
  label: string;
  value: string;
  rows: number;
  hint: string;
  error?: string;
}): Html {
  const described = [`${options.id}-hint`, options.error && `${options.id}-error`].filter(Boolean).join(' ');
  return field({
    id: options.id,
    label: options.label,
    hint: options.hint,
    error: options.error,
    wide: true,
    control: html`<textarea id="${options.id}" name="${options.id}" rows="${options.rows}" aria-describedby="${described}"${
      options.error ? html` aria-invalid="true"` : ''
    }>${options.value}</textarea>`,
  });
}

/** The API's field issues, said the way a client reads them (its own words stay for the rest). */
function inPlainWords(issues: Issues, draft: DraftValues): Issues {
  const plain = { ...issues };
  if (plain.phone_number) {
    plain.phone_number = 'Use the international format with the country code, e.g. +14155550123.';
  }
  if (plain.prompt && draft.prompt === '') plain.prompt = 'Write what the agent should know and do.';
  return plain;
}

function publishedBadge(agent: Agent): Html {
  return agent.published_version === null
    ? html`<span class="badge badge-neutral">not published</span>`
    : html`<span class="badge badge-success">live · version ${agent.published_version}</span>`;
}

/** Whether the draft differs from the version calls use. */
function hasUnpublishedChanges(agent: Agent, latest: AgentVersion | undefined): boolean {
  if (!latest) return true;
  return (
    latest.prompt !== agent.draft.prompt ||
    latest.welcome_message !== agent.draft.welcome_message ||
    latest.phone_number !== agent.phone_number ||
    JSON.stringify(latest.config) !== JSON.stringify(agent.draft.config)
  );
}

const excerpt = (text: string, length = 120) =>
  text.length > length ? `${text.slice(0, length - 1)}…` : text;

function versionsTable(versions: AgentVersion[], published: number | null): Html {
  if (versions.length === 0) {
    return emptyState({
      title: 'Not published yet',
      text: 'Calls always use a published version. Publish the draft to make it version 1.',
    });
  }
  return html`<div class="table-wrap" role="region" aria-label="Published versions" tabindex="0"><table class="versions">
  <thead><tr>
    <th scope="col">Version</th><th scope="col">Welcome message</th><th scope="col">Prompt</th>
    <th scope="col">Caller ID</th><th scope="col">Published</th>
  </tr></thead>
  <tbody>
  ${versions.map(
    (version) => html`<tr>
    <td><strong>Version ${version.version}</strong>${version.version === published ? html` ${statusBadge('published')}` : ''}</td>
    <td class="excerpt">${excerpt(version.welcome_message) || html`<span class="subtle">—</span>`}</td>
    <td class="excerpt">${excerpt(version.prompt)}</td>
    <td class="phone">${version.phone_number}</td>
    <td>${dateTime(version.published_at)}</td>
  </tr>`,
  )}
  </tbody>
</table></div>`;
}

export function agentPages(services: PortalServices): PortalPage[] {
  const { agents } = services;

  /** The agent when it is the signed-in user's own; 404 otherwise (the same answer as for no agent). */
  async function ownAgent(request: FastifyRequest, agentId: string): Promise<Agent> {
    const { tenantId, userId } = userOf(request);
    const agent = await agents.get(tenantId, agentId);
    if (agent.user_id !== userId) throw notFound('Agent');
    return agent;
  }

  async function agentPage(
    request: FastifyRequest,
    reply: FastifyReply,
    agent: Agent,
    state: {
      draft?: DraftValues;
      config?: ConfigValues;
      issues?: Issues;
      status?: number;
      versionsPage?: number;
    } = {},
  ): Promise<FastifyReply> {
    const { tenantId } = userOf(request);
    const versions = await agents.versions(tenantId, agent.id, {
      page: state.versionsPage ?? 1,
      limit: VERSIONS_PAGE_SIZE,
    });
    const csrf = csrfField(reply);
    const issues = state.issues ?? {};
    const draft = state.draft ?? {
      phone_number: agent.phone_number,
      welcome_message: agent.draft.welcome_message,
      prompt: agent.draft.prompt,
    };
    const latest = (state.versionsPage ?? 1) === 1 ? versions.data[0] : undefined;
    const changed = agent.published_version === null || hasUnpublishedChanges(agent, latest);
    const next = (agent.published_version ?? 0) + 1;
    const publish = actionButton({
      action: href(request, `/agents/${agent.id}/publish`),
      label: `Publish version ${next}`,
      csrf,
      tone: 'primary',
    });
    const overview = html`<section class="panel" aria-labelledby="overview-title">
  <h2 id="overview-title">Status</h2>
  <dl class="details">
    <dt>Calls use</dt><dd>${publishedBadge(agent)}</dd>
    <dt>Draft</dt><dd>${
      changed
        ? html`<span class="badge badge-warning">unpublished changes</span> <span class="subtle">publish to use them for calls</span>`
        : html`<span class="subtle">Same as the published version</span>`
    }</dd>
    <dt>Caller ID</dt><dd class="phone">${agent.phone_number}</dd>
    <dt>Calls</dt><dd><a href="${href(request, `/calls?agent_id=${encodeURIComponent(agent.id)}`)}">See this agent’s calls</a></dd>
  </dl>
</section>`;
    const editor = html`<section class="panel" aria-labelledby="draft-title" id="draft">
  <h2 id="draft-title">Edit the draft</h2>
  <p class="muted">Saving changes the draft only. Calls keep using version ${agent.published_version ?? '—'} until you publish.</p>
  ${Object.keys(issues).length > 0 && html`<div class="flash flash-error" role="alert">The draft was not saved: fix the fields marked below.</div>`}
  <form method="post" action="${href(request, `/agents/${agent.id}`)}" class="form-grid" novalidate>
    ${csrf}
    ${inputField({
      id: 'phone_number',
      label: 'Caller ID',
      type: 'tel',
      value: draft.phone_number,
      required: true,
      placeholder: '+14155550123',
      hint: 'The number your calls come from, with its country code (E.164).',
      error: issues.phone_number,
    })}
    ${textArea({
      id: 'welcome_message',
      label: 'Welcome message',
      value: draft.welcome_message,
      rows: 3,
      hint: 'The first thing the agent says when someone answers. {name} is the person called.',
      error: issues.welcome_message,
    })}
    ${textArea({
      id: 'prompt',
      label: 'Prompt',
      value: draft.prompt,
      rows: 10,
      hint: 'What the agent knows and how it behaves. {name} and the call’s other details fill {placeholders}.',
      error: issues.prompt,
    })}
    ${configFields(state.config ?? agent.draft.config, choicesFromOptions(agents.defaults.options()), issues)}
    <div class="form-actions field-wide">
      <button class="button button-primary" type="submit">Save draft</button>
    </div>
  </form>
</section>`;
    const versionsPanel = html`<section class="panel panel-flush" aria-labelledby="versions-title">
  <div class="panel-header"><h2 id="versions-title">Published versions</h2><span class="subtle">${versions.pagination.total} in all, newest first</span></div>
  ${versionsTable(versions.data, agent.published_version)}
  ${versions.pagination.total > VERSIONS_PAGE_SIZE && pager(versions.pagination, href(request, `/agents/${agent.id}`), {})}
</section>`;
    return sendPage(request, reply, {
      title: agent.name,
      section: 'agents',
      parent: { path: '/agents', label: 'Agents' },
      actions: changed ? publish : undefined,
      status: state.status,
      body: html`${overview}${editor}${versionsPanel}`,
    });
  }

  return [
    {
      method: 'GET',
      path: '/agents',
      async handler(request, reply) {
        const { tenantId, userId } = userOf(request);
        const page = pageNumber((request.query as { page?: unknown }).page);
        const result = await agents.list(tenantId, {
          user_id: userId,
          page,
          limit: PAGE_SIZE,
          sort_by: 'name',
          sort_order: 'asc',
        });
        const { brand } = portalOf(request);
        const body =
          result.pagination.total === 0
            ? html`<div class="panel">${emptyState({
                title: 'No agents yet',
                text: `${brand.name} sets up your agents. Once they do, you can change what they say and publish it here.`,
              })}</div>`
            : html`<section class="panel panel-flush" aria-label="Your agents"><div class="table-wrap" role="region" aria-label="Your agents" tabindex="0"><table>
  <thead><tr><th scope="col">Agent</th><th scope="col">Calls use</th><th scope="col">Caller ID</th><th scope="col">Created</th></tr></thead>
  <tbody>
  ${result.data.map(
    (agent) => html`<tr>
    <td><a href="${href(request, `/agents/${agent.id}`)}"><strong>${agent.name}</strong></a></td>
    <td>${publishedBadge(agent)}</td>
    <td class="phone">${agent.phone_number}</td>
    <td>${dateTime(agent.created_at)}</td>
  </tr>`,
  )}
  </tbody>
</table></div>
${pager(result.pagination, href(request, '/agents'), {})}
</section>`;
        return sendPage(request, reply, { title: 'Agents', section: 'agents', body });
      },
    },
    {
      method: 'GET',
      path: '/agents/:id',
      async handler(request, reply, params) {
        const agent = await ownAgent(request, params.id);
        return agentPage(request, reply, agent, {
          versionsPage: pageNumber((request.query as { page?: unknown }).page),
        });
      },
    },
    {
      method: 'POST',
      path: '/agents/:id',
      async handler(request, reply, params) {
        const agent = await ownAgent(request, params.id);
        const fields = formOf(request);
        const welcome = fields.welcome_message;
        const draft: DraftValues = {
          phone_number: textField(fields, 'phone_number') ?? '',
          welcome_message: (Array.isArray(welcome) ? welcome[0] : welcome)?.trim() ?? '',
          prompt: textField(fields, 'prompt') ?? '',
        };
        // A form without the configuration's fields (an older page) leaves the configuration as it is.
        const read = fields.config_form ? configFromForm(fields) : { config: undefined, issues: {} };
        const refuse = (issues: Issues) =>
          agentPage(request, reply, agent, { draft, config: read.config, issues, status: 422 });
        if (Object.keys(read.issues).length > 0) return refuse(issuesByControl(read.issues));
        try {
          const body = validated(UpdateAgentBody, read.config ? { ...draft, config: read.config } : draft);
          await agents.update(userOf(request).tenantId, agent.id, body);
        } catch (error) {
          if (!(error instanceof ApiError) || error.status !== 422) throw error;
          const configIssues = Object.entries(pathIssues(error)).filter(([path]) => /^\/?config/.test(path));
          return refuse({
            ...issuesByControl(Object.fromEntries(configIssues)),
            ...inPlainWords(fieldIssues(error), draft),
          });
        }
        return redirectWithFlash(
          reply,
          `/agents/${agent.id}`,
          'Draft saved. Publish it to use it for calls.',
        );
      },
    },
    {
      method: 'POST',
      path: '/agents/:id/publish',
      async handler(request, reply, params) {
        const agent = await ownAgent(request, params.id);
        const published = await agents.publish(userOf(request).tenantId, agent.id);
        return redirectWithFlash(
          reply,
          `/agents/${agent.id}`,
          `Published version ${published.published_version}: calls use it from now on.`,
        );
      },
    },
  ];
}
