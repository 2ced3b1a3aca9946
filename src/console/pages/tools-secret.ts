/**
 * The tools secret in the console (docs/tools.md): whether the agency has one and since when,
 * until when the previous one still signs, and (admins) create or rotate it — the new secret
 * shown once, as POST /api/v1/tools-secret/rotate answers it. The form carries the rotation it
 * was rendered after, so a form sent twice rotates once (the secret its first answer showed is
 * never dropped unseen).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { ToolsSecret } from '../../tools/schemas.js';
import { badge, dateTime, secretOnce } from '../../web/components.js';
import { formOf, textField } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { keepForOnce, redirectWithFlash, takeOnce } from '../cookies.js';
import { can, csrfField, memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';

const PATH = '/console/tools-secret';
/** The rotation a form was rendered after, when there was none yet. */
const NONE = 'none';

const SIGNED_REQUEST = html`<pre class="context"><code>POST {tool url}
webhook-id: tc_…
webhook-timestamp: 1767225600
webhook-signature: v1,…

{ "call_id": "call_…", "agent_id": "agt_…", "tool": "check_order", "arguments": { … } }</code></pre>`;

export const toolsSecretPages = consolePages(['tools', 'secrets'], async (app, { tools, secrets }) => {
  async function page(request: FastifyRequest, reply: FastifyReply, shown?: ToolsSecret) {
    const status = await tools.secretStatus(memberTenantId(request));
    const admin = can(request, 'admin');
    const rotateForm: Html | undefined = admin
      ? html`<form method="post" action="${PATH}/rotate"${status.exists ? html` data-confirm="Rotate the tools secret? The current one keeps signing beside the new one for 24 hours; rotating again within those hours ends the older one at once."` : ''}>
  ${csrfField(reply)}<input type="hidden" name="rotated_at" value="${status.rotated_at ?? NONE}">
  <button class="button${status.exists ? '' : ' button-primary'}" type="submit">${status.exists ? 'Rotate secret' : 'Create secret'}</button>
</form>`
      : undefined;
    return sendPage(request, reply, {
      title: 'Tools secret',
      section: 'tools-secret',
      actions: rotateForm,
      body: html`${
        shown &&
        secretOnce({
          id: 'tools-secret',
          label: 'New tools secret',
          value: shown.secret,
          note: shown.previous_valid_until
            ? 'Copy it now: it is shown only once. Requests are signed with it and, until the time below, with the previous secret too: switch your endpoints over before then.'
            : 'Copy it now: it is shown only once. Every request to your agents’ tools is signed with it from now on.',
        })
      }
${shown && html`<p><a class="button button-primary" href="${PATH}">I have copied it: continue</a></p>`}
<section class="panel" aria-labelledby="state-title">
  <h2 id="state-title">Signing ${status.exists ? badge('Active', 'success') : badge('Not created', 'warning')}</h2>
  <dl class="details">
    <dt>Secret</dt><dd>${status.exists ? html`<span class="subtle">Hidden: shown only when created or rotated</span>` : html`<span class="subtle">None yet: tool requests are not sent until one exists</span>`}</dd>
    <dt>Last rotated</dt><dd>${dateTime(status.rotated_at)}</dd>
    <dt>Previous secret valid until</dt><dd>${status.previous_valid_until ? dateTime(status.previous_valid_until) : html`<span class="subtle">No previous secret signs now</span>`}</dd>
  </dl>
  ${!admin && html`<p class="muted">Only an admin or owner can create or rotate the secret.</p>`}
</section>
<section class="panel" aria-labelledby="how-title">
  <h2 id="how-title">How your endpoints check it</h2>
  <p>Agents call the tools you configure on them during calls, under every voice engine alike. Each request is signed as a Standard Webhook with this secret: verify <code>webhook-signature</code> with any Standard Webhooks library (or the SDK’s <code>verifyToolRequest</code>), then answer JSON of at most 16 KB within the tool’s timeout. After a rotation, each request carries two signatures for 24 hours, one per secret.</p>
  ${SIGNED_REQUEST}
</section>`,
    });
  }

  app.get('/tools-secret', async (request, reply) => {
    const shown = takeOnce<ToolsSecret>(request, reply, secrets, PATH);
    return page(request, reply, shown);
  });

  app.post('/tools-secret/rotate', async (request, reply) => {
    const seen = textField(formOf(request), 'rotated_at');
    const tenantId = memberTenantId(request);
    const rotated = await tools.rotateSecretIf(tenantId, seen === NONE || seen === undefined ? null : seen);
    if (!rotated) {
      return redirectWithFlash(
        reply,
        PATH,
        'The secret was rotated since this page was shown (a form sent twice, or another member): nothing changed. Rotate again only if you need a new one.',
        'error',
      );
    }
    // POST → 303 → GET: the secret waits in a sealed cookie for the page, which shows it once.
    keepForOnce(request, reply, secrets, PATH, rotated);
    return reply.code(303).redirect(PATH);
  });
});
