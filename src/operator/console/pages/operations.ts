/**
 * Engines and jobs: the calls of the last 7 days by engine and ending, the calls whose engine
 * went quiet (a late or lost callback) or that look stuck, and the job queues with their failed
 * jobs, which an admin may put back in line.
 */
import { emptyState, statusBadge } from '../../../web/components.js';
import { type Html, html } from '../../../web/html.js';
import { redirectWithFlash } from '../cookies.js';
import { can, csrfField, sendPage } from '../layout.js';
import { operatorPages } from '../plugin.js';

interface QuietCall {
  id: string;
  tenant_id: string;
  engine: string | null;
  status: string;
  updated_at: Date;
}

function callTable(id: string, title: string, note: string, calls: QuietCall[]): Html {
  return html`<section class="panel panel-flush" aria-labelledby="${id}">
  <div class="panel-header"><h2 id="${id}">${title}</h2><span class="subtle">${calls.length}</span></div>
  <p class="panel-note hint">${note}</p>
  ${
    calls.length === 0
      ? html`<p class="panel-note subtle">None.</p>`
      : html`<div class="table-wrap" role="region" aria-label="Calls stuck" tabindex="0"><table><thead><tr><th scope="col">Call</th><th scope="col">Tenant</th><th scope="col">Engine</th><th scope="col">Status</th><th scope="col">Last news</th></tr></thead><tbody>
    ${calls.map((call) => html`<tr><td><code>${call.id}</code></td><td><a href="/operator/tenants/${call.tenant_id}">${call.tenant_id}</a></td><td>${call.engine ?? 'simulator'}</td><td>${statusBadge(call.status)}</td><td>${call.updated_at.toISOString().replace('T', ' ').slice(0, 16)} UTC</td></tr>`)}
    </tbody></table></div>`
  }
</section>`;
}

export const operatorOperationsPages = operatorPages(
  ['operatorReports'],
  async (app, { operatorReports }) => {
    app.get('/engines', async (request, reply) => {
      const report = await operatorReports.engines();
      const endings =
        report.endings.length === 0
          ? emptyState({ title: 'No calls', text: 'No call was placed in the last 7 days.' })
          : html`<div class="table-wrap" role="region" aria-label="Calls by engine" tabindex="0"><table><thead><tr><th scope="col">Engine</th><th scope="col">Status</th><th scope="col">Ended reason</th><th scope="col" class="numeric">Calls</th></tr></thead><tbody>
      ${report.endings.map((row) => html`<tr><td>${row.engine}</td><td>${statusBadge(row.status)}</td><td>${row.ended_reason ?? html`<span class="subtle">—</span>`}</td><td class="numeric">${row.calls.toLocaleString('en-US')}</td></tr>`)}
      </tbody></table></div>`;
      return sendPage(request, reply, {
        title: 'Engines',
        section: 'engines',
        body: html`<section class="panel panel-flush" aria-labelledby="endings"><div class="panel-header"><h2 id="endings">Calls of the last 7 days by engine and ending</h2></div>${endings}</section>
      ${callTable('late', 'Late or missing callbacks', 'Placed with an engine, not final, and no report from the engine for 15 minutes.', report.lateCallbacks)}
      ${callTable('stuck-dialing', 'Stuck dialing', 'Dialing for more than 10 minutes without news.', report.stuckDialing)}
      ${callTable('stuck-in-progress', 'Stuck in progress', 'In progress for more than 2 hours without news.', report.stuckInProgress)}`,
      });
    });

    app.get('/jobs', async (request, reply) => {
      const { queues, failed } = await operatorReports.jobs();
      const canRetry = can(request, 'admin');
      const queueTable =
        queues.length === 0
          ? emptyState({ title: 'No jobs', text: 'The queues are empty.' })
          : html`<div class="table-wrap" role="region" aria-label="Queues" tabindex="0"><table><thead><tr><th scope="col">Queue</th><th scope="col" class="numeric">Queued</th><th scope="col" class="numeric">Due now</th><th scope="col" class="numeric">Running</th><th scope="col">Oldest due</th><th scope="col" class="numeric">Failed</th></tr></thead><tbody>
      ${queues.map((queue) => html`<tr><td>${queue.queue}</td><td class="numeric">${queue.queued}</td><td class="numeric">${queue.due}</td><td class="numeric">${queue.running}</td><td>${queue.oldest_due ? `${new Date(queue.oldest_due).toISOString().replace('T', ' ').slice(0, 19)} UTC` : '—'}</td><td class="numeric">${queue.failed}</td></tr>`)}
      </tbody></table></div>`;
      const failedTable =
        failed.length === 0
          ? html`<p class="panel-note subtle">No failed jobs.</p>`
          : html`<div class="table-wrap" role="region" aria-label="Failed jobs" tabindex="0"><table><thead><tr><th scope="col">Job</th><th scope="col">Queue</th><th scope="col">Tenant</th><th scope="col" class="numeric">Attempts</th><th scope="col">Last error</th>${canRetry && html`<th scope="col"><span class="visually-hidden">Actions</span></th>`}</tr></thead><tbody>
      ${failed.map(
        (
          job,
        ) => html`<tr><td>${job.id}</td><td>${job.queue}</td><td>${job.tenant_id ? html`<a href="/operator/tenants/${job.tenant_id}">${job.tenant_id}</a>` : '—'}</td><td class="numeric">${job.attempts}</td><td><code>${(job.last_error ?? '').slice(0, 300)}</code></td>
        ${canRetry && html`<td class="actions"><form method="post" action="/operator/jobs/${job.id}/retry">${csrfField(reply)}<button class="button button-small" type="submit">Retry</button></form></td>`}</tr>`,
      )}</tbody></table></div>`;
      return sendPage(request, reply, {
        title: 'Jobs',
        section: 'jobs',
        body: html`<section class="panel panel-flush" aria-labelledby="queues"><div class="panel-header"><h2 id="queues">Queues</h2></div>${queueTable}</section>
      <section class="panel panel-flush" aria-labelledby="failed"><div class="panel-header"><h2 id="failed">Failed jobs</h2></div>${failedTable}</section>`,
      });
    });

    app.post<{ Params: { id: string } }>('/jobs/:id/retry', async (request, reply) => {
      await operatorReports.retryJob(request.params.id);
      return redirectWithFlash(reply, '/operator/jobs', `Job ${request.params.id} is queued again.`);
    });
  },
);
