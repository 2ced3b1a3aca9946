/**
 * "Your account" in the console: any member changes their own password and turns the TOTP second
 * factor on (scan, confirm a code) or off (a current code). Every POST here needs only a viewer.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import QRCode from 'qrcode';
import { ChangePasswordBody } from '../../members/schemas.js';
import type { ConsoleSession } from '../../members/service.js';
import { badge, inputField } from '../../web/components.js';
import { fieldIssues, formOf, textField, validated } from '../../web/forms.js';
import { html } from '../../web/html.js';
import { redirectWithFlash } from '../cookies.js';
import { csrfField, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';

const MEMBER_POST = { config: { consoleAccess: 'viewer' as const } };

function sessionOf(request: FastifyRequest): ConsoleSession {
  const session = request.consoleSession;
  if (!session) throw new Error('a signed-in route');
  return session;
}

const codeInput = (error?: string) =>
  inputField({
    id: 'code',
    label: 'Code from your authenticator app',
    required: true,
    error,
    attributes: html`inputmode="numeric" autocomplete="one-time-code" pattern="[0-9 ]{6,7}"`,
  });

export const accountPages = consolePages(['members'], async (app, { members }) => {
  function accountPage(
    request: FastifyRequest,
    reply: FastifyReply,
    errors: { password?: Record<string, string>; disable?: string } = {},
    status = 200,
  ) {
    const session = sessionOf(request);
    const totpOn = session.totpSecret !== null;
    return sendPage(request, reply, {
      title: 'Your account',
      section: 'account',
      status,
      body: html`<div class="grid grid-2">
  <section class="panel" aria-labelledby="profile-title">
    <h2 id="profile-title">Profile</h2>
    <dl class="details">
      <dt>Name</dt><dd>${session.name ?? '—'}</dd>
      <dt>Email</dt><dd>${session.email}</dd>
      <dt>Role</dt><dd>${badge(session.role, session.role === 'owner' ? 'accent' : 'neutral')}</dd>
      <dt>Agency</dt><dd>${session.tenantName}</dd>
    </dl>
  </section>
  <section class="panel" aria-labelledby="totp-title">
    <h2 id="totp-title">Two-factor authentication ${totpOn ? badge('On', 'success') : badge('Off', 'warning')}</h2>
    ${
      totpOn
        ? html`<p class="muted">Sign-in asks for a code from your authenticator app. To turn it off, enter a current code.</p>
    <form method="post" action="/console/account/two-factor/disable">
      ${csrfField(reply)}${codeInput(errors.disable)}
      <div class="form-actions"><button class="button button-danger" type="submit">Turn off two-factor</button></div>
    </form>`
        : html`<p class="muted">Protect your account with a code from an authenticator app (1Password, Google Authenticator, Authy…) at every sign-in.</p>
    <p><a class="button button-primary" href="/console/account/two-factor">Turn on two-factor</a></p>`
    }
  </section>
</div>
<section class="panel" aria-labelledby="password-title">
  <h2 id="password-title">Change password</h2>
  <form method="post" action="/console/account/password">
    ${csrfField(reply)}
    <input type="text" name="username" value="${session.email}" autocomplete="username" hidden>
    <div class="form-grid">
      ${inputField({ id: 'current_password', label: 'Current password', type: 'password', required: true, error: errors.password?.current_password, attributes: html`autocomplete="current-password"` })}
      ${inputField({ id: 'new_password', label: 'New password', type: 'password', required: true, error: errors.password?.new_password, hint: 'At least 8 characters. Your other sessions are signed out.', attributes: html`autocomplete="new-password"` })}
    </div>
    <div class="form-actions"><button class="button button-primary" type="submit">Change password</button></div>
  </form>
</section>`,
    });
  }

  async function setupPage(
    request: FastifyRequest,
    reply: FastifyReply,
    retry?: { sealed: string; error: string },
    status = 200,
  ) {
    const session = sessionOf(request);
    const setup = members.totpSetup(session, retry?.sealed, request.consolePlatformBrand.name);
    const svg = await QRCode.toString(setup.uri, { type: 'svg', margin: 1, errorCorrectionLevel: 'M' });
    const qr = `data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}`;
    return sendPage(request, reply, {
      title: 'Turn on two-factor',
      section: 'account',
      parent: { href: '/console/account', label: 'Your account' },
      status,
      body: html`<section class="panel totp-setup" aria-labelledby="scan-title">
  <h2 id="scan-title">1. Scan this code with your authenticator app</h2>
  <div class="totp-grid">
    <img class="totp-qr" src="${qr}" alt="QR code of your two-factor secret" width="200" height="200">
    <dl class="details">
      <dt>Secret (to type in)</dt><dd><code id="totp-secret">${setup.secret}</code> <button class="button button-small" type="button" data-copy="totp-secret">Copy</button></dd>
      <dt>Setup URI</dt><dd><code id="totp-uri">${setup.uri}</code></dd>
    </dl>
  </div>
  <h2>2. Enter the code it shows</h2>
  <form method="post" action="/console/account/two-factor/enable">
    ${csrfField(reply)}
    <input type="hidden" name="setup" value="${setup.sealed}">
    ${codeInput(retry?.error)}
    <div class="form-actions"><button class="button button-primary" type="submit">Confirm and turn on</button>
    <a class="button button-quiet" href="/console/account">Cancel</a></div>
  </form>
</section>`,
    });
  }

  app.get('/account', async (request, reply) => accountPage(request, reply));
  app.get('/account/two-factor', async (request, reply) => {
    if (sessionOf(request).totpSecret) return reply.code(303).redirect('/console/account');
    return setupPage(request, reply);
  });

  app.post('/account/password', MEMBER_POST, async (request, reply) => {
    const fields = formOf(request);
    const str = (name: string) => (typeof fields[name] === 'string' ? (fields[name] as string) : '');
    try {
      const input = validated(ChangePasswordBody, {
        current_password: str('current_password'),
        new_password: str('new_password'),
      });
      await members.changePassword(sessionOf(request), input);
      return redirectWithFlash(
        reply,
        '/console/account',
        'Your password is changed. Your other sessions are signed out.',
      );
    } catch (error) {
      const errors = fieldIssues(error);
      if (Object.keys(errors).length === 0) throw error;
      return accountPage(request, reply, { password: errors }, 422);
    }
  });

  app.post('/account/two-factor/enable', MEMBER_POST, async (request, reply) => {
    const fields = formOf(request);
    const code = (textField(fields, 'code') ?? '').replace(/\s/g, '');
    const sealed = textField(fields, 'setup') ?? '';
    const currentCode = (textField(fields, 'current_code') ?? '').replace(/\s/g, '');
    try {
      await members.enableTotp(sessionOf(request), sealed, code, currentCode);
      return redirectWithFlash(
        reply,
        '/console/account',
        'Two-factor authentication is on. Sign-in now asks for a code.',
      );
    } catch (error) {
      const errors = fieldIssues(error);
      if (!errors.code) throw error;
      return setupPage(request, reply, { sealed, error: `The code ${errors.code}` }, 422);
    }
  });

  app.post('/account/two-factor/disable', MEMBER_POST, async (request, reply) => {
    const code = (textField(formOf(request), 'code') ?? '').replace(/\s/g, '');
    try {
      await members.disableTotp(sessionOf(request), code);
      return redirectWithFlash(reply, '/console/account', 'Two-factor authentication is off.');
    } catch (error) {
      const errors = fieldIssues(error);
      if (!errors.code) throw error;
      return accountPage(request, reply, { disable: `The code ${errors.code}` }, 422);
    }
  });
});
