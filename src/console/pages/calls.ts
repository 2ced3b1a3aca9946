/**
 * Calls in the console (docs/console.md): the list with the filters of GET /api/v1/calls, and each
 * call's page. While a call is not final its status and timeline follow it: the region re-fetches
 * `/console/calls/{id}/live` (console.js `data-refresh`) until the fragment carries `data-final`;
 * without scripts a reload shows the current state.
 */
import { Readable } from 'node:stream';
import { callsCsv } from '../../calls/export.js';
import {
  CALL_STATUSES,
  type CallDetail,
  type CallListItem,
  FINAL_STATUSES,
  ListPartnerCallsQuery,
} from '../../calls/schemas.js';
import { ApiError } from '../../core/errors.js';
import {
  analysisView,
  answerDetails,
  outcomeOf,
  recordingPlayer,
  toolCallsView,
  transcriptView,
} from '../../web/call-outcome.js';
import { dateTime, emptyState, field, inputField, pager, select, statusBadge } from '../../web/components.js';
import { fieldIssues, validated } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';
import { filterQuery, filtersOf, type ListQuery, localValue } from './call-filters.js';

const PAGE_SIZE = 25;

function duration(seconds: number | null): string {
  if (seconds === null) return '—';
  const minutes = Math.floor(seconds / 60);
  return minutes > 0 ? `${minutes} min ${seconds % 60} s` : `${seconds} s`;
}

const isFinal = (call: { status: string }) => FINAL_STATUSES.some((status) => status === call.status);

function callTable(calls: CallListItem[], agentNames: Map<string, string>): Html {
  return html`<div class="table-wrap" role="region" aria-label="Calls" tabindex="0"><table>
  <thead><tr>
    <th scope="col">Caller or callee</th><th scope="col">Status</th><th scope="col">Agent</th><th scope="col">Our number</th>
    <th scope="col">Created</th><th scope="col" class="numeric">Duration</th><th scope="col" class="numeric">Billed min</th>
  </tr></thead>
  <tbody>
  ${calls.map(
    (call) => html`<tr>
    <td><a href="/console/calls/${call.id}"><strong>${call.direction === 'inbound' ? call.from : call.to}</strong></a> <span class="subtle">${call.direction === 'inbound' ? 'inbound' : 'outbound'}</span>${call.name && html`<br><span class="subtle">${call.name}</span>`}</td>
    <td>${statusBadge(call.status)}</td>
    <td>${call.agent_id === null ? html`<span class="subtle">No agent</span>` : html`${agentNames.get(call.agent_id) ?? html`<span class="mono subtle">${call.agent_id}</span>`} <span class="subtle">v${call.agent_version}</span>`}</td>
    <td class="mono">${call.direction === 'inbound' ? call.to : call.from}</td>
    <td>${dateTime(call.created_at)}</td>
    <td class="numeric">${duration(call.duration_seconds)}</td>
    <td class="numeric">${call.billed_minutes ?? '—'}</td>
  </tr>`,
  )}
  </tbody>
</table></div>`;
}

function eventLabel(status: string): string {
  const labels: Record<string, string> = {
    queued: 'Queued',
    dialing: 'Dialling',
    in_progress: 'Answered, in progress',
    completed: 'Completed',
    no_answer: 'No answer',
    failed: 'Failed',
    tool_call: 'Tool called',
  };
  return labels[status] ?? status.replace(/_/g, ' ');
}

function eventDetail(detail: Record<string, unknown>): string {
  return Object.entries(detail)
    .filter(([, value]) => value !== null && value !== undefined)
    .map(
      ([key, value]) =>
        `${key.replace(/_/g, ' ')}: ${typeof value === 'object' ? JSON.stringify(value) : String(value)}`,
    )
    .join(' · ');
}

