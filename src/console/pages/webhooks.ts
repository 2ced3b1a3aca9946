/**
 * Webhook endpoints in the console: the list (with the "disabled after 3 days of failures" state),
 * create and edit (the signing secret shown once, also after a rotation), enable/disable, delete,
 * and an endpoint's deliveries, each linked to its page with a Resend button (./webhook-deliveries.ts,
 * with "Send test event"). Every write calls services.events, as the API.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import {
  CreateEndpointBody,
  EVENT_TYPES,
  UpdateEndpointBody,
  type WebhookEndpoint,
  type WebhookEndpointWithSecret,
} from '../../events/schemas.js';
import {
  actionButton,
  badge,
  dateTime,
  emptyState,
  inputField,
  namedIssue,
  pager,
  secretOnce,
  statusBadge,
} from '../../web/components.js';
import { fieldIssues, formOf, listField, textField, validated } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { keepForOnce, redirectWithFlash, takeOnce } from '../cookies.js';
import { can, csrfField, memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';
import { resendButton, testEventButton } from './webhook-deliveries.js';

type Page = { page?: string };
const pageOf = (query: Page) => Math.max(1, Number.parseInt(query.page ?? '1', 10) || 1);

/** The endpoint's state in words: on, off by a member, or off after failing for 3 days. */
function stateBadge(endpoint: WebhookEndpoint): Html {
  if (endpoint.enabled && endpoint.failing_since) return badge('Failing', 'warning');
  if (endpoint.enabled) return badge('Healthy', 'success');
  if (endpoint.failing_since) return badge('Disabled after 3 days of failures', 'danger');
  return badge('Disabled');
}

