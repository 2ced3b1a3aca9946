/**
 * The portal's page shell, in the agency's brand and nothing else: its logo (or its initial) and
 * name in the header, its colour through `{base}/brand.css`, its support address in the footer.
 * Pages build their body and call `sendPage`; signed-out pages use `cardPage`. A request that
 * belongs to no portal gets `neutralNotFound`, which names nobody.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { Brand } from '../branding/service.js';
import { type Html, html } from '../web/html.js';
import { assetUrl } from './assets.js';
import { brandStylesheetVersion } from './brand-style.js';
import { csrfUserInfo, type Flash, href, type PortalState, portalOf } from './context.js';

export type Section = 'home' | 'agents' | 'calls' | 'top-ups';

const NAV: { section: Section; label: string; path: string }[] = [
  { section: 'home', label: 'Overview', path: '/' },
  { section: 'agents', label: 'Agents', path: '/agents' },
  { section: 'calls', label: 'Calls', path: '/calls' },
  { section: 'top-ups', label: 'Minutes', path: '/top-ups' },
];

function documentPage(options: {
  title: string;
  body: Html;
  bodyClass: string;
  /** The portal whose brand styles the page; none for a page that belongs to no portal. */
  state?: PortalState;
  /** Scripts of the portal's own assets (public/portal/*.js), loaded deferred. */
  scripts?: string[];
}): string {
  const { state } = options;
  const assetsBase = state?.base ?? '/portal';
  const title = state ? `${options.title} · ${state.brand.name}` : options.title;
  return html`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="robots" content="noindex">
<title>${title}</title>
<link rel="stylesheet" href="${assetUrl(assetsBase, 'styles.css')}">
${
  state &&
  html`<link rel="stylesheet" href="${state.base}/brand.css?v=${brandStylesheetVersion(state.brand)}">
<link rel="icon" type="image/svg+xml" href="${state.base}/favicon.svg?v=${brandStylesheetVersion(state.brand)}">`
}
${(options.scripts ?? []).map((name) => html`<script src="${assetUrl(assetsBase, name)}" defer></script>`)}
</head>
<body class="${options.bodyClass}">
${options.body}
</body>
</html>`.value;
}

/**
 * The logo when the agency has one (it carries the name, so the image is named by its alt text),
 * else the initial on the accent colour beside the name.
 */
function brandMark(brand: Brand, size: 'small' | 'large'): Html {
  if (brand.logoUrl) {
    return html`<img class="brand-logo brand-logo-${size}" src="${brand.logoUrl}" alt="${brand.name}">`;
  }
  const initial = Array.from(brand.name.trim())[0]?.toUpperCase() ?? '•';
  return html`<span class="brand-initial brand-initial-${size}" aria-hidden="true">${initial}</span><span class="brand-name">${brand.name}</span>`;
}

export function flashBanner(flash: Flash | undefined): Html {
  if (!flash) return html``;
  return html`<div class="flash flash-${flash.kind}" role="${flash.kind === 'error' ? 'alert' : 'status'}">${flash.message}</div>`;
}

function footer(brand: Brand): Html {
  return html`<footer class="portal-footer">
  <p>${brand.name}${
    brand.supportEmail && html` · Questions? <a href="mailto:${brand.supportEmail}">${brand.supportEmail}</a>`
  }</p>
</footer>`;
}

/** Where a client without a plan to buy minutes with is told to ask for them. */
export function moreMinutesNote(brand: Brand): Html {
  return brand.supportEmail
    ? html`To buy more minutes, contact <a href="mailto:${brand.supportEmail}">${brand.supportEmail}</a>.`
    : html`To buy more minutes, contact ${brand.name}.`;
}

function navigationList(request: FastifyRequest, active: Section | undefined): Html {
  return html`<ul>
  ${NAV.map(
    (item) =>
      html`<li><a href="${href(request, item.path)}"${item.section === active ? html` aria-current="page"` : ''}>${item.label}</a></li>`,
  )}
</ul>`;
}

export interface PageOptions {
  title: string;
  section?: Section;
  body: Html;
  /** Buttons beside the title (e.g. "Publish"). */
  actions?: Html;
  /** A way back to the list: `{ path: '/agents', label: 'Agents' }`. */
  parent?: { path: string; label: string };
  status?: number;
  flash?: Flash;
}