/** The region that follows the call: status, times, outcome and timeline. */
export function liveRegion(call: CallDetail): Html {
  const final = isFinal(call);
  return html`<div class="call-status">
  <p class="call-status-line"><span class="stat-label">Status</span> <span class="call-status-badge">${statusBadge(call.status)}</span>
  ${final ? html`<span class="subtle" data-final>Final</span>` : html`<span class="subtle live-note">Updating live</span>`}</p>
  <dl class="details">
    <dt>Started</dt><dd>${dateTime(call.started_at)}</dd>
    <dt>Ended</dt><dd>${dateTime(call.ended_at)}</dd>
    <dt>Duration</dt><dd>${call.duration_seconds === null ? html`<span class="subtle">—</span>` : duration(call.duration_seconds)}</dd>
    <dt>Billed minutes</dt><dd>${call.billed_minutes ?? html`<span class="subtle">—</span>`}</dd>
    <dt>Attempts</dt><dd>${call.attempts}</dd>
    ${call.scheduled_for && html`<dt>Waits until</dt><dd>${dateTime(call.scheduled_for)}</dd>`}
    <dt>Ended reason</dt><dd>${call.ended_reason ?? html`<span class="subtle">—</span>`}</dd>
    ${call.failure_reason && html`<dt>Failure reason</dt><dd>${call.failure_reason}</dd>`}
  </dl>
</div>
<h3 class="subheading">Timeline</h3>
<ol class="timeline">
  ${call.events.map(
    (event) =>
      html`<li><strong>${eventLabel(event.status)}</strong>${
        Object.keys(event.detail).length > 0 &&
        html` <span class="subtle">${eventDetail(event.detail)}</span>`
      }<time datetime="${event.at}">${event.at.replace('T', ' ').slice(0, 19)} UTC</time></li>`,
  )}
</ol>
`;
}

/**
 * What the call came to: who answered, the transfer, the recording, the transcript as turns, the
 * analysis and the tool calls. Refreshed with the status until the call is final.
 */
export function outcomeRegion(call: CallDetail): Html {
  const final = isFinal(call);
  const outcome = outcomeOf(call);
  const answer = answerDetails(outcome);
  return html`<div class="grid grid-2 outcome-grid"${final ? html` data-final` : ''}>
<section class="panel" aria-labelledby="conversation-title">
  <h2 id="conversation-title">Conversation</h2>
  ${(outcome.answered_by || outcome.transferred_to) && html`<dl class="details">${answer}</dl>`}
  ${recordingPlayer(outcome.recording_url)}
  ${
    outcome.transcript
      ? transcriptView(outcome.transcript, {
          agent: 'Agent',
          callee: call.name || (call.direction === 'inbound' ? 'Caller' : 'Callee'),
        })
      : html`<p class="subtle">${final ? 'No transcript was recorded for this call.' : 'The transcript appears here when the call ends.'}</p>`
  }
</section>
<section class="panel" aria-labelledby="analysis-title">
  <h2 id="analysis-title">Analysis</h2>
  ${analysisView(outcome.analysis, final)}
  ${toolCallsView(outcome.events).value && html`<h3 class="subheading">Tool calls</h3>${toolCallsView(outcome.events)}`}
</section>
</div>`;
}

