/**
 * Branding and domains in the console (docs/console.md, docs/white-label.md): what the agency's
 * clients see (name, logo, color, support email, portal address) and the custom domains that carry
 * the portal, each verified by a TXT record. Admins and owners change them, viewers read them;
 * every write calls services.branding for the member's tenant, as the operator API does.
 *
 * The console's Content Security Policy loads images only from this origin (and data:), so the
 * logo is shown as a link, not previewed; the color swatch and the portal preview are inline SVG.
 */
import { isIP } from 'node:net';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AddDomainBody, type Branding, type Domain, UpdateBrandingBody } from '../../branding/schemas.js';
import { ApiError } from '../../core/errors.js';
import { actionButton, badge, dateTime, emptyState, field, input, inputField } from '../../web/components.js';
import type { Flash } from '../../web/forms.js';
import { fieldIssues, formOf, textField, validated } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { redirectWithFlash } from '../cookies.js';
import { can, csrfField, memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';

/** The console's own accent (styles.css --accent): what the portal uses without a brand color. */
const PLATFORM_COLOR = '#4f46e5';
const HEX = /^#[0-9a-f]{6}$/i;

interface BrandValues {
  brand_name?: string;
  logo_url?: string;
  support_email?: string;
  slug?: string;
  primary_color?: string;
  /** The color the form showed: an untouched color input (which always posts a value) changes nothing. */
  primary_color_shown?: string;
  primary_color_none?: boolean;
}

interface PageState {
  brand?: { values: BrandValues; errors: Record<string, string> };
  domain?: { hostname?: string; error?: string };
  status?: number;
  flash?: Flash;
}

/** WCAG relative luminance of #rrggbb. */
function luminance(hex: string): number {
  const [r, g, b] = [1, 3, 5].map((at) => {
    const c = Number.parseInt(hex.slice(at, at + 2), 16) / 255;
    return c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4;
  });
  return 0.2126 * r + 0.7152 * g + 0.0722 * b;
}

const contrastWithWhite = (hex: string) => 1.05 / (luminance(hex) + 0.05);
/** White or near-black, whichever reads better on the color. */
const inkOn = (hex: string) =>
  contrastWithWhite(hex) >= (luminance(hex) + 0.05) / 0.0616 ? '#ffffff' : '#111827';

function swatch(color: string): Html {
  return html`<svg width="16" height="16" viewBox="0 0 16 16" aria-hidden="true" focusable="false"><rect x="0.5" y="0.5" width="15" height="15" rx="4" fill="${color}" stroke="#d1d5db"/></svg>`;
}

/** What a client's portal looks like in this brand: header, a balance card, a button in the color. */
function portalPreview(brand: Branding): Html {
  const color = brand.primary_color ?? PLATFORM_COLOR;
  const ink = inkOn(color);
  const initial = (brand.display_name.trim()[0] ?? '?').toUpperCase();
  return html`<svg viewBox="0 0 360 210" width="100%" role="img" aria-label="Preview of your clients’ portal: ${brand.display_name} in ${color}" font-family="system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif">
  <rect x="0.5" y="0.5" width="359" height="209" rx="10" fill="#f6f7f9" stroke="#e5e7eb"/>
  <path d="M10.5 0.5h339a10 10 0 0 1 10 10v41.5h-359v-41.5a10 10 0 0 1 10-10z" fill="${color}"/>
  <circle cx="30" cy="26" r="12" fill="${ink}" fill-opacity="0.18"/>
  <text x="30" y="31" text-anchor="middle" font-size="13" font-weight="700" fill="${ink}">${initial}</text>
  <text x="52" y="31" font-size="14" font-weight="600" fill="${ink}">${brand.display_name.slice(0, 34)}</text>
  <rect x="20" y="68" width="320" height="104" rx="8" fill="#ffffff" stroke="#e5e7eb"/>
  <text x="36" y="92" font-size="11" fill="#6b7280">Minutes left</text>
  <text x="36" y="122" font-size="26" font-weight="650" fill="#111827">120</text>
  <rect x="36" y="134" width="150" height="6" rx="3" fill="#e5e7eb"/>
  <rect x="36" y="134" width="96" height="6" rx="3" fill="${color}"/>
  <rect x="226" y="112" width="98" height="30" rx="6" fill="${color}"/>
  <text x="275" y="131" text-anchor="middle" font-size="12" font-weight="600" fill="${ink}">Buy minutes</text>
  <text x="20" y="194" font-size="11" fill="#6b7280">${brand.support_email ? `Help: ${brand.support_email}` : 'No support email set'}</text>
</svg>`;
}

function brandSummary(brand: Branding, domain: string | undefined): Html {
  const contrast = brand.primary_color ? contrastWithWhite(brand.primary_color) : undefined;
  return html`<div class="grid grid-2">
  <section class="panel" aria-labelledby="preview-title">
    <h2 id="preview-title">Your clients’ portal</h2>
    ${portalPreview(brand)}
  </section>
  <section class="panel" aria-labelledby="brand-title">
    <h2 id="brand-title">What your clients see</h2>
    <dl class="details">
      <dt>Name</dt><dd><strong>${brand.display_name}</strong>${!brand.brand_name && html` <span class="subtle">(the agency’s name)</span>`}</dd>
      <dt>Portal</dt><dd><div class="copy-field"><code id="portal-url">${brand.portal_url}</code><button class="button button-small" type="button" data-copy="portal-url">Copy</button></div>
        <span class="subtle">${domain ? `On your domain ${domain}.` : 'On the platform’s address until a custom domain is verified.'}</span></dd>
      <dt>Primary color</dt><dd>${
        brand.primary_color
          ? html`${swatch(brand.primary_color)} <code>${brand.primary_color}</code> <span class="subtle">· contrast with white text ${contrast?.toFixed(1)}:1${contrast !== undefined && contrast < 4.5 ? ', hard to read on buttons' : ''}</span>`
          : html`${swatch(PLATFORM_COLOR)} <span class="muted">The platform’s default</span>`
      }</dd>
      <dt>Logo</dt><dd>${
        brand.logo_url
          ? html`<a href="${brand.logo_url}" rel="noopener noreferrer" target="_blank">${brand.logo_url}</a><br><span class="subtle">Not previewed: the console loads images only from its own address.</span>`
          : html`<span class="muted">None: the portal shows the name</span>`
      }</dd>
      <dt>Support email</dt><dd>${brand.support_email ?? html`<span class="muted">None</span>`}</dd>
      <dt>Last changed</dt><dd>${dateTime(brand.updated_at)}</dd>
    </dl>
  </section>
</div>`;
}

function brandForm(
  reply: FastifyReply,
  brand: Branding,
  context: { tenantId: string; tenantName: string; baseUrl: string },
  state: PageState['brand'],
): Html {
  const errors = state?.errors ?? {};
  const values: BrandValues = state?.values ?? {
    brand_name: brand.brand_name ?? undefined,
    logo_url: brand.logo_url ?? undefined,
    support_email: brand.support_email ?? undefined,
    slug: brand.slug ?? undefined,
  };
  const color =
    values.primary_color && HEX.test(values.primary_color)
      ? values.primary_color.toLowerCase()
      : (brand.primary_color ?? PLATFORM_COLOR);
  const shown = values.primary_color_shown ?? color;
  const colorControl = html`${input({ id: 'primary_color', type: 'color', value: color, error: errors.primary_color, hint: 'The portal’s buttons, links and header.' })}
  <input type="hidden" name="primary_color_shown" value="${shown}">
  ${brand.primary_color && html`<label class="checkbox" for="primary_color_none"><input type="checkbox" id="primary_color_none" name="primary_color_none" value="1"${values.primary_color_none ? html` checked` : ''}> No brand color: use the platform’s</label>`}`;
  return html`<section class="panel" aria-labelledby="edit-title">
  <h2 id="edit-title">Brand</h2>
  ${Object.keys(errors).length > 0 && html`<div class="flash flash-error" role="alert">The brand was not saved: fix the fields marked below.</div>`}
  <form method="post" action="/console/branding">
    ${csrfField(reply)}
    <div class="form-grid">
      ${inputField({ id: 'brand_name', label: 'Brand name', value: values.brand_name, error: errors.brand_name, placeholder: context.tenantName, hint: `Blank: your clients see the agency’s name, ${context.tenantName}.` })}
      ${inputField({ id: 'support_email', label: 'Support email', type: 'email', value: values.support_email, error: errors.support_email, placeholder: 'help@youragency.com', hint: 'Shown in the portal’s footer; clients write here for more minutes.' })}
      ${inputField({ id: 'logo_url', label: 'Logo URL', type: 'url', value: values.logo_url, error: errors.logo_url, placeholder: 'https://cdn.youragency.com/logo.svg', hint: 'An https:// address of the image, shown in the portal’s header and sign-in page. The console does not preview it: its security policy loads images only from its own address.', wide: true })}
      ${field({ id: 'primary_color', label: 'Primary color', control: colorControl, hint: 'The portal’s buttons, links and header.', error: errors.primary_color })}
      ${inputField({ id: 'slug', label: 'Portal address', value: values.slug, error: errors.slug, placeholder: 'your-agency', hint: `${context.baseUrl}/portal/<this>: lowercase letters, digits and inner hyphens. Blank: your agency id, ${context.tenantId}.` })}
    </div>
    <div class="form-actions"><button class="button button-primary" type="submit">Save brand</button></div>
  </form>
</section>`;
}

function domainCard(reply: FastifyReply, domain: Domain, admin: boolean): Html {
  const id = domain.id;
  const record = html`<dl class="details">
    <dt>Type</dt><dd><code>TXT</code></dd>
    <dt>Name</dt><dd><div class="copy-field"><code id="${id}-name">${domain.verification.name}</code><button class="button button-small" type="button" data-copy="${id}-name">Copy<span class="visually-hidden"> the name</span></button></div></dd>
    <dt>Value</dt><dd><div class="copy-field"><code id="${id}-value">${domain.verification.value}</code><button class="button button-small" type="button" data-copy="${id}-value">Copy<span class="visually-hidden"> the value</span></button></div></dd>
  </dl>`;
  const csrf = admin ? csrfField(reply) : html``;
  // What the last lookup found: the problem (in red) or, once verified, that the record was there.
  const lastCheck = !domain.checked_at
    ? html`<p class="subtle">Not checked yet.</p>`
    : domain.check_problem && domain.status === 'pending'
      ? html`<div class="flash flash-error">Checked ${dateTime(domain.checked_at)}: ${domain.check_problem}</div>`
      : html`<p class="subtle">Last checked ${dateTime(domain.checked_at)}${domain.status === 'verified' ? ': the record was found.' : ''}</p>`;
  return html`<section class="panel" aria-labelledby="${id}-title">
  <div class="chart-header">
    <h3 id="${id}-title">${domain.hostname} ${domain.status === 'verified' ? badge('verified', 'success') : badge('pending', 'warning')}</h3>
    ${
      admin &&
      html`<div class="page-actions">
      ${domain.status === 'pending' && actionButton({ action: `/console/branding/domains/${id}/verify`, label: 'Verify now', csrf, tone: 'primary', small: true })}
      ${actionButton({ action: `/console/branding/domains/${id}/remove`, label: 'Remove', csrf, tone: 'danger', small: true, confirm: `Remove ${domain.hostname}? ${domain.status === 'verified' ? 'Your clients’ portal stops answering on it at once.' : 'Its TXT record will not be checked any more.'}` })}
    </div>`
    }
  </div>
  <div class="stack">
  ${
    domain.status === 'verified'
      ? html`<p>Verified ${dateTime(domain.verified_at)}. Your clients’ portal: <a href="https://${domain.hostname}/portal">https://${domain.hostname}/portal</a></p>
  <details><summary>The TXT record that proved it</summary>${record}</details>`
      : html`<p class="muted">Create this record at your DNS provider, then ${admin ? html`press <strong>Verify now</strong>` : 'an admin or owner verifies the domain'}. A new record can take a few minutes to be seen.</p>
  ${record}`
  }
  ${lastCheck}
  </div>
</section>`;
}

export const brandingPages = consolePages(['branding', 'config'], async (app, { branding, config }) => {
  const target = config.publicCnameTarget;
  // A CNAME names a host; a platform reached by its bare IP address can only be given an A record.
  const pointAt = isIP(target)
    ? html`create an ${isIP(target) === 6 ? 'AAAA' : 'A'} record for it with the address <code>${target}</code>`
    : html`create a CNAME record for it whose target is <code>${target}</code>`;

  async function brandingPage(request: FastifyRequest, reply: FastifyReply, state: PageState = {}) {
    const session = request.consoleSession;
    if (!session) throw new Error('a signed-in route');
    const tenantId = memberTenantId(request);
    const [brand, domains] = await Promise.all([branding.get(tenantId), branding.listDomains(tenantId)]);
    const admin = can(request, 'admin');
    const verified = domains.find((domain) => domain.status === 'verified');
    const addForm =
      admin &&
      html`<form method="post" action="/console/branding/domains" class="inline-form">
    ${csrfField(reply)}
    ${inputField({ id: 'hostname', label: 'Domain name', value: state.domain?.hostname, required: true, placeholder: 'portal.youragency.com', error: state.domain?.error, hint: 'A name you control, without https:// or a path.' })}
    <div class="inline-form-actions"><button class="button" type="submit">Add domain</button></div>
  </form>`;
    const domainsPanel = html`<section class="panel" aria-labelledby="domains-title">
  <h2 id="domains-title">Custom domains</h2>
  <p class="muted">Serve the portal on your own domain: add it, ${pointAt} at your DNS provider, create the TXT record shown, then verify it. Until then your clients sign in at the platform’s address.</p>
  ${addForm}
  ${
    domains.length === 0 &&
    emptyState({
      title: 'No custom domains yet',
      text: admin
        ? 'Add a name such as portal.youragency.com and your clients never see the platform’s address.'
        : 'An admin or owner can add one.',
    })
  }
</section>
${domains.map((domain) => domainCard(reply, domain, admin))}`;
    return sendPage(request, reply, {
      title: 'Branding and domains',
      section: 'branding',
      status: state.status,
      flash: state.flash,
      actions: html`<a class="button" href="${brand.portal_url}" rel="noopener noreferrer" target="_blank">Open the portal</a>`,
      body: html`${brandSummary(brand, verified?.hostname)}
${
  admin
    ? brandForm(
        reply,
        brand,
        { tenantId, tenantName: session.tenantName, baseUrl: config.publicBaseUrl },
        state.brand,
      )
    : html`<p class="subtle">Only admins and owners change the brand and domains.</p>`
}
${domainsPanel}`,
    });
  }

  app.get('/branding', async (request, reply) => brandingPage(request, reply));

  app.post('/branding', async (request, reply) => {
    const fields = formOf(request);
    const values: BrandValues = {
      brand_name: textField(fields, 'brand_name'),
      logo_url: textField(fields, 'logo_url'),
      support_email: textField(fields, 'support_email'),
      slug: textField(fields, 'slug'),
      primary_color: textField(fields, 'primary_color'),
      primary_color_shown: textField(fields, 'primary_color_shown'),
      primary_color_none: textField(fields, 'primary_color_none') !== undefined,
    };
    // A blank field clears it (null), as in the API; the color changes only when it was picked.
    const color = values.primary_color_none
      ? { primary_color: null }
      : values.primary_color !== undefined &&
          values.primary_color.toLowerCase() !== values.primary_color_shown?.toLowerCase()
        ? { primary_color: values.primary_color }
        : {};
    try {
      const body = validated(UpdateBrandingBody, {
        brand_name: values.brand_name ?? null,
        logo_url: values.logo_url ?? null,
        support_email: values.support_email ?? null,
        slug: values.slug ?? null,
        ...color,
      });
      await branding.update(memberTenantId(request), body);
      return redirectWithFlash(reply, '/console/branding', 'Brand saved: your clients see it from now on.');
    } catch (error) {
      const errors = fieldIssues(error);
      if (Object.keys(errors).length === 0 || !(error instanceof ApiError)) throw error;
      if (error.code === 'conflict') errors.slug = error.message;
      return brandingPage(request, reply, { brand: { values, errors }, status: error.status });
    }
  });

  app.post('/branding/domains', async (request, reply) => {
    const hostname = textField(formOf(request), 'hostname');
    try {
      const body = validated(AddDomainBody, { hostname: hostname ?? '' });
      const { domain, created } = await branding.addDomain(memberTenantId(request), body);
      return redirectWithFlash(
        reply,
        '/console/branding',
        created
          ? `${domain.hostname} added: create its TXT record, then press Verify now.`
          : `${domain.hostname} was already added; nothing changed.`,
      );
    } catch (error) {
      const issue = fieldIssues(error).hostname;
      if (!issue || !(error instanceof ApiError)) throw error;
      return brandingPage(request, reply, { domain: { hostname, error: issue }, status: error.status });
    }
  });

  app.post<{ Params: { id: string } }>('/branding/domains/:id/verify', async (request, reply) => {
    try {
      const domain = await branding.verifyDomain(memberTenantId(request), request.params.id);
      return redirectWithFlash(
        reply,
        '/console/branding',
        `${domain.hostname} is verified: your clients’ portal answers at https://${domain.hostname}/portal.`,
      );
    } catch (error) {
      // Not verified (what the lookup found is stored and shown) or verified by another agency.
      if (!(error instanceof ApiError) || (error.status !== 422 && error.status !== 409)) throw error;
      return brandingPage(request, reply, {
        status: error.status,
        flash: { kind: 'error', message: error.message },
      });
    }
  });

  app.post<{ Params: { id: string } }>('/branding/domains/:id/remove', async (request, reply) => {
    const domain = await branding.removeDomain(memberTenantId(request), request.params.id);
    return redirectWithFlash(reply, '/console/branding', `${domain.hostname} removed.`);
  });
});
