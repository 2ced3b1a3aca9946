/**
 * The platform's brand (admins and owners change it, support reads it): the name, logo and colour
 * the platform shows where it speaks for itself. A blank field goes back to the environment's
 * default (PLATFORM_NAME, PLATFORM_LOGO_URL, PLATFORM_COLOR).
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { ApiError } from '../../../core/errors.js';
import type { PlatformBrandService } from '../../../platform-brand/service.js';
import { inputField } from '../../../web/components.js';
import { fieldIssues, formOf, textField } from '../../../web/forms.js';
import { html } from '../../../web/html.js';
import { redirectWithFlash } from '../cookies.js';
import { can, csrfField, sendPage } from '../layout.js';
import { operatorPages } from '../plugin.js';

async function brandPage(
  request: FastifyRequest,
  reply: FastifyReply,
  platformBrand: PlatformBrandService,
  form: {
    values?: Record<string, string | undefined>;
    errors?: Record<string, string>;
    status?: number;
  } = {},
) {
  const stored = await platformBrand.overrides();
  const defaults = platformBrand.defaults();
  const brand = await platformBrand.current();
  const value = (name: 'name' | 'logo_url' | 'primary_color') =>
    form.values ? form.values[name] : (stored[name] ?? undefined);
  const editable = can(request, 'admin');
  return sendPage(request, reply, {
    title: 'Platform brand',
    section: 'brand',
    status: form.status,
    body: html`<section class="panel" aria-labelledby="current-title">
      <h2 id="current-title">In use</h2>
      <dl class="details">
        <dt>Name</dt><dd>${brand.name}</dd>
        <dt>Logo</dt><dd>${brand.logoUrl ?? html`<span class="subtle">none</span>`}</dd>
        <dt>Colour</dt><dd><code>${brand.color}</code></dd>
      </dl>
      <p class="hint">Agencies see this name in their console’s title and sign-in page, the platform’s own emails, the API reference at /docs, and the DNS record that verifies their domains.</p>
    </section>
    ${
      editable &&
      html`<section class="panel" aria-labelledby="edit-title">
      <h2 id="edit-title">Change the brand</h2>
      <form method="post" action="/operator/brand">${csrfField(reply)}
        <div class="form-grid">
          ${inputField({ id: 'name', label: 'Platform name', value: value('name'), error: form.errors?.name, hint: `Blank: ${defaults.name} (the environment’s).` })}
          ${inputField({ id: 'logo_url', label: 'Logo URL', value: value('logo_url'), error: form.errors?.logo_url, hint: `https:// only. Blank: ${defaults.logoUrl ?? 'no logo'}.` })}
          ${inputField({ id: 'primary_color', label: 'Colour', value: value('primary_color'), error: form.errors?.primary_color, hint: `#rrggbb. Blank: ${defaults.color}.` })}
        </div>
        <div class="form-actions"><button class="button button-primary" type="submit">Save the brand</button></div>
      </form>
    </section>`
    }`,
  });
}

export const operatorBrandPages = operatorPages(['platformBrand'], async (app, { platformBrand }) => {
  app.get('/brand', async (request, reply) => brandPage(request, reply, platformBrand));

  app.post('/brand', async (request, reply) => {
    const fields = formOf(request);
    const values = {
      name: textField(fields, 'name'),
      logo_url: textField(fields, 'logo_url'),
      primary_color: textField(fields, 'primary_color'),
    };
    try {
      await platformBrand.update({
        name: values.name ?? null,
        logo_url: values.logo_url ?? null,
        primary_color: values.primary_color ?? null,
      });
    } catch (error) {
      if (!(error instanceof ApiError) || error.status >= 500) throw error;
      return brandPage(request, reply, platformBrand, {
        values,
        errors: fieldIssues(error),
        status: error.status,
      });
    }
    return redirectWithFlash(reply, '/operator/brand', 'The platform’s brand is saved.');
  });
});
