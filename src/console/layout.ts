/**
 * The console's page shell: the document, the sidebar of sections (one per API resource), the
 * signed-in member's menu, the flash message. Pages build their body and call `sendPage`.
 */

import type { FastifyReply, FastifyRequest } from 'fastify';
import { SUSPENDED_MESSAGE } from '../core/http/auth.js';
import type { Role } from '../members/schemas.js';
import type { ConsoleSession } from '../members/service.js';
import { roleAllows } from '../members/service.js';
import type { Flash } from '../web/forms.js';
import { type Html, html } from '../web/html.js';
import { assetUrl } from './assets.js';
import { csrfUserInfo } from './cookies.js';

export type Section =
  | 'overview'
  | 'analytics'
  | 'api-keys'
  | 'plans'
  | 'users'
  | 'subscriptions'
  | 'usage'
  | 'agents'
  | 'calls'
  | 'do-not-call'
  | 'phone-numbers'
  | 'webhooks'
  | 'emails'
  | 'branding'
  | 'members'
  | 'account'
  | 'tools-secret'
  | 'campaigns'
  | 'audit';

interface NavItem {
  section: Section;
  label: string;
  href: string;
  /** The least role that sees the item. */
  role: Role;
}

const NAV: { heading: string; items: NavItem[] }[] = [
  {
    heading: 'Business',
    items: [
      { section: 'overview', label: 'Overview', href: '/console', role: 'viewer' },
      { section: 'users', label: 'Users', href: '/console/users', role: 'viewer' },
      { section: 'plans', label: 'Plans', href: '/console/plans', role: 'viewer' },
      { section: 'subscriptions', label: 'Subscriptions', href: '/console/subscriptions', role: 'viewer' },
      { section: 'usage', label: 'Usage', href: '/console/usage', role: 'viewer' },
    ],
  },
  {
    heading: 'Voice',
    items: [
      { section: 'agents', label: 'Agents', href: '/console/agents', role: 'viewer' },
      { section: 'calls', label: 'Calls', href: '/console/calls', role: 'viewer' },
      { section: 'analytics', label: 'Analytics', href: '/console/analytics', role: 'viewer' },
      { section: 'campaigns', label: 'Campaigns', href: '/console/campaigns', role: 'viewer' },
      { section: 'phone-numbers', label: 'Phone numbers', href: '/console/phone-numbers', role: 'viewer' },
      { section: 'do-not-call', label: 'Do-not-call list', href: '/console/do-not-call', role: 'viewer' },
    ],
  },
  {
    heading: 'Developers',
    items: [
      { section: 'api-keys', label: 'API keys', href: '/console/api-keys', role: 'viewer' },
      { section: 'webhooks', label: 'Webhooks', href: '/console/webhooks', role: 'viewer' },
      { section: 'tools-secret', label: 'Tools secret', href: '/console/tools-secret', role: 'viewer' },
    ],
  },
  {
    heading: 'Settings',
    items: [
      { section: 'emails', label: 'Email', href: '/console/emails', role: 'viewer' },
      { section: 'branding', label: 'Branding', href: '/console/branding', role: 'viewer' },
      { section: 'members', label: 'Members', href: '/console/members', role: 'viewer' },
      { section: 'audit', label: 'Audit log', href: '/console/audit', role: 'admin' },
      { section: 'account', label: 'Your account', href: '/console/account', role: 'viewer' },
    ],
  },
];

/** A whole HTML document; `bodyClass` picks the shell (console) or the centred card (sign-in). */
export function documentPage(options: {
  title: string;
  body: Html;
  bodyClass: string;
  platformName: string;
}): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · ${options.platformName} console</title>
<link rel="icon" type="image/svg+xml" href="${assetUrl('favicon.svg')}">
<link rel="stylesheet" href="${assetUrl('styles.css')}">
<script src="${assetUrl('console.js')}" defer></script>
</head>
<body class="${options.bodyClass}">
${options.body}
</body>
</html>`;
}

/** The sections the member's role may see, grouped as in the sidebar. */
function navigationGroups(session: ConsoleSession, active: Section | undefined): Html {
  return html`${NAV.map(
    (group) => html`<p class="nav-heading">${group.heading}</p>
  <ul class="nav-list">
    ${group.items
      .filter((item) => roleAllows(session.role, item.role))
      .map(
        (item) =>
          html`<li><a href="${item.href}"${item.section === active ? html` aria-current="page"` : ''}>${item.label}</a></li>`,
      )}
  </ul>`,
  )}`;
}

function navigation(session: ConsoleSession, active: Section | undefined): Html {
  return html`<nav class="sidebar" aria-label="Console">
  <a class="brand" href="/console"><span class="brand-mark" aria-hidden="true">◆</span> ${session.tenantName}</a>
  ${navigationGroups(session, active)}
