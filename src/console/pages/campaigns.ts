/**
 * Campaigns in the console (docs/campaigns.md, docs/console.md), through `services.campaigns` as
 * the API's /api/v1/campaigns routes: the list; a new campaign from a CSV file or pasted rows (the
 * same intake: bad numbers, listed numbers and repeats are refused by line, a malformed row refuses
 * the whole upload with its line), now or scheduled; start, pause, resume and cancel, each asked on
 * a page of its own first; live progress; the recipients with their calls; the results CSV.
 * Creating and each change carry a one-time key (src/web/once.ts): a repeated post answers the
 * first result and never acts twice. The CSV file comes as multipart/form-data, parsed in this
 * group's scope only.
 */
import multipart from '@fastify/multipart';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { recipientsFromCsv } from '../../campaigns/csv.js';
import type { RawRecipient } from '../../campaigns/intake.js';
import {
  type Campaign,
  type CampaignWithImport,
  CreateCampaignBody,
  ListCampaignsQuery,
  ListRecipientsQuery,
} from '../../campaigns/schemas.js';
import { ApiError } from '../../core/errors.js';
import { answerRecorder } from '../../core/idempotency/answer.js';
import { actionButton, emptyState, field, inputField, pager, select } from '../../web/components.js';
import { type FormFields, fieldIssues, formOf, textField, validated } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { newFormKey, oncePerFormKey } from '../../web/once.js';
import { redirectWithFlash } from '../cookies.js';
import { can, csrfField, memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';
import { textArea } from './agent-views.js';
import { campaignTable, importReport, isLive, progressRegion, recipientTable } from './campaign-views.js';

const PAGE_SIZE = 25;
const UPLOAD_LIMIT = 8 * 1024 * 1024;

/** Each change: the button, what the confirmation page says, the flash after it. */
const ACTIONS = {
  start: {
    label: 'Start now',
    from: ['draft', 'scheduled'],
    says: 'Calls start at once, up to the campaign’s concurrency, within the agent’s calling hours.',
    done: 'started',
  },
  pause: {
    label: 'Pause',
    from: ['running', 'paused'],
    says: 'No new call is placed; calls under way finish. It stays paused until you resume it.',
    done: 'paused',
  },
  resume: {
    label: 'Resume',
    from: ['paused'],
    says: 'Calls start again where the campaign stopped.',
    done: 'resumed',
  },
  cancel: {
    label: 'Cancel campaign',
    from: ['draft', 'scheduled', 'running', 'paused'],
    says: 'Every recipient not yet called is canceled; calls under way finish. This cannot be undone.',
    done: 'canceled',
  },
} as const;
type Action = keyof typeof ACTIONS;
const isAction = (value: string): value is Action => Object.hasOwn(ACTIONS, value);

interface NewForm {
  values: Record<string, string | undefined>;
  errors: Record<string, string>;
  refusal?: string;
  formKey?: string;
}

/** A datetime-local value read as UTC, or the text as typed (so the schema names it). */
function utcTimestamp(local: string | undefined): string | undefined {
  if (!local) return undefined;
  return /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/.test(local) ? `${local}:00.000Z` : local;
}

/** The rows of the file, else of the pasted text (a header naming `phone` is optional there). */
function rowsOf(
  fields: FormFields,
  file: string | undefined,
): { rows: RawRecipient[]; source: 'file' | 'pasted' } {
  if (file !== undefined && file.trim() !== '') return { rows: recipientsFromCsv(file), source: 'file' };
  const pasted = (textField(fields, 'rows') ?? '').replace(/\r\n?/g, '\n');
  const first = pasted.split('\n', 1)[0].toLowerCase();
  if (/(^|,)\s*phone\s*(,|$)/.test(first)) return { rows: recipientsFromCsv(pasted), source: 'pasted' };
  // Without a header each line is `phone[,name]`; its line is the pasted line.
  return {
    rows: recipientsFromCsv(`phone,name\n${pasted}`).map((row) => ({ ...row, line: row.line - 1 })),
    source: 'pasted',
  };
}

/** The uploaded file's text (multipart), if one was chosen. */
function fileOf(request: FastifyRequest): string | undefined {
  const value = (request.body as Record<string, unknown> | undefined)?.file;
  if (Buffer.isBuffer(value)) return value.toString('utf8');
  return undefined;
}

/** Field issues as words beside the form's fields (a row's issue names its line). */
function wordsOf(error: unknown): Record<string, string> {
  const issues = fieldIssues(error);
  const words: Record<string, string> = {};
  for (const [name, issue] of Object.entries(issues)) {
    if (name === 'file' || name === 'recipients') words.rows = `The list was not read: ${issue}`;
    else if (name === 'name') words.name = 'Give the campaign a name (up to 200 characters).';
    else if (name === 'agent_id') words.agent_id = 'Choose the agent that places the calls.';
    else if (name === 'scheduled_at')
      words.scheduled_at = 'Enter a date and time, or leave it empty to start by hand.';
    else if (name === 'max_concurrent_calls')
      words.max_concurrent_calls = 'Enter a whole number from 1 to 10,000.';
    else words[name] = issue;
  }
  return words;
}

export const campaignPages = consolePages(
  ['campaigns', 'agents', 'idempotency'],
  async (app, { campaigns, agents, idempotency }) => {
    await app.register(multipart, {
      attachFieldsToBody: 'keyValues',
      limits: { fileSize: UPLOAD_LIMIT, files: 1, fields: 20 },
    });

    const agentChoices = async (tenantId: string) =>
      (await agents.list(tenantId, { page: 1, limit: 100, sort_by: 'name', sort_order: 'asc' })).data;
    const agentNames = async (tenantId: string) =>
      new Map((await agentChoices(tenantId)).map((agent) => [agent.id, agent.name]));

    async function newPage(request: FastifyRequest, reply: FastifyReply, form: NewForm, status = 200) {
      const choices = await agentChoices(memberTenantId(request));
      const v = form.values;
      return sendPage(request, reply, {
        title: 'New campaign',
        section: 'campaigns',
        parent: { href: '/console/campaigns', label: 'Campaigns' },
        status,
        flash: form.refusal ? { kind: 'error', message: form.refusal } : undefined,
        body:
          choices.length === 0
            ? html`<div class="panel">${emptyState({ title: 'Create an agent first', text: 'A campaign is a list of people one of your agents calls.', action: html`<a class="button" href="/console/agents">Go to agents</a>` })}</div>`
            : html`<form method="post" action="/console/campaigns" enctype="multipart/form-data" class="panel" novalidate>
  ${csrfField(reply)}<input type="hidden" name="form_key" value="${form.formKey ?? newFormKey()}">
  <div class="form-grid">
    ${inputField({ id: 'name', label: 'Name', value: v.name, error: form.errors.name, required: true, attributes: html`maxlength="200"` })}
    ${field({ id: 'agent_id', label: 'Agent', error: form.errors.agent_id, control: select({ id: 'agent_id', choices: choices.map((a) => ({ value: a.id, label: a.name })), selected: v.agent_id, error: form.errors.agent_id }) })}
    ${field({ id: 'file', label: 'CSV file', hint: 'A header row naming a phone column; name and email columns are used as such, other columns become the call’s context.', control: html`<input id="file" name="file" type="file" accept=".csv,text/csv" aria-describedby="file-hint">` })}
    ${textArea({ id: 'rows', label: 'Or paste the rows', value: v.rows ?? '', hint: 'One recipient a line: phone, then an optional name, e.g. +14155550123,Ada Lovelace. A header line naming phone is optional.', error: form.errors.rows })}
    ${inputField({ id: 'scheduled_at', label: 'Start at (UTC, optional)', type: 'datetime-local', value: v.scheduled_at, error: form.errors.scheduled_at, hint: 'Empty: the campaign waits as a draft until you start it.' })}
    ${inputField({ id: 'max_concurrent_calls', label: 'Calls at once (optional)', type: 'number', value: v.max_concurrent_calls, error: form.errors.max_concurrent_calls, hint: 'Default 10.' })}
  </div>
  <div class="form-actions"><button class="button button-primary" type="submit">Create campaign</button>
  <a class="button button-quiet" href="/console/campaigns">Cancel</a></div>
</form>`,
      });
    }

    async function campaignPage(
      request: FastifyRequest,
      reply: FastifyReply,
      campaign: Campaign,
      extra?: Html,
      status = 200,
    ) {
      const tenantId = memberTenantId(request);
      const page = Number((request.query as { page?: string }).page) || 1;
      const recipients = await campaigns.recipients(
        tenantId,
        campaign.id,
        validated(ListRecipientsQuery, { page: Math.min(Math.max(1, page), 1_000_000), limit: PAGE_SIZE }),
      );
      const agentName = (await agentNames(tenantId)).get(campaign.agent_id) ?? campaign.agent_id;
      const admin = can(request, 'admin');
      const actions = html`<a class="button" href="/console/campaigns/${campaign.id}/results.csv" download>Results CSV</a>${
        admin &&
        (Object.keys(ACTIONS) as Action[])
          .filter((action) => (ACTIONS[action].from as readonly string[]).includes(campaign.status))
          .filter((action) => !(action === 'pause' && campaign.pause_reason === 'manual'))
          .map(
            (action) =>
              html`<a class="button${action === 'cancel' ? ' button-danger' : action === 'start' || action === 'resume' ? ' button-primary' : ''}" href="/console/campaigns/${campaign.id}/${action}">${ACTIONS[action].label}</a>`,
          )
      }`;
      const progress = isLive(campaign)
        ? html`<div class="panel" data-refresh="/console/campaigns/${campaign.id}/progress" data-refresh-every="3000" aria-live="polite">${progressRegion(campaign)}</div>`
        : html`<div class="panel">${progressRegion(campaign)}</div>`;
      return sendPage(request, reply, {
        title: campaign.name,
        section: 'campaigns',
        parent: { href: '/console/campaigns', label: 'Campaigns' },
        status,
        actions,
        body: html`${extra}
<div class="panel"><dl class="details">
  <dt>Agent</dt><dd><a href="/console/agents/${campaign.agent_id}">${agentName}</a></dd>
  ${campaign.scheduled_at && html`<dt>Scheduled for</dt><dd>${new Date(campaign.scheduled_at).toISOString().replace('T', ' ').slice(0, 16)} UTC</dd>`}
  <dt>Calls at once</dt><dd>${campaign.max_concurrent_calls ?? 10}</dd>
  <dt>Id</dt><dd class="mono">${campaign.id}</dd>
</dl></div>
${progress}
<section class="panel panel-flush" aria-labelledby="recipients-title">
  <div class="panel-header"><h2 id="recipients-title">Recipients</h2></div>
  ${recipients.data.length === 0 ? html`<div class="empty-state"><p>No recipient.</p></div>` : recipientTable(recipients.data)}
</section>
${recipients.pagination.pages > 1 && pager(recipients.pagination, `/console/campaigns/${campaign.id}`, {})}`,
      });
    }

    app.get('/campaigns', async (request, reply) => {
      const tenantId = memberTenantId(request);
      const raw = (request.query as { page?: string }).page;
      const page = raw && /^\d{1,9}$/.test(raw) ? Number(raw) : 1;
      const { data, pagination } = await campaigns.list(
        tenantId,
        validated(ListCampaignsQuery, { page, limit: PAGE_SIZE }),
      );
      const create =
        can(request, 'admin') &&
        html`<a class="button button-primary" href="/console/campaigns/new">New campaign</a>`;
      return sendPage(request, reply, {
        title: 'Campaigns',
        section: 'campaigns',
        actions: create || undefined,
        body:
          pagination.total === 0
            ? html`<div class="panel">${emptyState({ title: 'No campaigns yet', text: 'A campaign is a list of people one of your agents calls: upload a CSV or paste the numbers, start now or at a time you choose.', action: create || undefined })}</div>`
            : html`${campaignTable(data, await agentNames(tenantId))}${pager(pagination, '/console/campaigns', {})}`,
      });
    });

    app.get('/campaigns/new', { config: { consoleAccess: 'admin' } }, (request, reply) =>
      newPage(request, reply, { values: {}, errors: {} }),
    );

    app.post('/campaigns', { bodyLimit: UPLOAD_LIMIT + 64 * 1024 }, async (request, reply) => {
      const tenantId = memberTenantId(request);
      const fields = formOf(request);
      const values = {
        name: textField(fields, 'name'),
        agent_id: textField(fields, 'agent_id'),
        rows: textField(fields, 'rows'),
        scheduled_at: textField(fields, 'scheduled_at'),
        max_concurrent_calls: textField(fields, 'max_concurrent_calls'),
      };
      const formKey = textField(fields, 'form_key');
      const refuse = (form: Omit<NewForm, 'values'>, status: number) =>
        newPage(request, reply, { values, ...form }, status);
      let source: 'file' | 'pasted' = 'pasted';
      let result: CampaignWithImport;
      try {
        const read = rowsOf(fields, fileOf(request));
        source = read.source;
        if (read.rows.length === 0) {
          return refuse(
            { errors: { rows: 'Add at least one recipient: choose a CSV file or paste the rows.' }, formKey },
            422,
          );
        }
        const concurrency = values.max_concurrent_calls;
        const { recipients: _none, ...input } = validated(CreateCampaignBody, {
          name: values.name ?? '',
          agent_id: values.agent_id ?? '',
          recipients: [],
          ...(values.scheduled_at ? { scheduled_at: utcTimestamp(values.scheduled_at) } : {}),
          ...(concurrency
            ? { max_concurrent_calls: /^\d{1,9}$/.test(concurrency) ? Number(concurrency) : concurrency }
            : {}),
        });
        const answer = (campaign: CampaignWithImport) => ({
          status: 201,
          body: { data: campaign },
          headers: {},
        });
        result = await oncePerFormKey(
          idempotency,
          { tenantId, formKey, path: '/console/campaigns', fields: { ...input, recipients: read.rows } },
          (claim) => campaigns.create(tenantId, input, read.rows, answerRecorder(claim, answer)),
          (stored) => (stored as { data: CampaignWithImport }).data,
        );
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        const errors = wordsOf(error);
        if (Object.keys(errors).length > 0) {
          return refuse(
            { errors, formKey, refusal: 'The campaign was not created: check the fields marked below.' },
            422,
          );
        }
        return refuse(
          { errors: {}, refusal: `The campaign was not created: ${error.message}` },
          error.status,
        );
      }
      // The page itself (not a redirect): the refused rows are listed once, and a refresh replays them.
      const { import: report, ...campaign } = result;
      return campaignPage(request, reply, campaign, importReport(report, source), 201);
    });

    app.get<{ Params: { id: string } }>('/campaigns/:id', async (request, reply) =>
      campaignPage(request, reply, await campaigns.get(memberTenantId(request), request.params.id)),
    );

    app.get<{ Params: { id: string } }>('/campaigns/:id/progress', async (request, reply) => {
      const campaign = await campaigns.get(memberTenantId(request), request.params.id);
      return reply
        .type('text/html; charset=utf-8')
        .header('cache-control', 'no-store')
        .send(progressRegion(campaign).value);
    });

    app.get<{ Params: { id: string } }>('/campaigns/:id/results.csv', async (request, reply) => {
      const csv = await campaigns.resultsCsv(memberTenantId(request), request.params.id);
      return reply
        .type('text/csv; charset=utf-8')
        .header('cache-control', 'no-store')
        .header('content-disposition', `attachment; filename="${request.params.id}-results.csv"`)
        .send(csv);
    });

    app.get<{ Params: { id: string; action: string } }>(
      '/campaigns/:id/:action',
      { config: { consoleAccess: 'admin' } },
      async (request, reply) => {
        const { action } = request.params;
        const campaign = await campaigns.get(memberTenantId(request), request.params.id);
        if (!isAction(action)) return reply.callNotFound();
        const what = ACTIONS[action];
        return sendPage(request, reply, {
          title: `${what.label}: ${campaign.name}?`,
          section: 'campaigns',
          parent: { href: `/console/campaigns/${campaign.id}`, label: campaign.name },
          body: html`<div class="panel stack">
  <p>${what.says}</p>
  <p class="muted">${campaign.recipients.pending.toLocaleString('en-US')} of ${campaign.recipients.total.toLocaleString('en-US')} recipients are still waiting to be called.</p>
  <div class="form-actions">${actionButton({
    action: `/console/campaigns/${campaign.id}/${action}`,
    label: what.label,
    csrf: html`${csrfField(reply)}<input type="hidden" name="form_key" value="${newFormKey()}">`,
    tone: action === 'cancel' ? 'danger' : 'primary',
  })}<a class="button button-quiet" href="/console/campaigns/${campaign.id}">Go back</a></div>
</div>`,
        });
      },
    );

    app.post<{ Params: { id: string; action: string } }>('/campaigns/:id/:action', async (request, reply) => {
      const { action, id } = request.params;
      if (!isAction(action)) return reply.callNotFound();
      const tenantId = memberTenantId(request);
      const path = `/console/campaigns/${id}/${action}`;
      const campaign = await oncePerFormKey(
        idempotency,
        { tenantId, formKey: textField(formOf(request), 'form_key'), path, fields: {} },
        async (claim) => {
          const changed = await campaigns[action](tenantId, id);
          if (claim) await idempotency.record(claim, { status: 200, body: { data: changed }, headers: {} });
          return changed;
        },
        (stored) => (stored as { data: Campaign }).data,
      );
      return redirectWithFlash(
        reply,
        `/console/campaigns/${campaign.id}`,
        `${campaign.name} is ${ACTIONS[action].done}.`,
      );
    });
  },
);
