/**
 * The user's calls in the portal: the list (newest first, filtered by outcome and agent) and each
 * call's page with its outcome, timeline, transcript and recording. Through services.calls with
 * the signed-in user as the `user_id` filter; another user's call is the portal's 404.
 */
import { CALL_STATUSES, type CallDetail, FINAL_STATUSES, ListPartnerCallsQuery } from '../calls/schemas.js';
import { ApiError, notFound } from '../core/errors.js';
import {
  analysisView,
  answerDetails,
  outcomeOf,
  recordingPlayer,
  toolCallsView,
  transcriptView,
} from '../web/call-outcome.js';
import { dateTime, emptyState, field, pager, select, statusBadge } from '../web/components.js';
import { validated } from '../web/forms.js';
import { type Html, html } from '../web/html.js';
import { pageNumber } from './agents.js';
import type { PortalServices } from './context.js';
import { href, userOf } from './context.js';
import { sendPage } from './layout.js';
import type { PortalPage } from './router.js';
import { callTable, duration, minutes, outcomeNote } from './views.js';

const PAGE_SIZE = 25;

const STATUS_LABELS: Record<string, string> = {
  queued: 'Waiting to start',
  dialing: 'Dialling',
  in_progress: 'In progress',
  completed: 'Completed',
  no_answer: 'No answer',
  failed: 'Failed',
  tool_call: 'Tool called',
};

const isFinal = (call: CallDetail) => FINAL_STATUSES.some((status) => status === call.status);

/** The timeline's own words: status changes, their attempt and reason, nothing of the machinery behind. */
function timeline(call: CallDetail): Html {
  return html`<ol class="timeline">
  ${call.events.map((event) => {
    const detail = event.detail as { attempt?: unknown; reason?: unknown };
    const notes = [
      typeof detail.attempt === 'number' && detail.attempt > 1 ? `attempt ${detail.attempt}` : undefined,
      typeof detail.reason === 'string' ? detail.reason.replace(/[_-]/g, ' ') : undefined,
    ].filter(Boolean);
    return html`<li><strong>${STATUS_LABELS[event.status] ?? event.status.replace(/_/g, ' ')}</strong>${
      notes.length > 0 && html` <span class="subtle">${notes.join(' · ')}</span>`
    }<time datetime="${event.at}">${event.at.replace('T', ' ').slice(0, 19)} UTC</time></li>`;
  })}
</ol>`;
}

