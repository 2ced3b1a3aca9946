/**
 * Members in the console (docs/console.md): everyone sees the team; only owners invite, change
 * roles, remove members and revoke invitations. The invitation link is a public page where the
 * invitee chooses a name and password and is signed in.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import {
  AcceptInvitationBody,
  ChangeRoleBody,
  type Invitation,
  InviteMemberBody,
  type Member,
  ROLES,
} from '../../members/schemas.js';
import { badge, dateTime, emptyState, field, inputField, secretOnce, select } from '../../web/components.js';
import { fieldIssues, formOf, textField, validated } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { cookieOptions, redirectWithFlash, SESSION_COOKIE } from '../cookies.js';
import { can, cardPage, csrfField, errorPage, memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';

const ROLE_CHOICES = ROLES.map((role) => ({ value: role, label: role[0].toUpperCase() + role.slice(1) }));
const ROLE_HINT =
  'Owner: everything, including members and email settings. Admin: everything else. Viewer: read only.';

interface InviteForm {
  values?: { email?: string; role?: string };
  errors?: Record<string, string>;
  link?: string;
}

function inviteForm(reply: FastifyReply, form: InviteForm): Html {
  return html`<section class="panel" aria-labelledby="invite-title">
  <h2 id="invite-title">Invite a member</h2>
  <form method="post" action="/console/members/invitations">
    ${csrfField(reply)}
    <div class="form-grid">
      ${inputField({ id: 'email', label: 'Email', type: 'email', required: true, value: form.values?.email, error: form.errors?.email, hint: 'They get a single-use link valid for 72 hours.' })}
      ${field({ id: 'role', label: 'Role', control: select({ id: 'role', choices: ROLE_CHOICES, selected: form.values?.role ?? 'viewer', error: form.errors?.role }), hint: ROLE_HINT, error: form.errors?.role })}
    </div>
    <div class="form-actions"><button class="button button-primary" type="submit">Send invitation</button></div>
  </form>
</section>`;
}

function membersTable(request: FastifyRequest, reply: FastifyReply, members: Member[]): Html {
  const owner = can(request, 'owner');
  const me = request.consoleSession?.memberId;
  return html`<section class="panel panel-flush" aria-labelledby="members-title">
  <div class="panel-header"><h2 id="members-title">Team</h2><span class="subtle">${members.length} ${members.length === 1 ? 'member' : 'members'}</span></div>
  <div class="table-wrap" role="region" aria-label="Team" tabindex="0"><table>
    <thead><tr><th scope="col">Name</th><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Two-factor</th><th scope="col">Joined</th>${owner && html`<th scope="col"><span class="visually-hidden">Actions</span></th>`}</tr></thead>
    <tbody>
    ${members.map(
      (member) => html`<tr>
      <td>${member.name ?? html`<span class="subtle">—</span>`}${member.id === me && html` <span class="subtle">(you)</span>`}</td>
      <td>${member.email}</td>
      <td>${badge(member.role, member.role === 'owner' ? 'accent' : 'neutral')}</td>
      <td>${member.totp_enabled ? badge('On', 'success') : badge('Off')}</td>
      <td>${dateTime(member.created_at)}</td>
      ${
        owner &&
        html`<td class="actions actions-stack">
        <form method="post" action="/console/members/${member.id}/role" class="inline-form">
          ${csrfField(reply)}
          <label class="visually-hidden" for="role-${member.id}">Role of ${member.email}</label>
          ${select({ id: `role-${member.id}`, name: 'role', choices: ROLE_CHOICES, selected: member.role })}
          <button class="button button-small" type="submit">Change role</button>
        </form>
        <form method="post" action="/console/members/${member.id}/remove" data-confirm="Remove ${member.email}? They are signed out at once.">
          ${csrfField(reply)}<button class="button button-small button-danger" type="submit">Remove</button>
        </form>
      </td>`
      }
    </tr>`,
    )}
    </tbody>
  </table></div>
</section>`;
}

function invitationsTable(request: FastifyRequest, reply: FastifyReply, invitations: Invitation[]): Html {
  const owner = can(request, 'owner');
  return html`<section class="panel panel-flush" aria-labelledby="invitations-title">
  <div class="panel-header"><h2 id="invitations-title">Pending invitations</h2></div>
  ${
    invitations.length === 0
      ? emptyState({
          title: 'No pending invitations',
          text: owner
            ? 'Invite a colleague above: they choose their own password.'
            : 'Owners invite new members.',
        })
      : html`<div class="table-wrap" role="region" aria-label="Pending invitations" tabindex="0"><table>
    <thead><tr><th scope="col">Email</th><th scope="col">Role</th><th scope="col">Sent</th><th scope="col">Expires</th>${owner && html`<th scope="col"><span class="visually-hidden">Actions</span></th>`}</tr></thead>
    <tbody>${invitations.map(
      (invitation) => html`<tr>
      <td>${invitation.email}</td><td>${badge(invitation.role)}</td><td>${dateTime(invitation.created_at)}</td><td>${dateTime(invitation.expires_at)}</td>
      ${
        owner &&
        html`<td class="actions"><form method="post" action="/console/members/invitations/${invitation.id}/revoke" data-confirm="Revoke the invitation of ${invitation.email}?">
        ${csrfField(reply)}<button class="button button-small button-danger" type="submit">Revoke</button></form></td>`
      }
    </tr>`,
    )}</tbody>
  </table></div>`
  }
</section>`;
}

export const memberPages = consolePages(
  ['members', 'rateLimits', 'clock'],
  async (app, { members, rateLimits, clock }) => {
    async function membersPage(
      request: FastifyRequest,
      reply: FastifyReply,
      form: InviteForm = {},
      status = 200,
    ) {
      const tenantId = memberTenantId(request);
      const [list, invitations] = await Promise.all([
        members.list(tenantId),
        members.listInvitations(tenantId),
      ]);
      return sendPage(request, reply, {
        title: 'Members',
        section: 'members',
        status,
        body: html`${
          form.link &&
          secretOnce({
            id: 'invitation-link',
            label: 'Invitation link',
            value: form.link,
            note: 'No email could be sent (no email settings): give this single-use link to the invitee yourself. It is shown only now and works for 72 hours.',
          })
        }
      ${can(request, 'owner') ? inviteForm(reply, form) : html`<p class="muted">Only owners invite members, change roles and remove members.</p>`}
      ${membersTable(request, reply, list)}
      ${invitationsTable(request, reply, invitations)}`,
      });
    }

    app.get('/members', async (request, reply) => membersPage(request, reply));

    app.post('/members/invitations', { config: { consoleAccess: 'owner' } }, async (request, reply) => {
      const session = request.consoleSession;
      if (!session) throw new Error('a signed-in route');
      const fields = formOf(request);
      const values = { email: textField(fields, 'email'), role: textField(fields, 'role') };
      try {
        const input = validated(InviteMemberBody, values);
        const result = await members.invite(
          session.tenantId,
          { memberId: session.memberId, label: session.name ?? session.email },
          input,
        );
        if (!result.emailed) return membersPage(request, reply, { link: result.url });
        return redirectWithFlash(reply, '/console/members', `Invitation sent to ${input.email}.`);
      } catch (error) {
        const errors = fieldIssues(error);
        if (Object.keys(errors).length === 0) throw error;
        return membersPage(
          request,
          reply,
          { values, errors },
          error instanceof ApiError ? error.status : 422,
        );
      }
    });

    app.post<{ Params: { id: string } }>(
      '/members/invitations/:id/revoke',
      { config: { consoleAccess: 'owner' } },
      async (request, reply) => {
        const invitation = await members.revokeInvitation(memberTenantId(request), request.params.id);
        return redirectWithFlash(
          reply,
          '/console/members',
          `The invitation of ${invitation.email} is revoked.`,
        );
      },
    );

    app.post<{ Params: { id: string } }>(
      '/members/:id/role',
      { config: { consoleAccess: 'owner' } },
      async (request, reply) => {
        const { role } = validated(ChangeRoleBody, { role: textField(formOf(request), 'role') });
        const member = await members.changeRole(memberTenantId(request), request.params.id, role);
        return redirectWithFlash(reply, '/console/members', `${member.email} is now ${member.role}.`);
      },
    );

    app.post<{ Params: { id: string } }>(
      '/members/:id/remove',
      { config: { consoleAccess: 'owner' } },
      async (request, reply) => {
        const tenantId = memberTenantId(request);
        const member = await members.get(tenantId, request.params.id);
        await members.remove(tenantId, member.id);
        return redirectWithFlash(reply, '/console/members', `${member.email} was removed and signed out.`);
      },
    );

    // The invitation link: public, answered only while the invitation can be accepted.
    app.get<{ Params: { token: string } }>(
      '/invitations/:token',
      { config: { consoleAccess: 'public' } },
      async (request, reply) => {
        const invitation = await members.openInvitation(request.params.token);
        return acceptForm(reply, request.params.token, invitation, {});
      },
    );

    app.post<{ Params: { token: string } }>(
      '/invitations/:token',
      { config: { consoleAccess: 'public' } },
      async (request, reply) => {
        // A guessed link is a failed sign-in of the address: the sign-in bucket of the IP counts it.
        const { decision, charges } = await rateLimits.signInAttempt(request.ip, undefined, undefined);
        if (!decision.allowed) {
          request.rateLimitRefused = 'console_invitation';
          reply.header('retry-after', Math.max(1, Math.ceil((decision.retryAfterMs ?? 60_000) / 1000)));
          return errorPage(
            reply,
            429,
            'Too many attempts from your address. Wait a few minutes and try again.',
          );
        }
        const fields = formOf(request);
        const values = {
          name: textField(fields, 'name'),
          password: typeof fields.password === 'string' ? fields.password : '',
        };
        try {
          const input = validated(AcceptInvitationBody, values);
          const started = await members.acceptInvitation(request.params.token, input);
          await rateLimits.refund(charges);
          reply.setCookie(
            SESSION_COOKIE,
            started.token,
            cookieOptions(Math.floor((started.expiresAt.getTime() - clock.now().getTime()) / 1000)),
          );
          return redirectWithFlash(reply, '/console', 'Welcome! You are signed in to the console.');
        } catch (error) {
          if (!(error instanceof ApiError) || error.code !== 'validation_failed') throw error;
          const invitation = await members.openInvitation(request.params.token);
          const errors = fieldIssues(error);
          return acceptForm(reply, request.params.token, invitation, { name: values.name, errors }, 422);
        }
      },
    );
  },
);

function acceptForm(
  reply: FastifyReply,
  token: string,
  invitation: Invitation,
  form: { name?: string; errors?: Record<string, string> },
  status = 200,
) {
  return cardPage(
    reply,
    status,
    'Join the console',
    html`<p class="muted">You were invited as <strong>${invitation.role}</strong> with ${invitation.email}. Choose your name and password to finish.</p>
    <form method="post" action="/console/invitations/${token}" class="stack">
      ${csrfField(reply)}
      ${inputField({ id: 'name', label: 'Your name', required: true, value: form.name, error: form.errors?.name, attributes: html`autocomplete="name"` })}
      ${inputField({ id: 'password', label: 'Password', type: 'password', required: true, error: form.errors?.password, hint: 'At least 8 characters.', attributes: html`autocomplete="new-password"` })}
      <button class="button button-primary button-block" type="submit">Join and sign in</button>
    </form>`,
  );
}
