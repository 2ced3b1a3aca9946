/**
 * Console pages for the tenant's partner API keys: the list (with when each key was last used),
 * creating a key with chosen scopes (its secret shown once, on the answer to the form, never
 * stored or shown again), revoking one. The same service functions as the operator API.
 */
import type { FastifyReply, FastifyRequest } from 'fastify';
import { type ApiKey, CreateApiKeyBody, ListApiKeysQuery, SCOPES } from '../../api-keys/schemas.js';
import { createApiKey, listApiKeys, revokeApiKey } from '../../api-keys/service.js';
import {
  actionButton,
  badge,
  dateTime,
  emptyState,
  field,
  inputField,
  namedIssue,
  pager,
  secretOnce,
  select,
  statusBadge,
} from '../../web/components.js';
import { fieldIssues, formOf, listField, textField, validated } from '../../web/forms.js';
import { type Html, html } from '../../web/html.js';
import { keepForOnce, redirectWithFlash, takeOnce } from '../cookies.js';
import { can, csrfField, memberTenantId, sendPage } from '../layout.js';
import { consolePages } from '../plugin.js';

const PAGE_SIZE = 25;

function pageParam(request: FastifyRequest): number | string {
  const page = (request.query as Record<string, string | undefined>).page;
  return page && /^\d{1,9}$/.test(page) ? Number(page) : (page ?? 1);
}

function keyRow(key: ApiKey, revokeControl: Html | false): Html {
  return html`<tr>
  <td><strong>${key.name ?? 'Unnamed key'}</strong><div class="subtle mono hide-narrow">${key.id}</div></td>
  <td>${badge(key.env, key.env === 'live' ? 'accent' : 'neutral')}</td>
  <td>${
    key.scopes.length === SCOPES.length
      ? html`<span title="${key.scopes.join(' ')}">${badge('all scopes', 'info')}</span>`
      : html`<ul class="scope-list">${key.scopes.map((scope) => html`<li><code>${scope}</code></li>`)}</ul>`
  }</td>
  <td>${statusBadge(key.status)}</td>
  <td class="hide-narrow">${dateTime(key.created_at)}</td>
  <td>${key.last_used_at ? dateTime(key.last_used_at) : html`<span class="subtle">Never</span>`}</td>
  <td class="actions">${key.status === 'active' && revokeControl}</td>
</tr>`;
}

/** The scopes by resource, in SCOPES order: [['Users', ['users:read', 'users:write']], …]. */
function scopeGroups(): [string, string[]][] {
  const groups = new Map<string, string[]>();
  for (const scope of SCOPES) {
    const resource = scope.split(':')[0];
    const name = resource[0].toUpperCase() + resource.slice(1);
    groups.set(name, [...(groups.get(name) ?? []), scope]);
  }
  return [...groups];
}

interface FormState {
  values: { name?: string; env?: string; scopes: string[] };
  errors: Record<string, string>;
}

function createForm(reply: FastifyReply, state: FormState): Html {
  const { values, errors } = state;
  const chosen = new Set(values.scopes);
  return html`<form method="post" action="/console/api-keys" class="panel" novalidate>
  ${csrfField(reply)}
  <div class="form-grid">
    ${inputField({
      id: 'name',
      label: 'Name',
      value: values.name,
      hint: 'So you can tell your keys apart, e.g. "Production backend".',
      error: errors.name,
    })}
    ${field({
      id: 'env',
      label: 'Environment',
      control: select({
        id: 'env',
        choices: [
          { value: 'test', label: 'Test — for development' },
          { value: 'live', label: 'Live — real users, calls and billing' },
        ],
        selected: values.env ?? 'test',
        error: errors.env,
      }),
      error: errors.env,
    })}
    <fieldset class="field field-wide"${errors.scopes ? html` aria-describedby="scopes-error"` : ''}>
      <legend>Scopes</legend>
      <div class="scope-groups">
        ${scopeGroups().map(
          ([resource, scopes]) => html`<div class="scope-group">
          <p class="scope-group-name">${resource}</p>
          ${scopes.map(
            (scope) => html`<label class="checkbox" for="scope-${scope.replace(':', '-')}">
            <input type="checkbox" id="scope-${scope.replace(':', '-')}" name="scopes" value="${scope}"${chosen.has(scope) ? html` checked` : ''}>
            <code>${scope}</code></label>`,
          )}
        </div>`,
        )}
      </div>
      <p class="hint">Grant only what the integration needs; a request outside its scopes is refused with 403.</p>
      ${errors.scopes && html`<p class="error" id="scopes-error">${namedIssue('Scopes', errors.scopes)}</p>`}
    </fieldset>
  </div>
  <div class="form-actions">
    <button class="button button-primary" type="submit">Create API key</button>
    <a class="button button-quiet" href="/console/api-keys">Cancel</a>
  </div>
</form>`;
}

function sendCreatePage(request: FastifyRequest, reply: FastifyReply, state: FormState, status = 200) {
  return sendPage(request, reply, {
    title: 'New API key',
    section: 'api-keys',
    parent: { href: '/console/api-keys', label: 'API keys' },
    status,
    body: createForm(reply, state),
  });
}

type Issued = Awaited<ReturnType<typeof createApiKey>>;
const CREATED_PATH = '/console/api-keys/created';

