/**
 * Staff (owners only): the operator's people, their roles, invitations. An invitation is a
 * single-use link (72 h) the owner passes on; the invitee chooses a password and sets up TOTP on
 * the public invitation page, and signs in afterwards.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../core/errors.js';
import {
  AcceptStaffInvitationBody,
  InviteStaffBody,
  STAFF_ROLES,
  type Staff,
  type StaffInvitation,
  StaffRole,
} from '../../../staff/schemas.js';
import type { StaffService } from '../../../staff/service.js';
import { badge, dateTime, field, inputField, secretOnce, select } from '../../../web/components.js';
import { fieldIssues, formOf, textField, validated } from '../../../web/forms.js';
import { type Html, html } from '../../../web/html.js';
import { keepForOnce, redirectWithFlash, takeOnce } from '../cookies.js';
import { cardPage, csrfField, errorPage, sendPage } from '../layout.js';
import { operatorPages } from '../plugin.js';

const ROLE_CHOICES = STAFF_ROLES.map((role) => ({
  value: role,
  label: role[0].toUpperCase() + role.slice(1),
}));
const ROLE_HINT = 'Owner: everything, staff included. Admin: everything but staff. Support: read only.';
const OWNER = { config: { operatorAccess: 'owner' as const } };

function staffTable(request: FastifyRequest, reply: FastifyReply, staff: Staff[]): Html {
  const me = request.operatorSession?.staffId;
  return html`<section class="panel panel-flush" aria-labelledby="staff-title">
  <div class="panel-header"><h2 id="staff-title">Staff</h2><span class="subtle">${staff.length} ${staff.length === 1 ? 'person' : 'people'}</span></div>
  <div class="table-wrap" role="region" aria-label="Staff" tabindex="0"><table>
    <thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Joined</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>
    ${staff.map(
      (person) => html`<tr>
      <td>${person.name ?? html`<span class="subtle">—</span>`}${person.id === me && html` <span class="subtle">(you)</span>`}</td>
      <td>${person.email}</td>
      <td>${badge(person.role, person.role === 'owner' ? 'accent' : 'neutral')}</td>
      <td>${dateTime(person.created_at)}</td>
      <td class="actions actions-stack">
        <form method="post" action="/operator/staff/${person.id}/role" class="inline-form">
          ${csrfField(reply)}
          <label class="visually-hidden" for="role-${person.id}">Role of ${person.email}</label>
          ${select({ id: `role-${person.id}`, name: 'role', choices: ROLE_CHOICES, selected: person.role })}
          <button class="button button-small" type="submit">Change role</button>
        </form>
        <form method="post" action="/operator/staff/${person.id}/remove" data-confirm="Remove ${person.email}? They are signed out at once.">
          ${csrfField(reply)}<button class="button button-small button-danger" type="submit">Remove</button>
        </form>
      </td>
    </tr>`,
    )}
    </tbody>
  </table></div>
</section>`;
}

function invitationsPanel(reply: FastifyReply, invitations: StaffInvitation[]): Html {
  if (invitations.length === 0) return html``;
  return html`<section class="panel panel-flush" aria-labelledby="invitations-title">
  <div class="panel-header"><h2 id="invitations-title">Open invitations</h2></div>
  <div class="table-wrap" role="region" aria-label="Invitations" tabindex="0"><table>
    <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Expires</th><th scope="col"><span class="visually-hidden">Actions</span></th></tr></thead>
    <tbody>${invitations.map(
      (
        invitation,
      ) => html`<tr><td>${invitation.email}</td><td>${badge(invitation.role)}</td><td>${dateTime(invitation.expires_at)}</td>
      <td class="actions"><form method="post" action="/operator/staff/invitations/${invitation.id}/revoke">${csrfField(reply)}<button class="button button-small button-danger" type="submit">Revoke</button></form></td></tr>`,
    )}</tbody>
  </table></div>
</section>`;
}

async function staffPage(
  request: FastifyRequest,
  reply: FastifyReply,
  staff: StaffService,
  form: {
    values?: Record<string, string | undefined>;
    errors?: Record<string, string>;
    link?: string;
    status?: number;
  } = {},
) {
  const [people, invitations] = await Promise.all([staff.list(), staff.listInvitations()]);
  return sendPage(request, reply, {
    title: 'Staff',
    section: 'staff',
    status: form.status,
    body: html`${form.link && secretOnce({ id: 'invitation-link', label: 'Invitation link', value: form.link, note: 'Send this link to the new staff member; it works once, for 72 hours, and is not shown again.' })}
    ${staffTable(request, reply, people)}
    ${invitationsPanel(reply, invitations)}
    <section class="panel" aria-labelledby="invite-title">
      <h2 id="invite-title">Invite a staff member</h2>
      <form method="post" action="/operator/staff/invitations">
        ${csrfField(reply)}
        <div class="form-grid">
          ${inputField({ id: 'email', label: 'Email', type: 'email', required: true, value: form.values?.email, error: form.errors?.email })}
          ${field({ id: 'role', label: 'Role', control: select({ id: 'role', choices: ROLE_CHOICES, selected: form.values?.role ?? 'support' }), hint: ROLE_HINT, error: form.errors?.role })}
        </div>
        <div class="form-actions"><button class="button button-primary" type="submit">Create invitation link</button></div>
      </form>
    </section>`,
  });
}

function acceptForm(
  reply: FastifyReply,
  token: string,
  invitation: StaffInvitation,
  setup: { secret: string; uri: string; sealed: string },
  options: { errors?: Record<string, string>; name?: string; status?: number } = {},
) {
  const errors = options.errors ?? {};
  return cardPage(
    reply,
    options.status ?? 200,
    'Join the operator console',
    html`<p>You are invited as <strong>${invitation.role}</strong> (${invitation.email}).</p>
    <form method="post" action="/operator/invitations/${token}" class="stack">
      ${csrfField(reply)}
      <input type="hidden" name="setup" value="${setup.sealed}">
      ${inputField({ id: 'name', label: 'Your name', value: options.name, error: errors.name })}
      ${inputField({ id: 'password', label: 'Password', type: 'password', required: true, error: errors.password, hint: 'At least 8 characters.', attributes: html`autocomplete="new-password"` })}
      <div class="field">
        <p class="label-text">Two-factor authentication</p>
        <p class="hint">Add this account to your authenticator app with the link or the secret, then enter the code it shows.</p>
        <p><a href="${setup.uri}">Open in an authenticator app</a></p>
        <p>Secret: <code id="totp-secret">${setup.secret}</code></p>
      </div>
      ${inputField({ id: 'code', label: 'Authentication code', required: true, error: errors.code, attributes: html`inputmode="numeric" autocomplete="one-time-code"` })}
      <button class="button button-primary button-block" type="submit">Join</button>
    </form>`,
  );
}

export const operatorStaffPages = operatorPages(
  ['staff', 'rateLimits', 'secrets'],
  async (app, { staff, rateLimits, secrets }) => {
    app.get('/staff', OWNER, async (request, reply) => {
      const kept = takeOnce<{ link: string }>(request, reply, secrets, '/operator/staff');
      return staffPage(request, reply, staff, { link: kept?.link });
    });

    app.post('/staff/invitations', OWNER, async (request, reply) => {
      const fields = formOf(request);
      const values = { email: textField(fields, 'email'), role: textField(fields, 'role') };
      try {
        const body = validated(InviteStaffBody, values);
        const session = request.operatorSession;
        if (!session) throw new Error('an owner page without a session');
        const { token } = await staff.invite(body, session.staffId);
        const link = `${request.protocol}://${request.host}/operator/invitations/${token}`;
        // Shown once on the page the redirect reaches: never in a POST answer a refresh would resend.
        keepForOnce(request, reply, secrets, '/operator/staff', { link });
        return redirectWithFlash(reply, '/operator/staff', `Invitation created for ${body.email}.`);
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        return staffPage(request, reply, staff, { values, errors: fieldIssues(error), status: error.status });
      }
    });

    app.post<{ Params: { id: string } }>('/staff/invitations/:id/revoke', OWNER, async (request, reply) => {
      await staff.revokeInvitation(request.params.id);
      return redirectWithFlash(reply, '/operator/staff', 'The invitation is revoked.');
    });

    app.post<{ Params: { id: string } }>('/staff/:id/role', OWNER, async (request, reply) => {
      const role = validated(StaffRole, textField(formOf(request), 'role'));
      const changed = await staff.changeRole(request.params.id, role);
      return redirectWithFlash(reply, '/operator/staff', `${changed.email} is now ${changed.role}.`);
    });

    app.post<{ Params: { id: string } }>('/staff/:id/remove', OWNER, async (request, reply) => {
      await staff.remove(request.params.id);
      return redirectWithFlash(reply, '/operator/staff', 'The staff member is removed and signed out.');
    });

    const PUBLIC = { config: { operatorAccess: 'public' as const } };
    const gone = (reply: FastifyReply) =>
      errorPage(reply, 404, 'This invitation link is not valid: it was used, revoked, or it expired.');

    app.get<{ Params: { token: string } }>('/invitations/:token', PUBLIC, async (request, reply) => {
      const invitation = await staff.invitation(request.params.token);
      if (!invitation) return gone(reply);
      return acceptForm(reply, request.params.token, invitation, await staff.enrolmentSetup(invitation));
    });

    app.post<{ Params: { token: string } }>('/invitations/:token', PUBLIC, async (request, reply) => {
      // A guessed link is a failed sign-in of the address: the sign-in bucket of the IP counts it.
      const { decision, charges } = await rateLimits.signInAttempt(request.ip, undefined, undefined);
      if (!decision.allowed) {
        request.rateLimitRefused = 'operator_invitation';
        reply.header('retry-after', Math.max(1, Math.ceil((decision.retryAfterMs ?? 60_000) / 1000)));
        return errorPage(
          reply,
          429,
          'Too many attempts from your address. Wait a few minutes and try again.',
        );
      }
      const { token } = request.params;
      const invitation = await staff.invitation(token);
      if (!invitation) return gone(reply);
      const fields = formOf(request);
      const sealed = textField(fields, 'setup') ?? '';
      const name = textField(fields, 'name');
      try {
        const body = validated(AcceptStaffInvitationBody, {
          name,
          password: typeof fields.password === 'string' ? fields.password : '',
        });
        await staff.acceptInvitation(token, body, sealed, textField(fields, 'code') ?? '');
      } catch (error) {
        if (!(error instanceof ApiError) || error.status >= 500) throw error;
        const setup = await staff.enrolmentSetup(invitation, sealed);
        return acceptForm(reply, token, invitation, setup, {
          errors: fieldIssues(error),
          name,
          status: error.status,
        });
      }
      await rateLimits.refund(charges);
      return redirectWithFlash(
        reply,
        '/operator/sign-in',
        'Welcome aboard: sign in with your email, password and a code.',
      );
    });
  },
);
