/**
 * A forgotten password, in the portal and in the agency's brand (docs/portal.md): "Forgot your
 * password?" on the sign-in page asks for the email, and the emailed link
 * (`<portal>/reset-password#token=…`) opens a page where the client chooses a new one.
 *
 * Both are the `/auth/v1` flow, through the same services as its routes: the request is
 * services.sessions.requestPasswordReset with the portal's tenant, counted in the same buckets as
 * `POST /auth/v1/password-resets` (per client address and per tenant + email), and answered the
 * same way whether or not the email belongs to an account (it only queues a job). The new password
 * is services.sessions.resetPassword, as `POST /auth/v1/password-resets/confirm`: the API's
 * password schema, a token that works once within its hour, every session signed out; a token of
 * another tenant's user is refused here like an unknown one.
 *
 * The token stays in the link's fragment, which no browser sends to a server; the page's one script
 * (public/portal/reset-password.js, a same-origin asset: the CSP allows no inline script) moves it
 * into the form and out of the address bar. With scripts off the page says what to do instead.
 */
import type { FastifyReply } from 'fastify';
import { ApiError } from '../core/errors.js';
import { PasswordResetConfirmBody, PasswordResetRequestBody } from '../sessions/schemas.js';
import { fieldIssues, formOf, textField, validated } from '../web/forms.js';
import { type Html, html } from '../web/html.js';
import type { PortalServices } from './context.js';
import { cookieOptions, type Flash, portalOf, SESSION_COOKIE, setFlash } from './context.js';
import { cardPage, csrfField, flashBanner } from './layout.js';
import type { PortalPage } from './router.js';

const MIN_PASSWORD = 8;
const MAX_PASSWORD = 1024;

/** A field's error beside it, and the attributes that tie the field to it. */
function fieldError(id: string, message: string | undefined): { attributes: Html; note: Html } {
  if (!message) return { attributes: html``, note: html`` };
  return {
    attributes: html` aria-invalid="true" aria-describedby="${id}-error"`,
    note: html`<p class="error" id="${id}-error">${message}</p>`,
  };
}

function backToSignIn(base: string): Html {
  return html`<p class="card-note"><a href="${base}/sign-in">Back to sign-in</a></p>`;
}

function requestForm(
  reply: FastifyReply,
  options: { email?: string; error?: string; flash?: Flash; status?: number } = {},
): FastifyReply {
  const { base } = portalOf(reply.request);
  const email = fieldError('email', options.error);
  return cardPage(
    reply,
    options.status ?? 200,
    'Reset your password',
    html`<p class="muted">Enter the email you sign in with, and we will send it a link to choose a new password.</p>
    ${flashBanner(options.flash)}
    <form method="post" action="${base}/forgot-password" class="stack">
      ${csrfField(reply)}
      <div class="field">
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required maxlength="254" value="${options.email ?? ''}"${email.attributes}>
        ${email.note}
      </div>
      <button class="button button-primary button-block" type="submit">Send the link</button>
    </form>
    ${backToSignIn(base)}`,
  );
}

function resetForm(
  reply: FastifyReply,
  options: {
    token?: string;
    errors?: { password?: string; password_confirmation?: string };
    status?: number;
  } = {},
): FastifyReply {
  const { brand, base } = portalOf(reply.request);
  const token = options.token ?? '';
  const password = fieldError('password', options.errors?.password);
  const confirmation = fieldError('password_confirmation', options.errors?.password_confirmation);
  const passwordHint = options.errors?.password
    ? password.attributes
    : html` aria-describedby="password-hint"`;
  const contact = brand.supportEmail
    ? html` If that does not help, write to <a href="mailto:${brand.supportEmail}">${brand.supportEmail}</a>.`
    : html``;
  return cardPage(
    reply,
    options.status ?? 200,
    'Choose a new password',
    html`<noscript><p class="flash flash-error">This page needs JavaScript to read the code in your reset link. Turn JavaScript on for this site, then open the link from the email again.${contact}</p></noscript>
    <div id="reset-missing" class="stack" hidden>
      <p class="flash flash-error" role="alert">This address lacks the code from your reset link. Open the link from the email again, whole, or ask for a new one.</p>
      <p><a class="button button-block" href="${base}/forgot-password">Ask for a new link</a></p>
    </div>
    <form id="reset-form" method="post" action="${base}/reset-password" class="stack"${token ? '' : html` hidden`}>
      ${csrfField(reply)}
      <input type="hidden" id="token" name="token" value="${token}">
      <p class="muted">Setting it signs you out on every device; then sign in with the new password.</p>
      <div class="field">
        <label for="password">New password</label>
        <input id="password" name="password" type="password" autocomplete="new-password" required minlength="${MIN_PASSWORD}" maxlength="${MAX_PASSWORD}"${passwordHint}>
        ${options.errors?.password ? password.note : html`<p class="hint" id="password-hint">At least ${MIN_PASSWORD} characters.</p>`}
      </div>
      <div class="field">
        <label for="password_confirmation">Repeat the new password</label>
        <input id="password_confirmation" name="password_confirmation" type="password" autocomplete="new-password" required maxlength="${MAX_PASSWORD}"${confirmation.attributes}>
        ${confirmation.note}
      </div>
      <button class="button button-primary button-block" type="submit">Set the new password</button>
    </form>
    ${backToSignIn(base)}`,
    { scripts: ['reset-password.js'] },
  );
}