export function callPages(services: PortalServices): PortalPage[] {
  const { calls, agents } = services;

  return [
    {
      method: 'GET',
      path: '/calls',
      async handler(request, reply) {
        const { tenantId, userId } = userOf(request);
        const q = request.query as { page?: unknown; status?: unknown; agent_id?: unknown };
        const status = typeof q.status === 'string' && q.status ? q.status : undefined;
        const agentId = typeof q.agent_id === 'string' && q.agent_id ? q.agent_id : undefined;
        const agentPage = await agents.list(tenantId, {
          user_id: userId,
          page: 1,
          limit: 100,
          sort_by: 'name',
          sort_order: 'asc',
        });
        const agentNames = new Map(agentPage.data.map((agent) => [agent.id, agent.name]));
        let refused = false;
        let result: Awaited<ReturnType<typeof calls.listForTenant>> | undefined;
        try {
          // user_id is always the signed-in user: another user's agent id filters to nothing.
          const query = validated(ListPartnerCallsQuery, {
            page: pageNumber(q.page),
            limit: PAGE_SIZE,
            user_id: userId,
            ...(status ? { status } : {}),
            ...(agentId ? { agent_id: agentId } : {}),
          });
          result = await calls.listForTenant(tenantId, query);
        } catch (error) {
          if (!(error instanceof ApiError) || error.status !== 422) throw error;
          refused = true;
        }
        const filtered = status !== undefined || agentId !== undefined;
        const form = html`<form method="get" action="${href(request, '/calls')}" class="filters panel" aria-label="Filter calls">
  ${field({
    id: 'status',
    label: 'Outcome',
    control: select({
      id: 'status',
      choices: [
        { value: '', label: 'Any outcome' },
        ...CALL_STATUSES.map((s) => ({ value: s, label: STATUS_LABELS[s] ?? s })),
      ],
      selected: status ?? '',
    }),
  })}
  ${
    agentPage.data.length > 1 &&
    field({
      id: 'agent_id',
      label: 'Agent',
      control: select({
        id: 'agent_id',
        choices: [
          { value: '', label: 'All agents' },
          ...agentPage.data.map((agent) => ({ value: agent.id, label: agent.name })),
        ],
        selected: agentId ?? '',
      }),
    })
  }
  <div class="filter-buttons">
    <button class="button button-primary" type="submit">Show calls</button>
    ${filtered && html`<a class="button button-quiet" href="${href(request, '/calls')}">Clear</a>`}
  </div>
</form>`;
        let list: Html;
        if (!result) {
          list = html`<div class="panel">${emptyState({ title: 'Check the filter', text: 'That filter is not one this page knows. Clear it and try again.' })}</div>`;
        } else if (result.pagination.total === 0) {
          list = html`<div class="panel">${
            filtered
              ? emptyState({
                  title: 'No calls match',
                  text: 'No call matches this filter. Try another outcome or clear it.',
                })
              : emptyState({
                  title: 'No calls yet',
                  text: 'Calls your agents place or answer appear here with their outcome, duration and the minutes they used.',
                })
          }</div>`;
        } else {
          list = html`<section class="panel panel-flush" aria-label="Calls">
  ${callTable(request, result.data, agentNames)}
  ${pager(result.pagination, href(request, '/calls'), { status, agent_id: agentId })}
</section>`;
        }
        return sendPage(request, reply, {
          title: 'Calls',
          section: 'calls',
          status: refused ? 422 : 200,
          body: html`${form}${list}`,
        });
      },
    },
    {
      method: 'GET',
      path: '/calls/:id',
      async handler(request, reply, params) {
        const { tenantId, userId } = userOf(request);
        const call = await calls.getForTenant(tenantId, params.id);
        if (call.user_id !== userId) throw notFound('Call');
        const agent = call.agent_id
          ? await agents.get(tenantId, call.agent_id).catch(() => undefined)
          : undefined;
        const final = isFinal(call);
        const note = outcomeNote(call);
        const result = outcomeOf(call);
        const tools = toolCallsView(result.events);
        const outcome = html`<section class="panel" aria-labelledby="outcome-title">
  <h2 id="outcome-title">Outcome</h2>
  <p class="call-status-line"><span class="call-status-badge">${statusBadge(call.status)}</span>${note && html` <span class="muted">${note}</span>`}</p>
  ${!final && html`<p class="subtle">This call is not over yet. <a href="${href(request, `/calls/${call.id}`)}">Refresh</a> to see its progress.</p>`}
  <dl class="details">
    <dt>Started</dt><dd>${dateTime(call.started_at)}</dd>
    <dt>Ended</dt><dd>${dateTime(call.ended_at)}</dd>
    <dt>Duration</dt><dd>${duration(call.duration_seconds)}</dd>
    <dt>Billed</dt><dd>${call.billed_minutes === null ? html`<span class="subtle">—</span>` : minutes(call.billed_minutes)}</dd>
    ${call.failure_reason && html`<dt>Why it failed</dt><dd>${call.failure_reason}</dd>`}
    ${answerDetails(result)}
  </dl>
</section>`;
        const details = html`<section class="panel" aria-labelledby="call-title">
  <h2 id="call-title">Call</h2>
  <dl class="details">
    ${
      call.direction === 'inbound'
        ? html`<dt>Direction</dt><dd>Inbound: answered by your agent</dd>
    <dt>Caller</dt><dd class="phone">${call.from}</dd>
    <dt>Number called</dt><dd class="phone">${call.to}</dd>`
        : html`<dt>Called</dt><dd class="phone">${call.to}</dd>
    <dt>Name</dt><dd>${call.name || html`<span class="subtle">—</span>`}</dd>
    ${call.email && html`<dt>Email</dt><dd>${call.email}</dd>`}
    <dt>Caller ID</dt><dd class="phone">${call.from}</dd>`
    }
    <dt>Agent</dt><dd>${agent && agent.user_id === userId ? html`<a href="${href(request, `/agents/${agent.id}`)}">${agent.name}</a>` : html`<span class="subtle">Removed agent</span>`} <span class="subtle">version ${call.agent_version}</span></dd>
    <dt>${call.direction === 'inbound' ? 'Rang' : 'Placed'}</dt><dd>${dateTime(call.created_at)}</dd>
  </dl>
</section>`;
        const conversation = html`<section class="panel" aria-labelledby="conversation-title">
  <h2 id="conversation-title">Conversation</h2>
  ${recordingPlayer(result.recording_url)}
  ${
    result.transcript
      ? transcriptView(result.transcript, {
          agent: agent?.name ?? 'Agent',
          callee: call.name || (call.direction === 'inbound' ? 'Caller' : 'Callee'),
        })
      : html`<p class="subtle">${final ? 'No transcript was recorded for this call.' : 'The transcript appears here when the call ends.'}</p>`
  }
  <h3 class="subheading">Welcome message</h3>
  <p class="pre">${call.welcome_message || html`<span class="subtle">—</span>`}</p>
</section>`;
        return sendPage(request, reply, {
          title: `Call to ${call.to}`,
          section: 'calls',
          parent: { path: '/calls', label: 'Calls' },
          body: html`<div class="grid grid-2 call-grid">${outcome}${details}</div>
${conversation}
<section class="panel" aria-labelledby="analysis-title">
  <h2 id="analysis-title">What we learnt</h2>
  ${analysisView(result.analysis, final)}
  ${tools.value && html`<h3 class="subheading">Tools the agent used</h3>${tools}`}
</section>
<section class="panel" aria-labelledby="timeline-title"><h2 id="timeline-title">Timeline</h2>${timeline(call)}</section>`,
        });
      },
    },
  ];
}