</nav>`;
}

/**
 * On a narrow screen the sidebar gives way to a Menu button in the top bar: a native disclosure
 * (`<details>`), so it opens without scripts; console.js only closes it on Escape or a click
 * elsewhere.
 */
function narrowMenu(session: ConsoleSession, active: Section | undefined): Html {
  return html`<details class="menu" data-menu>
    <summary class="button menu-button"><span class="menu-icon" aria-hidden="true"></span>Menu</summary>
    <nav class="menu-panel" aria-label="Console menu">${navigationGroups(session, active)}</nav>
  </details>
  <a class="topbar-brand" href="/console"><span class="brand-mark" aria-hidden="true">◆</span> ${session.tenantName}</a>`;
}

export function flashBanner(flash: Flash | undefined): Html {
  if (!flash) return html``;
  return html`<div class="flash flash-${flash.kind}" role="${flash.kind === 'error' ? 'alert' : 'status'}">${flash.message}</div>`;
}

export interface PageOptions {
  title: string;
  /** The sidebar item marked current; none on error pages. */
  section?: Section;
  body: Html;
  /** Buttons or links beside the title (e.g. "New plan"). */
  actions?: Html;
  /** Breadcrumb back to a list: `{ href: '/console/agents', label: 'Agents' }`. */
  parent?: { href: string; label: string };
  status?: number;
  flash?: Flash;
}

/** Sends a console page for the signed-in member. */
export function sendPage(request: FastifyRequest, reply: FastifyReply, options: PageOptions): FastifyReply {
  const session = request.consoleSession;
  if (!session) throw new Error('sendPage needs a signed-in member');
  const flash = options.flash ?? request.consoleFlash;
  const body = html`<a class="skip-link" href="#main">Skip to content</a>
<div class="shell">
${navigation(session, options.section)}
<div class="workspace">
  <header class="topbar">
    ${narrowMenu(session, options.section)}
    <span class="topbar-tenant">${session.tenantName}</span>
    <div class="member-menu">
      <span class="member-email">${session.email}</span>
      <span class="badge badge-neutral">${session.role}</span>
      <form method="post" action="/console/sign-out">${csrfField(reply)}<button class="button button-quiet" type="submit">Sign out</button></form>
    </div>
  </header>
  <main id="main" class="content">
    ${options.parent && html`<p class="breadcrumb"><a href="${options.parent.href}">← ${options.parent.label}</a></p>`}
    <div class="page-header">
      <h1>${options.title}</h1>
      ${options.actions && html`<div class="page-actions">${options.actions}</div>`}
    </div>
    ${flashBanner(flash)}
    ${options.body}
  </main>
</div>
</div>`;
  return reply
    .code(options.status ?? 200)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(
      documentPage({
        title: options.title,
        body,
        bodyClass: 'console',
        platformName: request.consolePlatformBrand.name,
      }).value,
    );
}

/** The hidden CSRF field every console form carries (one token per request, memoised). */
export function csrfField(reply: FastifyReply): Html {
  return html`<input type="hidden" name="_csrf" value="${csrfToken(reply)}">`;
}

const tokens = new WeakMap<FastifyReply, string>();
export function csrfToken(reply: FastifyReply): string {
  let token = tokens.get(reply);
  if (!token) {
    token = reply.generateCsrf({ userInfo: csrfUserInfo(reply.request) });
    tokens.set(reply, token);
  }
  return token;
}

declare module 'fastify' {
  interface FastifyRequest {
    /** The signed-in member of a console request (null on public console pages). */
    consoleSession: ConsoleSession | null;
    /** The flash message the previous request left (read once). */
    consoleFlash: Flash | undefined;
  }
}

/** Whether the signed-in member's role may do what `needed` may: pages hide the controls it may not use. */
export function can(request: FastifyRequest, needed: Role): boolean {
  return request.consoleSession !== null && roleAllows(request.consoleSession.role, needed);
}

/** The signed-in member's tenant: every console read and write is scoped to it. */
export function memberTenantId(request: FastifyRequest): string {
  const session = request.consoleSession;
  if (!session) throw new Error('a console page without a session');
  return session.tenantId;
}

const CARD_PAGE = 'card-page';

export function cardPage(reply: FastifyReply, status: number, title: string, body: Html): FastifyReply {
  const page = html`<main id="main" class="card-layout">
  <p class="card-brand"><span class="brand-mark" aria-hidden="true">◆</span> ${reply.request.consolePlatformBrand.name}</p>
  <div class="card">
    <h1>${title}</h1>
    ${body}
  </div>
</main>`;
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(
      documentPage({
        title,
        body: page,
        bodyClass: CARD_PAGE,
        platformName: reply.request.consolePlatformBrand.name,
      }).value,
    );
}

/** An error as a page: inside the console for a signed-in member, a card otherwise. */
export function errorPage(reply: FastifyReply, status: number, message: string): FastifyReply {
  const session = reply.request.consoleSession;
  const title = status === 404 ? 'Page not found' : status === 403 ? 'Not allowed' : 'Something went wrong';
  if (session && !session.awaitingTotp) {
    return sendPage(reply.request, reply, {
      title,
      status,
      body: html`<div class="panel empty-state"><p>${message}</p><p><a class="button" href="/console">Back to the overview</a></p></div>`,
      flash: undefined,
    });
  }
  return cardPage(
    reply,
    status,
    title,
    html`<p class="flash flash-error" role="alert">${message}</p>
    <p><a href="/console/sign-in">Go to sign-in</a></p>`,
  );
}

/** Every console page of a suspended tenant (403): what happened, that nothing is lost, and sign-out. */
export function suspendedPage(reply: FastifyReply): FastifyReply {
  return cardPage(
    reply,
    403,
    'Account suspended',
    html`<p class="flash flash-error" role="alert">${SUSPENDED_MESSAGE}</p>
    <p>Your agents, users, calls and settings are kept as they were; nothing can be changed until the suspension is lifted.</p>
    <form method="post" action="/console/sign-out">${csrfField(reply)}<button class="button" type="submit">Sign out</button></form>`,
  );
}
