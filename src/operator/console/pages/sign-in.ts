/**
 * Signing in to the operator console and out of it: email, password and TOTP code in one form.
 * Failed sign-ins are rate-limited per address and per account (the sign-in buckets the agency
 * console uses, under their own name) before any password is checked; the account locks after
 * repeated failures (src/staff/service.ts).
 */
import type { FastifyReply } from 'fastify';
import { type Flash, formOf, textField } from '../../../web/forms.js';
import { html } from '../../../web/html.js';
import { cookieOptions, OPERATOR_PATH, SESSION_COOKIE, safeNext, setFlash } from '../cookies.js';
import { cardPage, csrfField, flashBanner } from '../layout.js';
import { operatorPages } from '../plugin.js';

function signInForm(
  reply: FastifyReply,
  options: { email?: string; next: string; flash?: Flash; status?: number },
) {
  return cardPage(
    reply,
    options.status ?? 200,
    'Sign in to the operator console',
    html`${flashBanner(options.flash)}
    <form method="post" action="/operator/sign-in" class="stack">
      ${csrfField(reply)}
      <input type="hidden" name="next" value="${options.next}">
      <div class="field">
        <label for="email">Email</label>
        <input id="email" name="email" type="email" autocomplete="username" required value="${options.email ?? ''}">
      </div>
      <div class="field">
        <label for="password">Password</label>
        <input id="password" name="password" type="password" autocomplete="current-password" required>
      </div>
      <div class="field">
        <label for="code">Authentication code</label>
        <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,7}" required aria-describedby="code-hint">
        <p class="hint" id="code-hint">The 6-digit code from your authenticator app.</p>
      </div>
      <button class="button button-primary button-block" type="submit">Sign in</button>
    </form>`,
  );
}

export const operatorSignInPages = operatorPages(
  ['staff', 'rateLimits', 'clock'],
  async (app, { staff, rateLimits, clock }) => {
    app.get('/', { config: { operatorAccess: 'support' } }, async (_request, reply) =>
      reply.code(303).redirect('/operator/tenants'),
    );

    app.get<{ Querystring: { next?: string } }>(
      '/sign-in',
      { config: { operatorAccess: 'public' } },
      async (request, reply) => {
        const next = safeNext(request.query.next);
        if (request.operatorSession) return reply.code(303).redirect(next);
        return signInForm(reply, { next, flash: request.operatorFlash });
      },
    );

    app.post('/sign-in', { config: { operatorAccess: 'public' } }, async (request, reply) => {
      const fields = formOf(request);
      const email = textField(fields, 'email') ?? '';
      const password = typeof fields.password === 'string' ? fields.password : '';
      const code = (textField(fields, 'code') ?? '').replace(/\s/g, '');
      const next = safeNext(textField(fields, 'next'));
      const { decision, charges } = await rateLimits.signInAttempt(request.ip, 'operator', email);
      if (!decision.allowed) {
        request.rateLimitRefused = 'operator_sign_in';
        reply.header('retry-after', Math.max(1, Math.ceil((decision.retryAfterMs ?? 60_000) / 1000)));
        return signInForm(reply, {
          email,
          next,
          status: 429,
          flash: { kind: 'error', message: 'Too many failed sign-ins. Wait a few minutes and try again.' },
        });
      }
      const result = await staff.signIn(email, password.slice(0, 1024), code);
      if (!result.ok) {
        const message =
          result.reason === 'locked'
            ? 'This account is locked for 15 minutes after repeated failed sign-ins.'
            : 'The email, password or code is incorrect.';
        return signInForm(reply, { email, next, status: 401, flash: { kind: 'error', message } });
      }
      await rateLimits.refund(charges);
      reply.setCookie(
        SESSION_COOKIE,
        result.token,
        cookieOptions(Math.floor((result.expiresAt.getTime() - clock.now().getTime()) / 1000)),
      );
      return reply.code(303).redirect(next);
    });

    app.post('/sign-out', { config: { operatorAccess: 'public', audit: false } }, async (request, reply) => {
      if (request.operatorSession) await staff.signOut(request.operatorSession);
      reply.clearCookie(SESSION_COOKIE, { path: OPERATOR_PATH });
      setFlash(reply, { kind: 'success', message: 'You are signed out.' });
      return reply.code(303).redirect('/operator/sign-in');
    });
  },
);
