/**
 * Email settings in the console: the tenant's SMTP server and sender (the same tenant service path
 * as the operator's PATCH; the password is never shown back, only whether one is stored), a test
 * email to the signed-in member through the outbox, and the outbox's recent emails. Only owners
 * change the settings (member invitations travel through this SMTP server: whoever points it
 * elsewhere could read an owner's invitation link); admins send test emails; everyone reads.
 */

import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { EmailSettingsInput } from '../../tenants/schemas.js';
import type { ConsoleEmailSettings } from '../../tenants/service.js';
import { badge, dateTime, emptyState, inputField, pager, statusBadge } from '../../web/components.js';
import { fieldIssues, formOf, textField, validated } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { redirectWithFlash } from '../cookies.js';
import { can, csrfField, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';

/** The password typed beside the URL (any text PostgreSQL can store). */
const SmtpPasswordField = Type.Object({ smtp_password: Type.String({ maxLength: 1000 }) });

const KIND_LABELS: Record<string, string> = {
  welcome: 'Welcome',
  password_reset: 'Password reset',
  member_invitation: 'Member invitation',
  test: 'Test',
  user_invitation: 'User invitation',
};

interface SettingsForm {
  values?: { smtp_url?: string; from?: string };
  errors?: Record<string, string>;
}

function settingsPanel(
  request: FastifyRequest,
  reply: FastifyReply,
  settings: ConsoleEmailSettings | null,
  form: SettingsForm,
): Html {
  if (!can(request, 'owner')) {
    return html`<section class="panel" aria-labelledby="smtp-title">
  <h2 id="smtp-title">SMTP server</h2>
  ${
    settings
      ? html`<dl class="details"><dt>SMTP URL</dt><dd><code>${settings.smtp_url}</code></dd>
      <dt>Password</dt><dd>${settings.password_set ? badge('Set', 'success') : badge('None')}</dd>
      <dt>Sender</dt><dd>${settings.from}</dd></dl>`
      : html`<p class="muted">No email settings yet: users get no welcome or password-reset emails. An owner can add them.</p>`
  }
  <p class="subtle">Only owners change these settings.</p>
</section>`;
  }
  const values = form.values ?? { smtp_url: settings?.smtp_url, from: settings?.from };
  return html`<section class="panel" aria-labelledby="smtp-title">
  <h2 id="smtp-title">SMTP server ${settings ? badge('Configured', 'success') : badge('Not set', 'warning')}</h2>
  <form method="post" action="/console/emails/settings">
    ${csrfField(reply)}
    <div class="form-grid">
      ${inputField({ id: 'smtp_url', label: 'SMTP URL', required: true, value: values.smtp_url, error: form.errors?.smtp_url, placeholder: 'smtps://mailer@smtp.example.com:465', hint: 'smtp:// or smtps://, with the user name; the password goes in its own field.', wide: true })}
      ${inputField({ id: 'smtp_password', label: 'SMTP password', type: 'password', error: form.errors?.smtp_password, hint: settings?.password_set ? 'A password is set. Leave blank to keep it (same server and user only).' : 'Leave blank when the server needs none.', attributes: html`autocomplete="new-password"` })}
      ${inputField({ id: 'from', label: 'Sender', required: true, value: values.from, error: form.errors?.from, placeholder: 'Northwind <no-reply@northwind.example>', hint: 'An address, optionally as "Name <address>".' })}
    </div>
    <div class="form-actions"><button class="button button-primary" type="submit">Save settings</button></div>
  </form>
</section>`;
}

export const emailPages = consolePages(['emails', 'tenants'], async (app, { emails, tenants }) => {
  async function emailsPage(
    request: FastifyRequest<{ Querystring: { page?: string } }>,
    reply: FastifyReply,
    form: SettingsForm = {},
    status = 200,
  ) {
    const session = request.consoleSession;
    if (!session) throw new Error('a signed-in route');
    const page = Math.max(1, Number.parseInt(request.query.page ?? '1', 10) || 1);
    const [settings, outbox] = await Promise.all([
      tenants.emailSettings(session.tenantId),
      emails.list(session.tenantId, { page, limit: 20 }),
    ]);
    const testButton =
      settings && can(request, 'admin')
        ? html`<form method="post" action="/console/emails/test">${csrfField(reply)}<button class="button" type="submit">Send test email</button></form>`
        : '';
    return sendPage(request, reply, {
      title: 'Email',
      section: 'emails',
      status,
      actions: testButton || undefined,
      body: html`${settingsPanel(request, reply, settings, form)}
<section class="panel panel-flush" aria-labelledby="outbox-title">
  <div class="panel-header"><h2 id="outbox-title">Recent emails</h2><span class="subtle">Sent through the outbox, retried for about two hours</span></div>
  ${
    outbox.data.length === 0
      ? emptyState({
          title: 'No emails yet',
          text: 'Welcome, password-reset, invitation and test emails appear here with their delivery state.',
        })
      : html`<div class="table-wrap" role="region" aria-label="Emails sent" tabindex="0"><table>
    <thead><tr><th scope="col">Kind</th><th scope="col">To</th><th scope="col">Subject</th><th scope="col">Status</th><th scope="col" class="numeric">Attempts</th><th scope="col">Created</th><th scope="col">Last error</th></tr></thead>
    <tbody>${outbox.data.map(
      (email) => html`<tr>
      <td>${KIND_LABELS[email.kind] ?? email.kind}</td><td>${email.to}</td><td>${email.subject}</td>
      <td>${email.status === 'sent' ? badge('sent', 'success') : statusBadge(email.status)}</td>
      <td class="numeric">${email.attempts}</td><td>${dateTime(email.created_at)}</td>
      <td>${email.last_error ? html`<span class="subtle">${email.last_error}</span>` : html`<span class="subtle">—</span>`}</td>
    </tr>`,
    )}</tbody>
  </table></div>
  ${pager(outbox.pagination, '/console/emails', { page })}`
  }
</section>`,
    });
  }

  app.get<{ Querystring: { page?: string } }>('/emails', async (request, reply) =>
    emailsPage(request, reply),
  );

  app.post<{ Querystring: { page?: string } }>(
    '/emails/settings',
    { config: { consoleAccess: 'owner' } },
    async (request, reply) => {
      const session = request.consoleSession;
      if (!session) throw new Error('a signed-in route');
      const fields = formOf(request);
      const values = { smtp_url: textField(fields, 'smtp_url') ?? '', from: textField(fields, 'from') ?? '' };
      const password =
        typeof fields.smtp_password === 'string' && fields.smtp_password !== ''
          ? fields.smtp_password
          : undefined;
      try {
        validated(EmailSettingsInput, values);
        if (password !== undefined) validated(SmtpPasswordField, { smtp_password: password });
        await tenants.setEmailSettings(session.tenantId, { ...values, password });
        return redirectWithFlash(reply, '/console/emails', 'Email settings saved.');
      } catch (error) {
        if (Object.keys(fieldIssues(error)).length === 0) throw error;
        return emailsPage(request, reply, { values, errors: settingsIssues(error) }, 422);
      }
    },
  );

  app.post('/emails/test', { config: { audit: false } }, async (request, reply) => {
    const session = request.consoleSession;
    if (!session) throw new Error('a signed-in route');
    const email = await emails.sendTest(session.tenantId, { email: session.email, name: session.name });
    return redirectWithFlash(
      reply,
      '/console/emails',
      `Test email queued to ${email.to}: its state is in the list below.`,
    );
  });
});

/** The tenant service names its fields `email.smtp_url`, `email.from` (as the operator API does). */
function settingsIssues(error: unknown): Record<string, string> {
  const details = (error as { details?: unknown }).details;
  const errors: Record<string, string> = {};
  if (!Array.isArray(details)) return errors;
  for (const issue of details as { field?: string; issue: string }[]) {
    if (issue.field) errors[issue.field.replace(/^email\./, '')] ??= issue.issue;
  }
  return errors;
}