export const apiKeyPages = consolePages(
  ['clock', 'config', 'database', 'keyVerifier', 'secrets'],
  async (app, services) => {
    const deps = {
      db: services.database.db,
      clock: services.clock,
      verifier: services.keyVerifier,
      keyPrefix: services.config.apiKeyPrefix,
    };

    app.get('/api-keys', async (request, reply) => {
      const query = validated(ListApiKeysQuery, { page: pageParam(request), limit: PAGE_SIZE });
      const { data, pagination } = await listApiKeys(deps.db, deps.clock, memberTenantId(request), query);
      const admin = can(request, 'admin');
      const csrf = admin ? csrfField(reply) : html``;
      const newKey = html`<a class="button button-primary" href="/console/api-keys/new">Create API key</a>`;
      const body =
        pagination.total === 0
          ? html`<div class="panel">${emptyState({
              title: 'No API keys yet',
              text: 'Your backend calls the voiceplane API with an API key. Create one with the scopes it needs; its secret is shown once.',
              action: admin ? newKey : undefined,
            })}</div>`
          : html`<div class="panel panel-flush"><div class="table-wrap" role="region" aria-label="API keys" tabindex="0"><table>
  <thead><tr>
    <th scope="col">Name</th><th scope="col">Env</th><th scope="col">Scopes</th><th scope="col">Status</th>
    <th scope="col" class="hide-narrow">Created</th><th scope="col">Last used</th><th scope="col"><span class="visually-hidden">Actions</span></th>
  </tr></thead>
  <tbody>${data.map((key) =>
    keyRow(
      key,
      admin &&
        actionButton({
          action: `/console/api-keys/${encodeURIComponent(key.id)}/revoke`,
          label: 'Revoke',
          csrf,
          tone: 'danger',
          small: true,
          confirm: `Revoke “${key.name ?? key.id}”? Requests with this key are refused from now on.`,
        }),
    ),
  )}</tbody>
</table></div></div>
${pager(pagination, '/console/api-keys', {})}`;
      return sendPage(request, reply, {
        title: 'API keys',
        section: 'api-keys',
        actions: admin && pagination.total > 0 ? newKey : undefined,
        body,
      });
    });

    app.get('/api-keys/new', { config: { consoleAccess: 'admin' } }, async (request, reply) =>
      sendCreatePage(request, reply, { values: { scopes: [] }, errors: {} }),
    );

    app.post('/api-keys', async (request, reply) => {
      const fields = formOf(request);
      const values = {
        name: textField(fields, 'name'),
        env: textField(fields, 'env') ?? 'test',
        scopes: listField(fields, 'scopes'),
      };
      let issued: Issued;
      try {
        const body = validated(CreateApiKeyBody, {
          ...(values.name !== undefined ? { name: values.name } : {}),
          env: values.env,
          scopes: values.scopes,
        });
        issued = await createApiKey(deps, memberTenantId(request), body);
      } catch (error) {
        const errors = fieldIssues(error);
        if (Object.keys(errors).length === 0) throw error;
        if (errors.scopes && values.scopes.length === 0) errors.scopes = 'Choose at least one scope.';
        return sendCreatePage(request, reply, { values, errors }, 422);
      }
      // POST → 303 → GET: a refresh of the result page never creates a second key.
      keepForOnce(request, reply, services.secrets, CREATED_PATH, issued);
      return reply.code(303).redirect(CREATED_PATH);
    });

    app.get('/api-keys/created', { config: { consoleAccess: 'admin' } }, async (request, reply) => {
      const issued = takeOnce<Issued>(request, reply, services.secrets, CREATED_PATH);
      if (!issued) {
        return redirectWithFlash(
          reply,
          '/console/api-keys',
          'A new key is shown only once, right after it is created; revoke it and create another if it was lost.',
          'error',
        );
      }
      return sendPage(request, reply, {
        title: 'API key created',
        section: 'api-keys',
        parent: { href: '/console/api-keys', label: 'API keys' },
        flash: { kind: 'success', message: `The API key “${issued.name ?? issued.id}” was created.` },
        body: html`<div class="secret-once-wrap">
  ${secretOnceBlock(issued.key)}
  <div class="panel">
    <dl class="details">
      <dt>Name</dt><dd>${issued.name ?? 'Unnamed key'}</dd>
      <dt>Environment</dt><dd>${badge(issued.env, issued.env === 'live' ? 'accent' : 'neutral')}</dd>
      <dt>Scopes</dt><dd>${issued.scopes.map((scope) => html`<code>${scope}</code> `)}</dd>
      <dt>Id</dt><dd class="mono">${issued.id}</dd>
    </dl>
  </div>
  <p><a class="button button-primary" href="/console/api-keys">I have stored the key — back to API keys</a></p>
</div>`,
      });
    });

    app.post<{ Params: { id: string } }>('/api-keys/:id/revoke', async (request, reply) => {
      const revoked = await revokeApiKey(deps, request.params.id, memberTenantId(request));
      return redirectWithFlash(reply, '/console/api-keys', `The API key ${revoked.id} is revoked.`);
    });
  },
);

function secretOnceBlock(key: string): Html {
  return secretOnce({
    id: 'new-api-key',
    label: 'Your new API key',
    value: key,
    note: 'Copy it now and keep it somewhere safe: this is the only time it is shown. Send it as Authorization: Bearer <key>.',
  });
}
