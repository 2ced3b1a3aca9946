/**
 * The operator console's page shell: the document, the sidebar, the signed-in staff member's menu,
 * the flash message; the centred card of the sign-in pages. The same classes (and stylesheet) as
 * the agency console, with the operator's brand: its name, logo and colour.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { StaffRole } from '../../staff/schemas.js';
import { staffRoleAllows } from '../../staff/service.js';
import type { Flash } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { operatorAssetUrl } from './assets.js';
import { csrfUserInfo } from './cookies.js';

export type Section =
  | 'tenants'
  | 'phone-numbers'
  | 'revenue'
  | 'engines'
  | 'jobs'
  | 'audit'
  | 'staff'
  | 'brand';

const NAV: {
  heading: string;
  items: { section: Section; label: string; href: string; role: StaffRole }[];
}[] = [
  {
    heading: 'Business',
    items: [
      { section: 'tenants', label: 'Tenants', href: '/operator/tenants', role: 'support' },
      { section: 'phone-numbers', label: 'Phone numbers', href: '/operator/phone-numbers', role: 'support' },
      { section: 'revenue', label: 'Revenue', href: '/operator/revenue', role: 'support' },
    ],
  },
  {
    heading: 'Operations',
    items: [
      { section: 'engines', label: 'Engines', href: '/operator/engines', role: 'support' },
      { section: 'jobs', label: 'Jobs', href: '/operator/jobs', role: 'support' },
      { section: 'audit', label: 'Audit log', href: '/operator/audit', role: 'support' },
    ],
  },
  {
    heading: 'Settings',
    items: [
      { section: 'brand', label: 'Platform brand', href: '/operator/brand', role: 'support' },
      { section: 'staff', label: 'Staff', href: '/operator/staff', role: 'owner' },
    ],
  },
];

function documentPage(
  request: FastifyRequest,
  options: { title: string; body: Html; bodyClass: string },
): Html {
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${options.title} · ${request.operatorBrand.name} operator</title>
<link rel="stylesheet" href="${operatorAssetUrl('styles.css')}">
<link rel="stylesheet" href="/operator/assets/brand.css?v=${encodeURIComponent(request.operatorBrand.color)}">
<script src="${operatorAssetUrl('console.js')}" defer></script>
</head>
<body class="${options.bodyClass}">
${options.body}
</body>
</html>`;
}

function brandMark(request: FastifyRequest): Html {
  const brand = request.operatorBrand;
  return brand.logoUrl
    ? html`<img class="brand-logo" src="${brand.logoUrl}" alt="" width="20" height="20">`
    : html`<span class="brand-mark" aria-hidden="true">◆</span>`;
}

export function flashBanner(flash: Flash | undefined): Html {
  if (!flash) return html``;
  return html`<div class="flash flash-${flash.kind}" role="${flash.kind === 'error' ? 'alert' : 'status'}">${flash.message}</div>`;
}

export interface PageOptions {
  title: string;
  section?: Section;
  body: Html;
  actions?: Html;
  parent?: { href: string; label: string };
  status?: number;
  flash?: Flash;
}

export function sendPage(request: FastifyRequest, reply: FastifyReply, options: PageOptions): FastifyReply {
  const session = request.operatorSession;
  if (!session) throw new Error('sendPage needs a signed-in staff member');
  const flash = options.flash ?? request.operatorFlash;
  const body = html`<a class="skip-link" href="#main">Skip to content</a>
<div class="shell">
<nav class="sidebar" aria-label="Operator console">
  <a class="brand" href="/operator">${brandMark(request)} ${request.operatorBrand.name}</a>
  ${NAV.map(
    (group) => html`<p class="nav-heading">${group.heading}</p>
  <ul class="nav-list">
    ${group.items
      .filter((item) => staffRoleAllows(session.role, item.role))
      .map(
        (item) =>
          html`<li><a href="${item.href}"${item.section === options.section ? html` aria-current="page"` : ''}>${item.label}</a></li>`,
      )}
  </ul>`,
  )}
</nav>
<div class="workspace">
  <header class="topbar">
    <span class="topbar-tenant">Operator console</span>
    <div class="member-menu">
      <span class="member-email">${session.email}</span>
      <span class="badge badge-neutral">${session.role}</span>
      <form method="post" action="/operator/sign-out">${csrfField(reply)}<button class="button button-quiet" type="submit">Sign out</button></form>
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
    .send(documentPage(request, { title: options.title, body, bodyClass: 'console' }).value);
}

const tokens = new WeakMap<FastifyReply, string>();
export function csrfField(reply: FastifyReply): Html {
  let token = tokens.get(reply);
  if (!token) {
    token = reply.generateCsrf({ userInfo: csrfUserInfo(reply.request) });
    tokens.set(reply, token);
  }
  return html`<input type="hidden" name="_csrf" value="${token}">`;
}

/** Whether the signed-in staff member may do what `needed` may: pages hide the controls they may not use. */
export function can(request: FastifyRequest, needed: StaffRole): boolean {
  return request.operatorSession !== null && staffRoleAllows(request.operatorSession.role, needed);
}

export function cardPage(reply: FastifyReply, status: number, title: string, body: Html): FastifyReply {
  const request = reply.request;
  const page = html`<main id="main" class="card-layout">
  <p class="card-brand">${brandMark(request)} ${request.operatorBrand.name} operator</p>
  <div class="card">
    <h1>${title}</h1>
    ${body}
  </div>
</main>`;
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(documentPage(request, { title, body: page, bodyClass: 'card-page' }).value);
}

export function errorPage(reply: FastifyReply, status: number, message: string): FastifyReply {
  const title = status === 404 ? 'Page not found' : status === 403 ? 'Not allowed' : 'Something went wrong';
  if (reply.request.operatorSession) {
    return sendPage(reply.request, reply, {
      title,
      status,
      body: html`<div class="panel empty-state"><p>${message}</p><p><a class="button" href="/operator">Back to the tenants</a></p></div>`,
      flash: undefined,
    });
  }
  return cardPage(
    reply,
    status,
    title,
    html`<p class="flash flash-error" role="alert">${message}</p>
    <p><a href="/operator/sign-in">Go to sign-in</a></p>`,
  );
}
