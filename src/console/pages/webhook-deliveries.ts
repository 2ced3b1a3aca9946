/**
 * An endpoint's deliveries by hand (src/console/pages/webhooks.ts lists them): a delivery's page
 * with what its last attempt sent and got back, "Send test event" and "Resend". Each is the partner
 * API's call on the same service (GET …/deliveries/{id}, POST …/{id}/test, POST …/resend), and the
 * forms carry a key used as that call's Idempotency-Key, so a double click sends once.
 */
import type { AnswerRecorder } from '../../core/idempotency/answer.js';
import type { DeliveryDetail } from '../../events/schemas.js';
import { deliveryAnswer, type ManualDelivery } from '../../events/service.js';
import { actionButton, dateTime, statusBadge } from '../../web/components.js';
import { formOf, textField } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { newFormKey, oncePerFormKey } from '../../web/once.js';
import { redirectWithFlash } from '../cookies.js';
import { can, csrfField, memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';

type DeliveryParams = { Params: { id: string; delivery: string } };

/** The form that sends a test event to an endpoint (on its page, for admins). */
export function testEventButton(endpointId: string, csrf: Html): Html {
  return actionButton({
    action: `/console/webhooks/${endpointId}/test`,
    label: 'Send test event',
    csrf,
    fields: { form_key: newFormKey() },
  });
}

/** The form that resends a delivery (a new delivery of the same event). */
export function resendButton(endpointId: string, deliveryId: string, csrf: Html, small = false): Html {
  return actionButton({
    action: `/console/webhooks/${endpointId}/deliveries/${deliveryId}/resend`,
    label: 'Resend',
    csrf,
    small,
    fields: { form_key: newFormKey() },
  });
}

function headersTable(label: string, headers: Record<string, string>): Html {
  const names = Object.keys(headers).sort();
  return html`<div class="table-wrap" role="region" aria-label="${label}" tabindex="0"><table class="table-compact">
  <thead><tr><th scope="col">Header</th><th scope="col">Value</th></tr></thead>
  <tbody>${names.map((name) => html`<tr><th scope="row"><code>${name}</code></th><td class="break"><code>${headers[name]}</code></td></tr>`)}</tbody>
</table></div>`;
}

/** A body as text, pretty when it is JSON; at most the 4 KiB the service kept. */
function bodyBlock(label: string, body: string): Html {
  if (body === '') return html`<p class="muted">Empty body.</p>`;
  let shown = body;
  try {
    shown = JSON.stringify(JSON.parse(body), null, 2);
  } catch {
    // Not JSON (or cut at 4 KiB): shown as received.
  }
  return html`<pre class="context" aria-label="${label}" tabindex="0">${shown}</pre>`;
}

const codeTone = (status: number) => (status >= 200 && status < 300 ? 'succeeded' : 'failed');

function deliveryBody(delivery: DeliveryDetail, endpoint: { id: string; url: string }): Html {
  const base = `/console/webhooks/${endpoint.id}`;
  const { request, response } = delivery;
  return html`<section class="panel" aria-labelledby="delivery-summary">
  <h2 id="delivery-summary">Summary</h2>
  <dl class="details">
    <dt>Status</dt><dd>${statusBadge(delivery.status)}</dd>
    <dt>Event</dt><dd><code>${delivery.event_type}</code></dd>
    <dt>Event id (<code>webhook-id</code>)</dt><dd><code>${delivery.event_id}</code></dd>
    <dt>Attempts</dt><dd>${delivery.attempts}</dd>
    <dt>Created</dt><dd>${dateTime(delivery.created_at)}</dd>
    <dt>Last attempt</dt><dd>${dateTime(delivery.last_attempt_at)}</dd>
    <dt>Next attempt</dt><dd>${delivery.next_attempt_at ? dateTime(delivery.next_attempt_at) : html`<span class="subtle">none scheduled</span>`}</dd>
    ${delivery.resent_from && html`<dt>Resends</dt><dd><a href="${base}/deliveries/${delivery.resent_from}">${delivery.resent_from}</a></dd>`}
  </dl>
</section>
<div class="grid grid-2 exchange">
<section class="panel" aria-labelledby="delivery-request">
  <h2 id="delivery-request">Request</h2>
  ${
    request
      ? html`<p><span class="badge badge-neutral">POST</span> <code class="break">${endpoint.url}</code></p>
  <h3>Headers</h3>${headersTable('Request headers', request.headers)}
  <h3>Body <span class="subtle">(first 4 KiB)</span></h3>${bodyBlock('Request body', request.body)}`
      : html`<p class="muted">Not sent yet: the first attempt is queued.</p>`
  }
</section>
<section class="panel" aria-labelledby="delivery-response">
  <h2 id="delivery-response">Response</h2>
  ${
    response
      ? html`<p>${statusBadge(codeTone(response.status))} <strong>HTTP ${response.status}</strong></p>
  <h3>Headers</h3>${headersTable('Response headers', response.headers)}
  <h3>Body <span class="subtle">(first 4 KiB)</span></h3>${bodyBlock('Response body', response.body)}`
      : delivery.error
        ? html`<p class="flash flash-error">No answer: ${delivery.error}</p>`
        : html`<p class="muted">No answer yet.</p>`
  }
</section>
</div>`;
}

export const webhookDeliveryPages = consolePages(
  ['events', 'idempotency', 'config'],
  async (app, { events, idempotency, config }) => {
    const answer = deliveryAnswer(config.publicBaseUrl);

    app.get<DeliveryParams>('/webhooks/:id/deliveries/:delivery', async (request, reply) => {
      const tenantId = memberTenantId(request);
      const endpoint = await events.get(tenantId, request.params.id);
      const delivery = await events.getDelivery(tenantId, endpoint.id, request.params.delivery);
      const admin = can(request, 'admin');
      return sendPage(request, reply, {
        title: `Delivery of ${delivery.event_type}`,
        section: 'webhooks',
        parent: { href: `/console/webhooks/${endpoint.id}`, label: endpoint.description ?? endpoint.url },
        actions:
          admin && endpoint.enabled ? resendButton(endpoint.id, delivery.id, csrfField(reply)) : undefined,
        body: deliveryBody(delivery, endpoint),
      });
    });

    /**
     * Runs a manual delivery once per form key, as the API runs it once per Idempotency-Key (the
     * same answer is stored); returns the delivery's id, also when a repeated form replays it.
     */
    function once(
      tenantId: string,
      formKey: string | undefined,
      path: string,
      run: (recorder: AnswerRecorder<ManualDelivery> | undefined) => Promise<ManualDelivery>,
    ): Promise<string> {
      return oncePerFormKey(
        idempotency,
        { tenantId, formKey, path, fields: {} },
        async (claim) => (await run(claim && { claim, answer })).id,
        (stored) => (stored as { data: { id: string } }).data.id,
      );
    }

    app.post<{ Params: { id: string } }>('/webhooks/:id/test', async (request, reply) => {
      const tenantId = memberTenantId(request);
      const path = `/console/webhooks/${request.params.id}/test`;
      const deliveryId = await once(tenantId, textField(formOf(request), 'form_key'), path, (recorder) =>
        events.sendTest(tenantId, request.params.id, recorder),
      );
      return redirectWithFlash(
        reply,
        `/console/webhooks/${request.params.id}/deliveries/${deliveryId}`,
        'Test event queued: it is sent now, signed like every event.',
      );
    });

    app.post<DeliveryParams>('/webhooks/:id/deliveries/:delivery/resend', async (request, reply) => {
      const tenantId = memberTenantId(request);
      const { id, delivery } = request.params;
      const path = `/console/webhooks/${id}/deliveries/${delivery}/resend`;
      const resent = await once(tenantId, textField(formOf(request), 'form_key'), path, (recorder) =>
        events.resendDelivery(tenantId, id, delivery, recorder),
      );
      return redirectWithFlash(
        reply,
        `/console/webhooks/${id}/deliveries/${resent}`,
        'Delivery resent: a new delivery of the same event is on its way.',
      );
    });
  },
);