/** A used, expired, unknown or foreign token: what to do next, never which of them it was. */
function linkRefused(reply: FastifyReply): FastifyReply {
  const { base } = portalOf(reply.request);
  return cardPage(
    reply,
    422,
    'This link no longer works',
    html`<p class="flash flash-error" role="alert">This password reset link is invalid, expired or already used. Each link works once, for one hour.</p>
    <p><a class="button button-primary button-block" href="${base}/forgot-password">Ask for a new link</a></p>
    ${backToSignIn(base)}`,
  );
}

/** A password as typed: never trimmed (spaces count), one value only. */
function passwordField(fields: ReturnType<typeof formOf>, name: string): string {
  const value = fields[name];
  const text = Array.isArray(value) ? value[0] : value;
  return typeof text === 'string' ? text : '';
}

export function passwordResetPages(services: PortalServices): PortalPage[] {
  const { sessions, rateLimits } = services;
  return [
    {
      method: 'GET',
      path: '/forgot-password',
      public: true,
      async handler(request, reply) {
        return requestForm(reply, { flash: portalOf(request).flash });
      },
    },
    {
      method: 'POST',
      path: '/forgot-password',
      public: true,
      async handler(request, reply) {
        const { brand, base } = portalOf(request);
        const email = (textField(formOf(request), 'email') ?? '').slice(0, 1024);
        // Counted before anything else, whatever the email, as POST /auth/v1/password-resets.
        const decision = await rateLimits.passwordReset(request.ip, brand.tenantId, email);
        if (!decision.allowed) {
          request.rateLimitRefused = 'password_reset';
          const seconds = Math.max(1, Math.ceil(decision.retryAfterMs / 1000));
          reply.header('retry-after', seconds);
          const minutes = Math.ceil(seconds / 60);
          return requestForm(reply, {
            email,
            status: 429,
            flash: {
              kind: 'error',
              message: `Too many reset requests. Try again in ${minutes === 1 ? 'a minute' : `${minutes} minutes`}.`,
            },
          });
        }
        try {
          validated(PasswordResetRequestBody, { tenant_id: brand.tenantId, email });
        } catch (error) {
          if (!(error instanceof ApiError) || error.code !== 'validation_failed') throw error;
          const issue = fieldIssues(error).email;
          return requestForm(reply, {
            email,
            status: 422,
            error: issue
              ? 'Enter the email you sign in with, like name@example.com.'
              : 'This email cannot be used.',
          });
        }
        await sessions.requestPasswordReset(brand.tenantId, email);
        // The same answer for every email: it only queued a job.
        return reply.code(303).redirect(`${base}/forgot-password/sent`);
      },
    },
    {
      method: 'GET',
      path: '/forgot-password/sent',
      public: true,
      async handler(request, reply) {
        const { brand, base } = portalOf(request);
        return cardPage(
          reply,
          200,
          'Check your email',
          html`<p class="flash flash-success" role="status">If an account here uses the address you entered, a link to choose a new password is on its way to it.</p>
          <p class="muted">The link works once, for one hour. Nothing arrived after a few minutes? Look in your spam folder, or <a href="${base}/forgot-password">ask for another link</a>.${
            brand.supportEmail &&
            html` Still stuck? Write to <a href="mailto:${brand.supportEmail}">${brand.supportEmail}</a>.`
          }</p>
          ${backToSignIn(base)}`,
        );
      },
    },
    {
      method: 'GET',
      path: '/reset-password',
      public: true,
      async handler(_request, reply) {
        return resetForm(reply);
      },
    },
    {
      method: 'POST',
      path: '/reset-password',
      public: true,
      async handler(request, reply) {
        const { brand, base } = portalOf(request);
        const fields = formOf(request);
        const token = textField(fields, 'token');
        if (!token) return linkRefused(reply);
        const password = passwordField(fields, 'password');
        const confirmation = passwordField(fields, 'password_confirmation');
        // The API's own rules for the body (PasswordResetConfirmBody), then the repeat.
        let issues: Record<string, string> = {};
        try {
          validated(PasswordResetConfirmBody, { token, password });
        } catch (error) {
          if (!(error instanceof ApiError) || error.code !== 'validation_failed') throw error;
          issues = fieldIssues(error);
          if (issues.token || Object.keys(issues).length === 0) return linkRefused(reply);
        }
        const errors: { password?: string; password_confirmation?: string } = {};
        if (issues.password) {
          errors.password =
            password.length < MIN_PASSWORD
              ? `Choose a password of at least ${MIN_PASSWORD} characters.`
              : password.length > MAX_PASSWORD
                ? `Choose a password of at most ${MAX_PASSWORD} characters.`
                : 'This password holds characters that cannot be used.';
        } else if (confirmation !== password) {
          errors.password_confirmation = 'The two passwords differ: type the same new password twice.';
        }
        if (errors.password || errors.password_confirmation) {
          return resetForm(reply, { token, errors, status: 422 });
        }
        try {
          await sessions.resetPassword(token, password, { tenantId: brand.tenantId });
        } catch (error) {
          if (error instanceof ApiError && error.code === 'unprocessable_entity') return linkRefused(reply);
          throw error;
        }
        // Every session of the user ended, this browser's too.
        reply.clearCookie(SESSION_COOKIE, cookieOptions(base));
        setFlash(reply, {
          kind: 'success',
          message: 'Your new password is set, and you are signed out everywhere. Sign in with it now.',
        });
        return reply.code(303).redirect(`${base}/sign-in`);
      },
    },
  ];
}
