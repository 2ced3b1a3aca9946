/**
 * Creating, editing and deleting a user from the console (docs/console.md), through the services of
 * the API: a new user is `users.create` as `POST /api/v1/users` (the form's one-time key is its
 * Idempotency-Key, so a double click creates one user), or, invited, the same user without a
 * password and an email in the tenant's brand with a single-use link to the portal's page that sets
 * it (`sessions.inviteInTx`, in the user's transaction). An edit is `users.update` as
 * `PATCH /api/v1/users/{id}`; a deletion, asked on a page of its own first, is `users.remove` as
 * `DELETE /api/v1/users/{id}` (a repeat answers the same tombstone). A refusal is the API's: the
 * same fields refused, the same conflict.
 */
import { Type } from '@sinclair/typebox';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../core/errors.js';
import { type CreatedUser, CreateUserBody, UpdateUserBody } from '../../users/schemas.js';
import { actionButton, inputField } from '../../web/components.js';
import { type FormFields, fieldIssues, formOf, textField, validated } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { newFormKey, oncePerFormKey } from '../../web/once.js';
import { redirectWithFlash } from '../cookies.js';
import { csrfField, memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';

/** What each refused field says, in words (the API names the same fields). */
const FIELD_HELP: Record<string, string> = {
  name: 'Enter the user’s name (up to 200 characters).',
  email: 'Enter an email address, like ada@example.com.',
  phone: 'Enter the number in international format: + and the country code, like +14155550123.',
  password: 'Choose a password of at least 8 characters.',
};

const InvitedUserBody = Type.Omit(CreateUserBody, ['password']);

type Values = Record<string, string | undefined>;

interface UserForm {
  values: Values;
  errors: Record<string, string>;
  refusal?: string;
  formKey?: string;
}

function wordsFor(error: unknown): Record<string, string> {
  const issues = fieldIssues(error);
  return Object.fromEntries(Object.keys(issues).map((name) => [name, FIELD_HELP[name] ?? issues[name]]));
}

function profileFields(values: Values, errors: Record<string, string>): Html {
  return html`${inputField({ id: 'name', label: 'Name', value: values.name, error: errors.name, required: true, attributes: html`autocomplete="off" maxlength="200"` })}
    ${inputField({ id: 'email', label: 'Email', type: 'email', value: values.email, error: errors.email, required: true, attributes: html`autocomplete="off"` })}
    ${inputField({
      id: 'phone',
      label: 'Phone (optional)',
      type: 'tel',
      value: values.phone,
      error: errors.phone,
      hint: 'International format, like +14155550123.',
    })}`;
}

function newUserPage(
  request: FastifyRequest,
  reply: FastifyReply,
  form: UserForm,
  canEmail: boolean,
  status = 200,
) {
  const access = form.values.access === 'password' || !canEmail ? 'password' : 'invite';
  const choice = (value: string, label: string, hint: string, disabled = false) =>
    html`<label class="checkbox"><input type="radio" name="access" value="${value}"${access === value ? html` checked` : ''}${disabled ? html` disabled` : ''}> <span><strong>${label}</strong><br><span class="subtle">${hint}</span></span></label>`;
  return sendPage(request, reply, {
    title: 'New user',
    section: 'users',
    parent: { href: '/console/users', label: 'Users' },
    status,
    flash: form.refusal ? { kind: 'error', message: form.refusal } : undefined,
    body: html`<form method="post" action="/console/users" class="panel" novalidate>
  ${csrfField(reply)}<input type="hidden" name="form_key" value="${form.formKey ?? newFormKey()}">
  <div class="form-grid">
    ${profileFields(form.values, form.errors)}
    <fieldset class="field field-wide">
      <legend>How they get in</legend>
      <div class="stack">
        ${choice(
          'invite',
          'Email an invitation',
          canEmail
            ? 'They get an email in your brand with a link to choose their password on your client portal. The link works once, for seven days.'
            : 'Needs your email settings (Settings → Email) first.',
          !canEmail,
        )}
        ${choice('password', 'Set a password now', 'You choose it here and tell them yourself.')}
      </div>
    </fieldset>
    ${inputField({
      id: 'password',
      label: 'Password',
      type: 'password',
      error: form.errors.password,
      hint: 'Only with “Set a password now”. At least 8 characters.',
      attributes: html`autocomplete="new-password"`,
    })}
  </div>
  <div class="form-actions"><button class="button button-primary" type="submit">Create user</button>
  <a class="button button-quiet" href="/console/users">Cancel</a></div>
</form>`,
  });
}

function editPage(
  request: FastifyRequest,
  reply: FastifyReply,
  userId: string,
  form: UserForm,
  status = 200,
) {
  return sendPage(request, reply, {
    title: 'Edit user',
    section: 'users',
    parent: { href: `/console/users/${userId}`, label: form.values.name ?? 'User' },
    status,
    flash: form.refusal ? { kind: 'error', message: form.refusal } : undefined,
    body: html`<form method="post" action="/console/users/${userId}/edit" class="panel" novalidate>
  ${csrfField(reply)}
  <div class="form-grid">${profileFields(form.values, form.errors)}</div>
  <p class="hint">Changing the email changes the address they sign in with; their password stays.</p>
  <div class="form-actions"><button class="button button-primary" type="submit">Save changes</button>
  <a class="button button-quiet" href="/console/users/${userId}">Cancel</a></div>
</form>`,
  });
}

function valuesOf(fields: FormFields): Values {
  return {
    name: textField(fields, 'name'),
    email: textField(fields, 'email'),
    phone: textField(fields, 'phone'),
    access: textField(fields, 'access'),
  };
}

/** A service refusal that is about the form as a whole (a taken email), or undefined. */
function refusalOf(error: unknown): { message: string; status: number } | undefined {
  if (!(error instanceof ApiError) || error.status >= 500) return undefined;
  if (error.code === 'validation_failed') return undefined;
  return { message: error.message, status: error.status };
}

export const userFormPages = consolePages(
  ['users', 'sessions', 'emails', 'idempotency'],
  async (app, { users, sessions, emails, idempotency }) => {
    app.get('/users/new', { config: { consoleAccess: 'admin' } }, async (request, reply) =>
      newUserPage(
        request,
        reply,
        { values: {}, errors: {} },
        await emails.canEmailUsers(memberTenantId(request)),
      ),
    );

    app.post('/users', async (request, reply) => {
      const tenantId = memberTenantId(request);
      const fields = formOf(request);
      const values = valuesOf(fields);
      const formKey = textField(fields, 'form_key');
      const canEmail = await emails.canEmailUsers(tenantId);
      const invite = values.access !== 'password';
      const refuse = (form: Omit<UserForm, 'values'>, status: number) =>
        newUserPage(request, reply, { values, ...form }, canEmail, status);
      if (invite && !canEmail) {
        return refuse(
          {
            errors: {},
            formKey,
            refusal:
              'An invitation needs your email settings (Settings → Email): set them up, or set a password now.',
          },
          422,
        );
      }
      const profile = {
        ...(values.email !== undefined ? { email: values.email } : { email: '' }),
        ...(values.name !== undefined ? { name: values.name } : { name: '' }),
        ...(values.phone ? { phone: values.phone } : {}),
      };
      // A password as typed: never trimmed (spaces count).
      const typedPassword = fields.password;
      const password = typeof typedPassword === 'string' ? typedPassword : '';
      let created: CreatedUser;
      try {
        const path = '/console/users';
        if (invite) {
          const body = validated(InvitedUserBody, profile);
          created = await oncePerFormKey(
            idempotency,
            { tenantId, formKey, path, fields: { ...body, invite: true } },
            async (claim) =>
              (
                await users.createInvited(tenantId, body, claim, async (tx, user) => {
                  await sessions.inviteInTx(tx, user);
                })
              ).user,
            (stored) => (stored as { data: CreatedUser }).data,
          );
        } else {
          const body = validated(CreateUserBody, { ...profile, password });
          created = await oncePerFormKey(
            idempotency,
            { tenantId, formKey, path, fields: body },
            async (claim) => (await users.create(tenantId, body, claim)).user,
            (stored) => (stored as { data: CreatedUser }).data,
          );
        }
      } catch (error) {
        const errors = wordsFor(error);
        if (Object.keys(errors).length > 0) {
          return refuse(
            { errors, formKey, refusal: 'The user was not created: check the fields marked below.' },
            422,
          );
        }
        const refused = refusalOf(error);
        if (!refused) throw error;
        return refuse(
          { errors: {}, refusal: `The user was not created: ${refused.message}` },
          refused.status,
        );
      }
      const who = created.name || created.email;
      return redirectWithFlash(
        reply,
        `/console/users/${created.id}`,
        invite
          ? `${who} was created and invited: an email with a link to choose a password is on its way to ${created.email}.`
          : `${who} was created with the password you set.`,
      );
    });

    app.get<{ Params: { id: string } }>(
      '/users/:id/edit',
      { config: { consoleAccess: 'admin' } },
      async (request, reply) => {
        const user = await users.get(memberTenantId(request), request.params.id);
        const values = { name: user.name ?? undefined, email: user.email, phone: user.phone ?? undefined };
        return editPage(request, reply, user.id, { values, errors: {} });
      },
    );

    app.post<{ Params: { id: string } }>('/users/:id/edit', async (request, reply) => {
      const tenantId = memberTenantId(request);
      const user = await users.get(tenantId, request.params.id);
      const values = valuesOf(formOf(request));
      try {
        const body = validated(UpdateUserBody, {
          name: values.name ?? '',
          email: values.email ?? '',
          phone: values.phone ?? null,
        });
        const updated = await users.update(tenantId, user.id, body);
        return redirectWithFlash(
          reply,
          `/console/users/${user.id}`,
          `${updated.name ?? updated.email} was saved.`,
        );
      } catch (error) {
        const errors = wordsFor(error);
        if (Object.keys(errors).length > 0) {
          const refusal = 'Nothing was saved: check the fields marked below.';
          return editPage(request, reply, user.id, { values, errors, refusal }, 422);
        }
        const refused = refusalOf(error);
        if (!refused) throw error;
        const refusal = `Nothing was saved: ${refused.message}`;
        return editPage(request, reply, user.id, { values, errors: {}, refusal }, refused.status);
      }
    });

    app.post<{ Params: { id: string } }>('/users/:id/invitation', async (request, reply) => {
      const tenantId = memberTenantId(request);
      const user = await users.get(tenantId, request.params.id);
      const formKey = textField(formOf(request), 'form_key');
      const path = `/console/users/${user.id}/invitation`;
      const sent = await oncePerFormKey(
        idempotency,
        { tenantId, formKey, path, fields: {} },
        async (claim) => {
          const done = await sessions.invite(tenantId, user.id);
          if (claim) await idempotency.record(claim, { status: 200, body: { sent: done }, headers: {} });
          return done;
        },
        (stored) => (stored as { sent: boolean }).sent,
      );
      if (!sent) {
        return redirectWithFlash(
          reply,
          `/console/users/${user.id}`,
          'No email was sent: set up your email settings (Settings → Email) first.',
          'error',
        );
      }
      return redirectWithFlash(
        reply,
        `/console/users/${user.id}`,
        `A link to choose a password is on its way to ${user.email}; it works once, for seven days.`,
      );
    });

    app.get<{ Params: { id: string } }>(
      '/users/:id/delete',
      { config: { consoleAccess: 'admin' } },
      async (request, reply) => {
        const user = await users.get(memberTenantId(request), request.params.id);
        const name = user.name ?? user.email;
        const csrf = csrfField(reply);
        return sendPage(request, reply, {
          title: `Delete ${name}?`,
          section: 'users',
          parent: { href: `/console/users/${user.id}`, label: name },
          body: html`<div class="panel stack">
  <p>Deleting <strong>${name}</strong> (${user.email}):</p>
  <ul>
    <li>cancels their subscriptions${user.plan_name ? html` (now on <strong>${user.plan_name}</strong>)` : ''} at once;</li>
    <li>signs them out everywhere, and they can no longer sign in or place calls;</li>
    <li>frees their email for a new user. Their calls stay in your history.</li>
  </ul>
  <p><strong>This cannot be undone.</strong></p>
  <div class="form-actions">${actionButton({ action: `/console/users/${user.id}/delete`, label: `Delete ${name}`, csrf, tone: 'danger' })}
  <a class="button button-quiet" href="/console/users/${user.id}">Keep the user</a></div>
</div>`,
        });
      },
    );
  },
);

/** The field help the pages show, for tests that compare a refusal with the API's. */
export const USER_FIELD_HELP = FIELD_HELP;