export const callPages = consolePages(
  ['calls', 'agents', 'database'],
  async (app, { calls, agents, database }) => {
    app.get<{ Querystring: ListQuery }>('/calls.csv', async (request, reply) => {
      const filters = filtersOf(request.query);
      const query = validated(ListPartnerCallsQuery, {
        page: 1,
        limit: PAGE_SIZE,
        ...Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined)),
      });
      const rows = callsCsv(database.db, {
        tenantId: memberTenantId(request),
        agentId: query.agent_id,
        userId: query.user_id,
        status: query.status,
        createdAfter: query.created_after ? new Date(query.created_after) : undefined,
        createdBefore: query.created_before ? new Date(query.created_before) : undefined,
        direction: query.direction,
        toNumber: request.query.to?.trim() || undefined,
      });
      return reply
        .type('text/csv; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('content-disposition', 'attachment; filename="calls.csv"')
        .send(Readable.from(rows));
    });

    app.get<{ Querystring: ListQuery }>('/calls', async (request, reply) => {
      const tenantId = memberTenantId(request);
      const q = request.query;
      const page = q.page && /^\d{1,9}$/.test(q.page) && Number(q.page) > 0 ? Number(q.page) : 1;
      const filters = filtersOf(q);
      const numberFilter = q.to?.trim() || undefined;
      // The tenant's agents name the rows and fill the agent filter (one indexed page, no query per row).
      const agentPage = await agents.list(tenantId, {
        page: 1,
        limit: 100,
        sort_by: 'name',
        sort_order: 'asc',
      });
      const agentNames = new Map(agentPage.data.map((agent) => [agent.id, agent.name]));
      let issues: Record<string, string> = {};
      let result: Awaited<ReturnType<typeof calls.listForTenant>> | undefined;
      try {
        const query = validated(ListPartnerCallsQuery, {
          page,
          limit: PAGE_SIZE,
          ...Object.fromEntries(Object.entries(filters).filter(([, value]) => value !== undefined)),
        });
        result = await calls.listForTenant(tenantId, query, { to: numberFilter });
      } catch (error) {
        if (!(error instanceof ApiError) || error.status !== 422) throw error;
        issues = fieldIssues(error);
      }
      const filtered =
        Object.values(filters).some((value) => value !== undefined) || numberFilter !== undefined;
      const form = html`<form method="get" action="/console/calls" class="filters panel call-filters" aria-label="Filter calls">
  ${field({
    id: 'agent_id',
    label: 'Agent',
    error: issues.agent_id,
    control: select({
      id: 'agent_id',
      choices: [
        { value: '', label: 'All agents' },
        ...agentPage.data.map((agent) => ({ value: agent.id, label: agent.name })),
      ],
      selected: filters.agent_id ?? '',
    }),
  })}
  ${inputField({ id: 'user_id', label: 'User id', value: filters.user_id, placeholder: 'usr_…', error: issues.user_id })}
  ${field({
    id: 'status',
    label: 'Status',
    error: issues.status,
    control: select({
      id: 'status',
      choices: [
        { value: '', label: 'Any status' },
        ...CALL_STATUSES.map((s) => ({ value: s, label: s.replace(/_/g, ' ') })),
      ],
      selected: filters.status ?? '',
      error: issues.status,
    }),
  })}
  ${field({
    id: 'direction',
    label: 'Direction',
    error: issues.direction,
    control: select({
      id: 'direction',
      choices: [
        { value: '', label: 'Both directions' },
        { value: 'inbound', label: 'Inbound (answered)' },
        { value: 'outbound', label: 'Outbound (placed)' },
      ],
      selected: filters.direction ?? '',
      error: issues.direction,
    }),
  })}
  ${numberFilter && html`<input type="hidden" name="to" value="${numberFilter}"><p class="subtle">Calls to <strong class="mono">${numberFilter}</strong></p>`}
  ${inputField({ id: 'created_after', label: 'Created after (UTC)', type: 'datetime-local', value: localValue(q.created_after), error: issues.created_after })}
  ${inputField({ id: 'created_before', label: 'Created before (UTC)', type: 'datetime-local', value: localValue(q.created_before), error: issues.created_before })}
  <div class="filter-buttons">
    <button class="button button-primary" type="submit">Filter</button>
    ${filtered && html`<a class="button button-quiet" href="/console/calls">Clear</a>`}
  </div>
</form>`;
      let list: Html;
      if (!result) {
        list = html`<div class="panel">${emptyState({ title: 'Check the filters', text: 'Some filters are not valid: see the messages above.' })}</div>`;
      } else if (result.pagination.total === 0) {
        list = html`<div class="panel">${
          filtered
            ? emptyState({
                title: 'No calls match',
                text: 'No call matches these filters. Widen them or clear them.',
              })
            : emptyState({
                title: 'No calls yet',
                text: 'Calls appear here once an agent places them: through its webhook, the API, or a test call from the agent’s page.',
                action: html`<a class="button" href="/console/agents">Go to agents</a>`,
              })
        }</div>`;
      } else {
        list = html`<section class="panel panel-flush" aria-label="Calls">
  ${callTable(result.data, agentNames)}
  ${pager(result.pagination, '/console/calls', { ...q, page: undefined })}
</section>`;
      }
      return sendPage(request, reply, {
        title: 'Calls',
        section: 'calls',
        actions:
          result && result.pagination.total > 0
            ? html`<a class="button" href="/console/calls.csv${filterQuery(q)}" download>Export CSV</a>`
            : undefined,
        status: result ? 200 : 422,
        body: html`${form}${list}`,
      });
    });

    app.get<{ Params: { id: string } }>('/calls/:id', async (request, reply) => {
      const tenantId = memberTenantId(request);
      const call = await calls.getForTenant(tenantId, request.params.id);
      const agent = call.agent_id
        ? await agents.get(tenantId, call.agent_id).catch(() => undefined)
        : undefined;
      const final = isFinal(call);
      const region = final
        ? html`<div id="call-live">${liveRegion(call)}</div>`
        : html`<div id="call-live" data-refresh="/console/calls/${call.id}/live" data-refresh-every="1000" aria-live="polite">${liveRegion(call)}</div>`;
      const context =
        Object.keys(call.context).length > 0 ? JSON.stringify(call.context, null, 2) : undefined;
      const body = html`<div class="grid grid-2 call-grid">
<section class="panel" aria-labelledby="live-title">
  <h2 id="live-title">Progress</h2>
  ${region}
  ${!final && html`<noscript><p class="subtle">Reload the page to see the latest status.</p></noscript>`}
</section>
<section class="panel" aria-labelledby="call-title">
  <h2 id="call-title">Call</h2>
  <dl class="details">
    <dt>To</dt><dd class="mono">${call.to}</dd>
    <dt>Name</dt><dd>${call.name || html`<span class="subtle">—</span>`}</dd>
    ${call.email && html`<dt>Email</dt><dd>${call.email}</dd>`}
    <dt>From</dt><dd class="mono">${call.from}</dd>
    <dt>Direction</dt><dd>${call.direction === 'inbound' ? 'Inbound' : 'Outbound'}</dd>
    <dt>Agent</dt><dd>${call.agent_id === null ? html`<span class="subtle">None (declined)</span>` : html`${agent ? html`<a href="/console/agents/${agent.id}">${agent.name}</a>` : html`<span class="mono">${call.agent_id}</span>`} <span class="subtle">version ${call.agent_version}</span>`}</dd>
    ${call.user_id !== null && html`<dt>User</dt><dd><a class="mono" href="/console/calls?user_id=${encodeURIComponent(call.user_id)}" title="This user’s calls">${call.user_id}</a></dd>`}
    <dt>Created</dt><dd>${dateTime(call.created_at)}</dd>
    <dt>Engine</dt><dd>${call.engine}${call.engine_call_id && html` <span class="mono subtle">${call.engine_call_id}</span>`}</dd>
    <dt>Call id</dt><dd class="mono">${call.id}</dd>
  </dl>
</section>
</div>
${
  final
    ? html`<div id="call-outcome">${outcomeRegion(call)}</div>`
    : html`<div id="call-outcome" data-refresh="/console/calls/${call.id}/outcome" data-refresh-every="1500">${outcomeRegion(call)}</div>`
}
<section class="panel" aria-labelledby="script-title">
  <h2 id="script-title">What the agent was given</h2>
  <dl class="details">
    <dt>Prompt</dt><dd class="pre">${call.prompt}</dd>
    <dt>Welcome message</dt><dd class="pre">${call.welcome_message || html`<span class="subtle">—</span>`}</dd>
    <dt>Context</dt><dd>${context ? html`<pre class="context">${context}</pre>` : html`<span class="subtle">None</span>`}</dd>
  </dl>
</section>`;
      return sendPage(request, reply, {
        title: call.direction === 'inbound' ? `Call from ${call.from}` : `Call to ${call.to}`,
        section: 'calls',
        parent: { href: '/console/calls', label: 'Calls' },
        body,
      });
    });

    app.get<{ Params: { id: string } }>('/calls/:id/live', async (request, reply) => {
      const call = await calls.getForTenant(memberTenantId(request), request.params.id);
      return reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(liveRegion(call).value);
    });

    app.get<{ Params: { id: string } }>('/calls/:id/outcome', async (request, reply) => {
      const call = await calls.getForTenant(memberTenantId(request), request.params.id);
      return reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(outcomeRegion(call).value);
    });
  },
);
