/**
 * Signing in to the portal and out of it, and the brand's stylesheet (a forgotten password is
 * ./password-reset.ts). Sign-in is the `/auth/v1` one (services.sessions.signIn with the
 * portal's tenant): the same accounts, the same 7-day
 * sessions, the same refusal of blocked and deleted users, and the same rate-limit buckets (per
 * client address and per tenant + email), so the portal is no side door around POST /auth/v1/sessions.
 */
import type { FastifyReply } from 'fastify';
import { ApiError } from '../core/errors.js';
import { formOf, textField } from '../web/forms.js';
import { html } from '../web/html.js';
import { brandFavicon, brandStylesheet } from './brand-style.js';
import type { PortalServices } from './context.js';
import { cookieOptions, type Flash, portalOf, SESSION_COOKIE, safeNext, setFlash } from './context.js';
import { cardPage, csrfField, flashBanner } from './layout.js';
import type { PortalPage } from './router.js';

function signInForm(
  reply: FastifyReply,
  options: { email?: string; next: string; flash?: Flash; status?: number },
): FastifyReply {
  const { brand, base } = portalOf(reply.request);
  return cardPage(
    reply,
    options.status ?? 200,
    'Sign in',
    html`<p class="muted">Sign in to see your minutes, your agents and your calls.</p>
    ${flashBanner(options.flash)}
    <form method="post" action="${base}/sign-in" class="stack">
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
    </form>
    <p class="card-note"><a href="${base}/forgot-password">Forgot your password?</a>${
      brand.supportEmail &&
      html`<br>Other trouble signing in? Write to <a href="mailto:${brand.supportEmail}">${brand.supportEmail}</a>.`
    }</p>`,
  );
}

export function signInPages(services: PortalServices): PortalPage[] {
  const { sessions, rateLimits, clock } = services;
  return [
    {
      method: 'GET',
      path: '/brand.css',
      public: true,
      async handler(request, reply) {
        return reply
          .type('text/css; charset=utf-8')
          .header('cache-control', 'public, max-age=86400')
          .send(brandStylesheet(portalOf(request).brand));
      },
    },
    {
      method: 'GET',
      path: '/favicon.svg',
      public: true,
      async handler(request, reply) {
        return reply
          .type('image/svg+xml')
          .header('cache-control', 'public, max-age=86400')
          .send(brandFavicon(portalOf(request).brand));
      },
    },
    {
      method: 'GET',
      path: '/sign-in',
      public: true,
      async handler(request, reply) {
        const state = portalOf(request);
        const next = safeNext((request.query as { next?: unknown }).next, state.base);
        if (state.user) return reply.code(303).redirect(next);
        return signInForm(reply, { next, flash: state.flash });
      },
    },
    {
      method: 'POST',
      path: '/sign-in',
      public: true,
      async handler(request, reply) {
        const { brand, base } = portalOf(request);
        const fields = formOf(request);
        const email = (textField(fields, 'email') ?? '').slice(0, 320);
        const password = typeof fields.password === 'string' ? fields.password.slice(0, 1024) : '';
        const next = safeNext(textField(fields, 'next'), base);
        const { decision, charges } = await rateLimits.signInAttempt(request.ip, brand.tenantId, email);
        if (!decision.allowed) {
          request.rateLimitRefused = 'sign_in';
          reply.header('retry-after', Math.max(1, Math.ceil((decision.retryAfterMs ?? 60_000) / 1000)));
          return signInForm(reply, {
            email,
            next,
            status: 429,
            flash: { kind: 'error', message: 'Too many failed sign-ins. Wait a few minutes and try again.' },
          });
        }
        let session: Awaited<ReturnType<typeof sessions.signIn>>;
        try {
          session = await sessions.signIn(brand.tenantId, email, password);
        } catch (error) {
          if (!(error instanceof ApiError) || error.status !== 401) throw error;
          return signInForm(reply, {
            email,
            next,
            status: 401,
            flash: { kind: 'error', message: 'The email or password is incorrect.' },
          });
        }
        await rateLimits.refund(charges);
        const seconds = Math.floor((new Date(session.expires_at).getTime() - clock.now().getTime()) / 1000);
        reply.setCookie(SESSION_COOKIE, session.token, cookieOptions(base, seconds));
        return reply.code(303).redirect(next);
      },
    },
    {
      method: 'POST',
      path: '/sign-out',
      public: true,
      async handler(request, reply) {
        const { user, base } = portalOf(request);
        if (user) {
          await sessions.signOut(user.token).catch((error: unknown) => {
            // Already ended (another tab signed out first): signed out all the same.
            if (!(error instanceof ApiError) || error.status !== 401) throw error;
          });
        }
        reply.clearCookie(SESSION_COOKIE, cookieOptions(base));
        setFlash(reply, { kind: 'success', message: 'You are signed out.' });
        return reply.code(303).redirect(`${base}/sign-in`);
      },
    },
  ];
}