/** Sends a page of the portal to its signed-in user. */
export function sendPage(request: FastifyRequest, reply: FastifyReply, options: PageOptions): FastifyReply {
  const state = portalOf(request);
  const user = state.user;
  if (!user) throw new Error('sendPage needs a signed-in user');
  const flash = options.flash ?? state.flash;
  const body = html`<a class="skip-link" href="#main">Skip to content</a>
<header class="portal-header">
  <div class="portal-header-inner">
    <a class="portal-brand" href="${state.base}">${brandMark(state.brand, 'small')}</a>
    <nav class="portal-nav" aria-label="Portal">${navigationList(request, options.section)}</nav>
    <div class="portal-account">
      <span class="portal-user">${user.email}</span>
      <form method="post" action="${state.base}/sign-out">${csrfField(reply)}<button class="button button-quiet" type="submit">Sign out</button></form>
    </div>
    <details class="menu">
      <summary class="button menu-button"><span class="menu-icon" aria-hidden="true"></span>Menu</summary>
      <nav class="menu-panel" aria-label="Portal menu">${navigationList(request, options.section)}</nav>
    </details>
  </div>
</header>
<main id="main" class="portal-main">
  ${options.parent && html`<p class="breadcrumb"><a href="${href(request, options.parent.path)}">← ${options.parent.label}</a></p>`}
  <div class="page-header">
    <h1>${options.title}</h1>
    ${options.actions && html`<div class="page-actions">${options.actions}</div>`}
  </div>
  ${flashBanner(flash)}
  ${options.body}
</main>
${footer(state.brand)}`;
  return reply
    .code(options.status ?? 200)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(documentPage({ title: options.title, body, bodyClass: 'portal', state }));
}

/** A centred card in the brand (sign-in, password reset, errors for signed-out visitors). */
export function cardPage(
  reply: FastifyReply,
  status: number,
  title: string,
  body: Html,
  options: { scripts?: string[] } = {},
): FastifyReply {
  const state = portalOf(reply.request);
  const page = html`<main id="main" class="card-layout">
  <div class="card">
    <p class="card-brand">${brandMark(state.brand, 'large')}</p>
    <h1>${title}</h1>
    ${body}
  </div>
  ${footer(state.brand)}
</main>`;
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(documentPage({ title, body: page, bodyClass: 'card-page', state, scripts: options.scripts }));
}

/** An error as a page of the portal: in the shell for a signed-in user, a card otherwise. */
export function errorPage(reply: FastifyReply, status: number, message: string): FastifyReply {
  const title = status === 404 ? 'Page not found' : status === 403 ? 'Not allowed' : 'Something went wrong';
  const state = reply.request.portal;
  if (!state) return status === 404 ? neutralNotFound(reply) : neutralPage(reply, status, title, message);
  if (state.user) {
    return sendPage(reply.request, reply, {
      title,
      status,
      flash: undefined,
      body: html`<div class="panel empty-state"><p>${message}</p><p><a class="button" href="${state.base}">Back to the overview</a></p></div>`,
    });
  }
  return cardPage(
    reply,
    status,
    title,
    html`<p class="flash flash-error" role="alert">${message}</p>
    <p><a href="${state.base}/sign-in">Go to sign-in</a></p>`,
  );
}

/** No portal answers here: a page that shows no brand at all, the platform's least of all. */
export function neutralPage(
  reply: FastifyReply,
  status: number,
  title: string,
  message: string,
): FastifyReply {
  const body = html`<main id="main" class="card-layout">
  <div class="card">
    <h1>${title}</h1>
    <p class="muted">${message}</p>
  </div>
</main>`;
  return reply
    .code(status)
    .type('text/html; charset=utf-8')
    .header('cache-control', 'no-store')
    .send(documentPage({ title, body, bodyClass: 'card-page card-page-neutral' }));
}

/**
 * Every page of a suspended tenant's portal (403): in the agency's brand, saying only that the
 * service is unavailable (the clients are the agency's; the platform and its reasons stay unnamed).
 */
export function unavailablePage(reply: FastifyReply): FastifyReply {
  const { brand } = portalOf(reply.request);
  return cardPage(
    reply,
    403,
    'Temporarily unavailable',
    html`<p class="flash flash-error" role="alert">This service is unavailable at the moment. Your account and its data are kept.</p>
    <p>Please try again later, or contact ${brand.name}.</p>`,
  );
}

export function neutralNotFound(reply: FastifyReply): FastifyReply {
  return neutralPage(
    reply,
    404,
    'Page not found',
    'There is no client portal at this address. Check the link you were given, or ask the company that gave it to you.',
  );
}

/** The hidden CSRF field every portal form carries (one token per request). */
export function csrfField(reply: FastifyReply): Html {
  return html`<input type="hidden" name="_csrf" value="${csrfToken(reply)}">`;
}

const tokens = new WeakMap<FastifyReply, string>();
function csrfToken(reply: FastifyReply): string {
  let token = tokens.get(reply);
  if (!token) {
    const base = portalOf(reply.request).base;
    // The secret cookie lives at the portal's own path, beside its session.
    token = reply.generateCsrf({ userInfo: csrfUserInfo(reply.request), path: base });
    tokens.set(reply, token);
  }
  return token;
}
