/**
 * Signing in to the console and out of it, and the second-factor step. Failed
 * sign-ins are rate-limited per address and per account (the users' sign-in buckets) before any
 * password is checked, and a member locks after repeated failures (src/members/service.ts). TOTP
 * codes are rate-limited the same way, in the address's bucket and a bucket of the member.
 */
import type { FastifyReply } from 'fastify';
import { type Flash, formOf, textField } from '../../web/forms.js';
import { html } from '../../web/html.js';
import { cookieOptions, SESSION_COOKIE, safeNext, setFlash } from '../cookies.js';
import { cardPage, csrfField, flashBanner } from '../layout.js';
import { consolePages } from '../plugin.js';

function signInForm(
  reply: FastifyReply,
  options: { email?: string; next: string; flash?: Flash; status?: number },
) {
  return cardPage(
    reply,
    options.status ?? 200,
    'Sign in to your console',
    html`${flashBanner(options.flash)}
    <form method="post" action="/console/sign-in" class="stack">
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
      <button class="button button-primary button-block" type="submit">Sign in</button>
    </form>`,
  );
}

export const signInPages = consolePages(
  ['members', 'rateLimits', 'clock'],
  async (app, { members, rateLimits, clock }) => {
    app.get<{ Querystring: { next?: string } }>(
      '/sign-in',
      { config: { consoleAccess: 'public' } },
      async (request, reply) => {
        const next = safeNext(request.query.next);
        if (request.consoleSession && !request.consoleSession.awaitingTotp)
          return reply.code(303).redirect(next);
        return signInForm(reply, { next, flash: request.consoleFlash });
      },
    );

    app.post('/sign-in', { config: { consoleAccess: 'public' } }, async (request, reply) => {
      const fields = formOf(request);
      const email = textField(fields, 'email') ?? '';
      const password = typeof fields.password === 'string' ? fields.password : '';
      const next = safeNext(textField(fields, 'next'));
      const { decision, charges } = await rateLimits.signInAttempt(request.ip, 'console', email);
      if (!decision.allowed) {
        request.rateLimitRefused = 'console_sign_in';
        reply.header('retry-after', Math.max(1, Math.ceil((decision.retryAfterMs ?? 60_000) / 1000)));
        return signInForm(reply, {
          email,
          next,
          status: 429,
          flash: { kind: 'error', message: 'Too many failed sign-ins. Wait a few minutes and try again.' },
        });
      }
      const result = await members.signIn(email, password.slice(0, 1024));
      if (!result.ok) {
        const message =
          result.reason === 'locked'
            ? 'This account is locked for 15 minutes after repeated failed sign-ins.'
            : 'The email or password is incorrect.';
        return signInForm(reply, { email, next, status: 401, flash: { kind: 'error', message } });
      }
      await rateLimits.refund(charges);
      reply.setCookie(
        SESSION_COOKIE,
        result.token,
        cookieOptions(Math.floor((result.expiresAt.getTime() - clock.now().getTime()) / 1000)),
      );
      if (result.awaitingTotp) {
        return reply.code(303).redirect(`/console/sign-in/two-factor?next=${encodeURIComponent(next)}`);
      }
      return reply.code(303).redirect(next);
    });

    app.get<{ Querystring: { next?: string } }>(
      '/sign-in/two-factor',
      { config: { consoleAccess: 'second-factor' } },
      async (request, reply) => {
        const next = safeNext(request.query.next);
        if (!request.consoleSession?.awaitingTotp) return reply.code(303).redirect(next);
        return twoFactorForm(reply, next);
      },
    );

    app.post(
      '/sign-in/two-factor',
      { config: { consoleAccess: 'second-factor' } },
      async (request, reply) => {
        const session = request.consoleSession;
        const fields = formOf(request);
        const next = safeNext(textField(fields, 'next'));
        if (!session?.awaitingTotp) return reply.code(303).redirect(next);
        const code = (textField(fields, 'code') ?? '').replace(/\s/g, '');
        // The member's own bucket: a distinct key from any email's (the "tenant" names the TOTP step).
        const { decision, charges } = await rateLimits.signInAttempt(
          request.ip,
          'console-totp',
          session.memberId,
        );
        if (!decision.allowed) {
          request.rateLimitRefused = 'console_totp';
          reply.header('retry-after', Math.max(1, Math.ceil((decision.retryAfterMs ?? 60_000) / 1000)));
          return twoFactorForm(
            reply,
            next,
            { kind: 'error', message: 'Too many wrong codes. Wait a few minutes and try again.' },
            429,
          );
        }
        const result = await members.completeSecondFactor(session, code);
        if (!result.ok && result.reason === 'ended') {
          reply.clearCookie(SESSION_COOKIE, { path: '/console' });
          setFlash(reply, {
            kind: 'error',
            message: 'Too many wrong codes: sign in again with your password.',
          });
          return reply.code(303).redirect('/console/sign-in');
        }
        if (!result.ok) {
          return twoFactorForm(
            reply,
            next,
            { kind: 'error', message: 'That code is not valid. Try the current one.' },
            401,
          );
        }
        await rateLimits.refund(charges);
        reply.setCookie(
          SESSION_COOKIE,
          result.token,
          cookieOptions(Math.floor((result.expiresAt.getTime() - clock.now().getTime()) / 1000)),
        );
        return reply.code(303).redirect(next);
      },
    );

    app.post(
      '/sign-out',
      { config: { consoleAccess: 'second-factor', audit: false } },
      async (request, reply) => {
        if (request.consoleSession) await members.signOut(request.consoleSession);
        reply.clearCookie(SESSION_COOKIE, { path: '/console' });
        setFlash(reply, { kind: 'success', message: 'You are signed out.' });
        return reply.code(303).redirect('/console/sign-in');
      },
    );
  },
);

function twoFactorForm(reply: FastifyReply, next: string, flash?: Flash, status = 200) {
  return cardPage(
    reply,
    status,
    'Two-factor authentication',
    html`${flashBanner(flash)}
    <p class="muted">Enter the 6-digit code from your authenticator app.</p>
    <form method="post" action="/console/sign-in/two-factor" class="stack">
      ${csrfField(reply)}
      <input type="hidden" name="next" value="${next}">
      <div class="field">
        <label for="code">Authentication code</label>
        <input id="code" name="code" inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,7}" required>
      </div>
      <button class="button button-primary button-block" type="submit">Verify</button>
    </form>
    <form method="post" action="/console/sign-out">${csrfField(reply)}<button class="button button-quiet" type="submit">Use another account</button></form>`,
  );
}