/** "3 hours", "2 days": how long something has lasted, in the largest whole unit. */
export function lasted(fromIso: string, now: Date): string {
  const minutes = Math.max(0, Math.floor((now.getTime() - Date.parse(fromIso)) / 60_000));
  const [n, unit] =
    minutes < 60
      ? [minutes, 'minute']
      : minutes < 48 * 60
        ? [Math.floor(minutes / 60), 'hour']
        : [Math.floor(minutes / 1440), 'day'];
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/** Whether the endpoint answers, plainly, and since when (and how long) it has not. */
function healthText(endpoint: WebhookEndpoint, now: Date): Html {
  if (endpoint.failing_since) {
    const note = endpoint.enabled
      ? 'Retrying; disabled after 3 days of failures.'
      : 'Nothing is sent until it is enabled again.';
    return html`${stateBadge(endpoint)}<br><span class="subtle">Failing since ${dateTime(endpoint.failing_since)} (${lasted(endpoint.failing_since, now)}). ${note}</span>`;
  }
  return html`${stateBadge(endpoint)}<br><span class="subtle">${
    endpoint.enabled ? 'Answering: no delivery is failing.' : 'Turned off by a member: nothing is sent.'
  }</span>`;
}

const eventsText = (events: string[]) => (events.includes('*') ? 'All events' : events.join(', '));

interface EndpointForm {
  values?: { url?: string; events?: string[]; description?: string };
  errors?: Record<string, string>;
}

function endpointFields(form: EndpointForm): Html {
  const chosen = new Set(form.values?.events ?? ['*']);
  return html`<div class="form-grid">
  ${inputField({ id: 'url', label: 'URL', type: 'url', required: true, value: form.values?.url, error: form.errors?.url, placeholder: 'https://hooks.example.com/voiceplane', hint: 'Events are POSTed here, signed with the endpoint’s secret (Standard Webhooks).', wide: true })}
  ${inputField({ id: 'description', label: 'Description', value: form.values?.description, error: form.errors?.description, placeholder: 'CRM sync', wide: true })}
  <fieldset class="field field-wide">
    <legend>Events</legend>
    <div class="checkbox-grid">
      <label class="checkbox"><input type="checkbox" name="events" value="*"${chosen.has('*') ? html` checked` : ''}> All events</label>
      ${EVENT_TYPES.map(
        (type) =>
          html`<label class="checkbox"><input type="checkbox" name="events" value="${type}"${chosen.has(type) ? html` checked` : ''}> <code>${type}</code></label>`,
      )}
    </div>
    ${form.errors?.events && html`<p class="error">${namedIssue('Events', form.errors.events)}</p>`}
  </fieldset>
</div>`;
}

function formValues(request: FastifyRequest) {
  const fields = formOf(request);
  const events = listField(fields, 'events');
  return {
    url: textField(fields, 'url'),
    events: events.includes('*') ? ['*'] : events,
    description: textField(fields, 'description'),
  };
}

export const webhookPages = consolePages(
  ['events', 'secrets', 'clock'],
  async (app, { events, secrets, clock }) => {
    function newPage(request: FastifyRequest, reply: FastifyReply, form: EndpointForm = {}, status = 200) {
      return sendPage(request, reply, {
        title: 'New webhook endpoint',
        section: 'webhooks',
        parent: { href: '/console/webhooks', label: 'Webhooks' },
        status,
        body: html`<section class="panel"><form method="post" action="/console/webhooks">
  ${csrfField(reply)}${endpointFields(form)}
  <div class="form-actions"><button class="button button-primary" type="submit">Create endpoint</button>
  <a class="button button-quiet" href="/console/webhooks">Cancel</a></div>
</form></section>`,
      });
    }

    async function detailPage(
      request: FastifyRequest<{ Params: { id: string }; Querystring: Page }>,
      reply: FastifyReply,
      options: { secret?: WebhookEndpointWithSecret; form?: EndpointForm; status?: number } = {},
    ) {
      const tenantId = memberTenantId(request);
      const endpoint = await events.get(tenantId, request.params.id);
      const page = pageOf(request.query);
      const deliveries = await events.listDeliveries(tenantId, endpoint.id, { page, limit: 25 });
      const admin = can(request, 'admin');
      const csrf = csrfField(reply);
      const base = `/console/webhooks/${endpoint.id}`;
      return sendPage(request, reply, {
        title: endpoint.description ?? endpoint.url,
        section: 'webhooks',
        parent: { href: '/console/webhooks', label: 'Webhooks' },
        status: options.status,
        actions: admin
          ? html`${endpoint.enabled && testEventButton(endpoint.id, csrf)}
        ${actionButton({ action: `${base}/${endpoint.enabled ? 'disable' : 'enable'}`, label: endpoint.enabled ? 'Disable' : 'Enable', csrf })}
        ${actionButton({ action: `${base}/rotate`, label: 'Rotate secret', csrf, confirm: 'Rotate the signing secret? The old one keeps signing beside the new one for 24 hours.' })}
        ${actionButton({ action: `${base}/delete`, label: 'Delete', csrf, tone: 'danger', confirm: 'Delete this endpoint? Nothing more is sent to it.' })}`
          : undefined,
        body: html`${
          options.secret &&
          secretOnce({
            id: 'signing-secret',
            label: 'Signing secret',
            value: options.secret.secret,
            note: 'Copy it now: it is shown only once. Verify every delivery’s signature with it.',
          })
        }
${options.secret && html`<p><a class="button button-primary" href="${base}">I have copied it: continue</a></p>`}
<section class="panel" aria-labelledby="endpoint-title">
  <h2 id="endpoint-title">Endpoint ${stateBadge(endpoint)}</h2>
  <dl class="details">
    <dt>URL</dt><dd><code>${endpoint.url}</code></dd>
    <dt>Events</dt><dd>${eventsText(endpoint.events)}</dd>
    <dt>Health</dt><dd>${healthText(endpoint, clock.now())}</dd>
    <dt>Created</dt><dd>${dateTime(endpoint.created_at)}</dd>
  </dl>
  ${
    !endpoint.enabled &&
    endpoint.failing_since &&
    html`<p class="flash flash-error">Deliveries failed for 3 days, so this endpoint was disabled. Fix the receiver, then enable it again: failed deliveries can then be resent below.</p>`
  }
</section>
<section class="panel panel-flush" aria-labelledby="deliveries-title">
  <div class="panel-header"><h2 id="deliveries-title">Deliveries</h2></div>
  ${
    deliveries.data.length === 0
      ? emptyState({
          title: 'No deliveries yet',
          text:
            admin && endpoint.enabled
              ? 'Each event this endpoint subscribes to is delivered here, with its attempts. Send a test event to try the receiver now.'
              : 'Each event this endpoint subscribes to is delivered here, with its attempts.',
        })
      : html`<div class="table-wrap" role="region" aria-label="Deliveries" tabindex="0"><table>
    <thead><tr><th scope="col">Event</th><th scope="col">Status</th><th scope="col" class="numeric">Attempts</th><th scope="col" class="numeric">Last response</th><th scope="col">Last attempt</th><th scope="col">Next attempt</th>${admin && html`<th scope="col"><span class="visually-hidden">Actions</span></th>`}</tr></thead>
    <tbody>${deliveries.data.map(
      (delivery) => html`<tr>
      <td><a href="${base}/deliveries/${delivery.id}"><code>${delivery.event_type}</code></a><br><span class="subtle">${delivery.event_id}</span></td>
      <td>${statusBadge(delivery.status)}</td>
      <td class="numeric">${delivery.attempts}</td>
      <td class="numeric">${delivery.last_response_code ?? html`<span class="subtle">—</span>`}</td>
      <td>${dateTime(delivery.last_attempt_at)}</td>
      <td>${dateTime(delivery.next_attempt_at)}</td>
      ${admin && html`<td class="actions">${endpoint.enabled && resendButton(endpoint.id, delivery.id, csrf, true)}</td>`}
    </tr>`,
    )}</tbody>
  </table></div>
  ${pager(deliveries.pagination, base, { page })}`
  }
</section>
${
  admin &&
  html`<section class="panel" aria-labelledby="edit-title">
  <h2 id="edit-title">Edit endpoint</h2>
  <form method="post" action="${base}">
    ${csrf}${endpointFields(options.form ?? { values: { url: endpoint.url, events: endpoint.events, description: endpoint.description ?? undefined } })}
    <div class="form-actions"><button class="button button-primary" type="submit">Save changes</button></div>
  </form>
</section>`
}`,
      });
    }

    app.get<{ Querystring: Page }>('/webhooks', async (request, reply) => {
      const page = pageOf(request.query);
      const list = await events.list(memberTenantId(request), { page, limit: 25 });
      const admin = can(request, 'admin');
      const newButton = admin
        ? html`<a class="button button-primary" href="/console/webhooks/new">New endpoint</a>`
        : undefined;
      return sendPage(request, reply, {
        title: 'Webhooks',
        section: 'webhooks',
        actions: newButton,
        body:
          list.data.length === 0
            ? html`<section class="panel">${emptyState({ title: 'No webhook endpoints', text: 'Add an endpoint to receive signed events: calls, users, subscriptions, credits.', action: newButton })}</section>`
            : html`<section class="panel panel-flush"><div class="table-wrap" role="region" aria-label="Webhook endpoints" tabindex="0"><table>
  <thead><tr><th scope="col">URL</th><th scope="col">Events</th><th scope="col">Health</th><th scope="col">Created</th></tr></thead>
  <tbody>${list.data.map(
    (endpoint) => html`<tr>
    <td><a href="/console/webhooks/${endpoint.id}">${endpoint.url}</a>${endpoint.description && html`<br><span class="subtle">${endpoint.description}</span>`}</td>
    <td>${eventsText(endpoint.events)}</td>
    <td>${healthText(endpoint, clock.now())}</td>
    <td>${dateTime(endpoint.created_at)}</td>
  </tr>`,
  )}</tbody>
</table></div>${pager(list.pagination, '/console/webhooks', { page })}</section>`,
      });
    });

    app.get('/webhooks/new', { config: { consoleAccess: 'admin' } }, async (request, reply) =>
      newPage(request, reply),
    );

    app.post('/webhooks', async (request, reply) => {
      const values = formValues(request);
      try {
        const input = validated(CreateEndpointBody, {
          url: values.url ?? '',
          events: values.events,
          ...(values.description ? { description: values.description } : {}),
        });
        const created = await events.create(memberTenantId(request), input);
        return showSecretOnce(request, reply, created);
      } catch (error) {
        const errors = fieldIssues(error);
        if (Object.keys(errors).length === 0) throw error;
        return newPage(request, reply, { values, errors }, 422);
      }
    });

    /** POST → 303 → GET: the secret waits for the endpoint's page, which shows it once. */
    function showSecretOnce(
      request: FastifyRequest,
      reply: FastifyReply,
      endpoint: WebhookEndpointWithSecret,
    ) {
      const path = `/console/webhooks/${endpoint.id}`;
      keepForOnce(request, reply, secrets, path, endpoint);
      return reply.code(303).redirect(path);
    }

    app.get<{ Params: { id: string }; Querystring: Page }>('/webhooks/:id', async (request, reply) => {
      const path = `/console/webhooks/${request.params.id}`;
      const secret = takeOnce<WebhookEndpointWithSecret>(request, reply, secrets, path);
      return detailPage(request, reply, { secret: secret?.id === request.params.id ? secret : undefined });
    });

    app.post<{ Params: { id: string }; Querystring: Page }>('/webhooks/:id', async (request, reply) => {
      const values = formValues(request);
      try {
        const input = validated(UpdateEndpointBody, {
          url: values.url ?? '',
          events: values.events,
          description: values.description ?? null,
        });
        await events.update(memberTenantId(request), request.params.id, input);
        return redirectWithFlash(reply, `/console/webhooks/${request.params.id}`, 'Endpoint saved.');
      } catch (error) {
        const errors = fieldIssues(error);
        if (Object.keys(errors).length === 0) throw error;
        return detailPage(request, reply, { form: { values, errors }, status: 422 });
      }
    });

    for (const enabled of [true, false]) {
      app.post<{ Params: { id: string } }>(
        `/webhooks/:id/${enabled ? 'enable' : 'disable'}`,
        async (request, reply) => {
          await events.update(memberTenantId(request), request.params.id, { enabled });
          return redirectWithFlash(
            reply,
            `/console/webhooks/${request.params.id}`,
            enabled
              ? 'Endpoint enabled: new events are delivered again.'
              : 'Endpoint disabled: nothing is sent to it.',
          );
        },
      );
    }

    app.post<{ Params: { id: string }; Querystring: Page }>(
      '/webhooks/:id/rotate',
      async (request, reply) => {
        const rotated = await events.rotateSecret(memberTenantId(request), request.params.id);
        return showSecretOnce(request, reply, rotated);
      },
    );

    app.post<{ Params: { id: string } }>('/webhooks/:id/delete', async (request, reply) => {
      const removed = await events.remove(memberTenantId(request), request.params.id);
      return redirectWithFlash(reply, '/console/webhooks', `Endpoint ${removed.url} deleted.`);
    });

    app.post<{ Params: { id: string; delivery: string } }>(
      '/webhooks/:id/deliveries/:delivery/retry',
      async (request, reply) => {
        await events.retryDelivery(memberTenantId(request), request.params.id, request.params.delivery);
        return redirectWithFlash(reply, `/console/webhooks/${request.params.id}`, 'Delivery queued again.');
      },
    );
  },
);
