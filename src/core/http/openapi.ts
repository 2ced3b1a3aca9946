/**
 * The OpenAPI 3.1 documents, generated from the route schemas, and the reference page.
 * - `/api/v1/openapi.json`: the partner API (tagged partner routes) and the webhook;
 * - `/admin/v1/openapi.json`: the operator API, kept out of the partner document;
 * - `/docs`: the reference partners read, rendered in the browser from the partner document
 *   (Scalar, its script served from this process: no CDN, no second copy of the document).
 * Both documents are public, like the code that serves them; neither holds tenant data.
 */
import { readFileSync } from 'node:fs';
import swagger from '@fastify/swagger';
import apiReference from '@scalar/fastify-api-reference';
import type { TSchema } from '@sinclair/typebox';
import type { FastifyInstance, RouteOptions } from 'fastify';
import { noRoute } from './error-handler.js';
import { documentedErrorSchema, refineDocument, selectDocument } from './openapi-document.js';
import { type GuideOptions, operatorGuide, partnerGuide } from './openapi-guide.js';
import { ErrorEnvelope, errorResponses } from './schemas.js';

/** The name the reference carries; a tenant's own name can replace it later. */
export const PRODUCT_NAME = 'voiceplane';
export const PARTNER_DOCUMENT_URL = '/api/v1/openapi.json';
export const OPERATOR_DOCUMENT_URL = '/admin/v1/openapi.json';
const OPERATOR_PREFIX = '/admin/v1/';

const packageJson = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as {
  license?: string;
};

const PARTNER_TAGS = [
  { name: 'Users', description: 'Your clients: the users of your tenant.' },
  { name: 'Plans', description: 'Your plan catalog.' },
  { name: 'Subscriptions', description: 'Users’ subscriptions to your plans.' },
  {
    name: 'Top-ups',
    description: 'Minutes users buy beyond their plan’s, charged or recorded for your invoicing.',
  },
  {
    name: 'Usage',
    description: 'A user’s month: minutes included, used, topped up and overage, calls, amounts due.',
  },
  { name: 'Agents', description: 'Your voice agents: drafts, published versions, webhooks, call controls.' },
  { name: 'Do-not-call', description: 'Numbers no call of your tenant is placed to.' },
  {
    name: 'Events',
    description: 'Signed webhooks telling your systems what happened, and their delivery log.',
  },
  { name: 'Webhooks', description: 'The per-agent call-trigger webhook; the URL is the credential.' },
  {
    name: 'Audit log',
    description:
      'Who changed what in your tenant: API keys, console members and the operator, kept 400 days.',
  },
  {
    name: 'User sessions',
    description:
      'For your own dashboard: your users sign in with their email and password and act with a session token (`/auth/v1`), never with your API key.',
  },
];

/** Operator routes are grouped by the resource their path names (first match wins). */
const OPERATOR_TAGS: [RegExp, string, string][] = [
  [/\/api-keys/, 'API keys', 'Partner API keys of a tenant.'],
  [/\/agents/, 'Agents', 'Voice agents, their published versions and webhooks.'],
  [/\/plans/, 'Plans', 'A tenant’s plan catalog.'],
  [/\/emails/, 'Emails', 'A tenant’s outgoing emails.'],
  [/\/credits/, 'Credits', 'Users’ calling credits.'],
  [/\/payment-method/, 'Payment methods', 'Users’ cards on file with the processor.'],
  [/\/calls/, 'Calls', 'Calls placed by agents.'],
  [/\/users/, 'Users', 'Users of any tenant.'],
  [/\/tenants/, 'Tenants', 'Partner agencies.'],
  [/\/audit-events/, 'Audit log', 'Every write by the operator, console members, API keys and the CLI.'],
];

const header = (description: string, schema: Record<string, unknown> = { type: 'string' }) => ({
  ...schema,
  description,
});

const REQUEST_ID = header(
  'Identifies this request (equals `request_id` in error answers). A request may send its own, up to 128 printable characters.',
  { type: 'string', examples: ['req_8fJ2kLmN0pQrStUv'] },
);
const LOCATION = header('URL of the created resource.', {
  type: 'string',
  format: 'uri',
  examples: ['https://api.example.com/api/v1/users/usr_3kTmd8Qw1ZbXcV5nR7pL2yHs'],
});
const REPLAYED = header(
  'Present when this answer is the stored answer of an earlier request with the same Idempotency-Key.',
  { type: 'string', enum: ['true'] },
);
const RETRY_AFTER = header('Whole seconds to wait before retrying.', {
  type: 'integer',
  minimum: 1,
  examples: [1],
});

/** Statuses an idempotent route replays from its record (core/idempotency/store.ts isStorableAnswer). */
const REPLAYABLE = /^(2..|404|409|422)$/;

/** The headers each answer of a route carries, as the document declares them. */
function withHeaders(route: RouteOptions, response: Record<string, TSchema>) {
  const documented: Record<string, TSchema> = {};
  for (const [status, schema] of Object.entries(response)) {
    const headers: Record<string, unknown> = { 'X-Request-Id': REQUEST_ID, ...(schema.headers ?? {}) };
    if (status === '201') headers.Location ??= LOCATION;
    if (route.config?.idempotent && REPLAYABLE.test(status)) headers['Idempotent-Replayed'] ??= REPLAYED;
    if ((status === '409' && route.config?.idempotent) || status === '503' || status === '429')
      headers['Retry-After'] ??= RETRY_AFTER;
    const narrowed =
      Number(status) >= 400 && schema.$ref === 'ErrorEnvelope'
        ? {
            description: schema.description,
            ...documentedErrorSchema(Number(status), schema['x-error-codes']),
          }
        : schema;
    documented[status] = { ...narrowed, headers };
  }
  return documented;
}

function operatorTag(url: string): string {
  return (
    OPERATOR_TAGS.find(([pattern]) => pattern.test(url.slice(OPERATOR_PREFIX.length - 1)))?.[1] ?? 'Tenants'
  );
}

/** `get /admin/v1/tenants/{id}/emails` → getTenantEmails-like ids, unique per method and path. */
function operatorOperationId(method: string, url: string): string {
  const words = url
    .slice(OPERATOR_PREFIX.length)
    .split('/')
    .map((part) => (part.startsWith(':') ? `By${part.slice(1, 2).toUpperCase()}${part.slice(2)}` : part))
    .flatMap((part) => part.split('-'))
    .map((word) => word.charAt(0).toUpperCase() + word.slice(1));
  return `${method.toLowerCase()}${words.join('')}`;
}

export async function registerOpenApi(
  app: FastifyInstance,
  options: {
    publicBaseUrl: string;
    keyPrefix: string;
    scopes: readonly string[];
    /** The platform's name (the operator's brand) in the documents' and the page's titles. */
    platformName?: () => string;
  },
) {
  const guide: GuideOptions = { productName: PRODUCT_NAME, ...options };
  const platformName = options.platformName ?? (() => PRODUCT_NAME);
  /** The document with the platform's current name in its title and introduction. */
  const titled = (document: unknown, what: string, introduction: (guide: GuideOptions) => string) => {
    const { info, ...rest } = document as { info: Record<string, unknown> };
    const productName = platformName();
    const description = introduction({ ...guide, productName });
    return { ...rest, info: { ...info, title: `${productName} ${what}`, description } };
  };
  app.addSchema({ ...ErrorEnvelope, $id: 'ErrorEnvelope' });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: { title: PRODUCT_NAME, version: '1.0' },
      servers: [{ url: options.publicBaseUrl }],
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description: `API key \`${options.keyPrefix}_<live|test>_<32 characters>\` issued from the tenant dashboard. Each operation lists the scope it requires.`,
          },
          userSession: {
            type: 'http',
            scheme: 'bearer',
            description: 'A user’s session token from `POST /auth/v1/sessions` (valid 7 days).',
          },
          adminToken: {
            type: 'http',
            scheme: 'bearer',
            description: 'The ADMIN_TOKEN the server was started with.',
          },
        },
      },
    },
    hideUntagged: true,
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) || `schema${i}`,
    },
    transform({ schema, url, route }) {
      if (!schema || schema.hide) return { schema, url };
      if (url.startsWith(OPERATOR_PREFIX)) {
        // Operator routes declare only their success; the document names the errors they share.
        const errors = errorResponses(
          400,
          401,
          422,
          500,
          503,
          ...(url.includes('/:') ? [404] : []),
          ...(route.method === 'GET' ? [] : [409]),
        );
        return {
          schema: {
            ...schema,
            response: withHeaders(route, { ...errors, ...(schema.response as Record<string, TSchema>) }),
            tags: [operatorTag(url)],
            operationId: schema.operationId ?? operatorOperationId(String(route.method), url),
            summary: schema.summary ?? `${route.method} ${url.slice(OPERATOR_PREFIX.length - 1)}`,
            security: [{ adminToken: [] }],
          } as typeof schema,
          url,
        };
      }
      const scope = route.config?.scope;
      const response = schema.response
        ? withHeaders(route, schema.response as Record<string, TSchema>)
        : undefined;
      return {
        schema: {
          ...schema,
          response,
          ...(scope
            ? {
                security: [{ apiKey: [scope] }],
                description: `${schema.description ?? ''}\n\nRequired scope: \`${scope}\`.`.trim(),
              }
            : {}),
        } as typeof schema,
        url,
      };
    },
  });

  const license = packageJson.license
    ? { name: packageJson.license, identifier: packageJson.license }
    : undefined;
  let documents: { partner: unknown; operator: unknown } | undefined;
  // Built once, on first request: every route is registered by then and none is added later.
  const documentsOnce = () => {
    if (documents) return documents;
    const full = refineDocument(app.swagger());
    documents = {
      partner: selectDocument(full, {
        include: (path) => !path.startsWith(OPERATOR_PREFIX),
        info: {
          title: `${PRODUCT_NAME} partner API`,
          version: '1.0',
          description: partnerGuide(guide),
          ...(license ? { license } : {}),
        },
        tags: PARTNER_TAGS,
        securitySchemes: ['apiKey', 'userSession'],
      }),
      operator: selectDocument(full, {
        include: (path) => path.startsWith(OPERATOR_PREFIX),
        info: {
          title: `${PRODUCT_NAME} operator API`,
          version: '1.0',
          description: operatorGuide(guide),
          ...(license ? { license } : {}),
        },
        tags: OPERATOR_TAGS.map(([, name, description]) => ({ name, description })),
        securitySchemes: ['adminToken'],
      }),
    };
    return documents;
  };
  app.get(PARTNER_DOCUMENT_URL, { schema: { hide: true } }, async () =>
    titled(documentsOnce().partner, 'partner API', partnerGuide),
  );
  app.get(OPERATOR_DOCUMENT_URL, { schema: { hide: true } }, async () =>
    titled(documentsOnce().operator, 'operator API', operatorGuide),
  );

  await app.register(apiReference, {
    routePrefix: '/docs',
    // The plugin also adds /docs/openapi.{json,yaml}, copies that fail for a document given by
    // URL: answer them as the unknown routes they are, so the one document stays the one copy.
    hooks: {
      onRequest: (request, reply, done) => {
        if (/\/openapi\.(json|yaml)$/.test(request.url.split('?')[0])) noRoute(request, reply);
        else done();
      },
    },
    configuration: {
      url: PARTNER_DOCUMENT_URL,
      // The page's own title is read once (the name at start); the documents' titles follow changes.
      pageTitle: `${platformName()} API reference`,
      metaData: { title: `${platformName()} API reference` },
      // The default fonts come from a CDN; the page must work offline.
      withDefaultFonts: false,
      hideClientButton: true,
      defaultOpenAllTags: true,
      // Nothing leaves the page but "try it" requests to this API: no AI agent (it calls Scalar's
      // registry), no telemetry, no developer toolbar.
      agent: { disabled: true },
      telemetry: false,
      showDeveloperTools: 'never',
      authentication: { preferredSecurityScheme: 'apiKey' },
      defaultHttpClient: { targetKey: 'shell', clientKey: 'curl' },
      customCss: REFERENCE_CSS,
    },
  });
}

/** One accent colour and system fonts (no web fonts to fetch). */
const REFERENCE_CSS = `
:root, .light-mode, .dark-mode {
  --scalar-font: system-ui, -apple-system, 'Segoe UI', Roboto, sans-serif;
  --scalar-font-code: ui-monospace, 'SFMono-Regular', Menlo, Consolas, monospace;
}
.light-mode { --scalar-color-accent: #4f46e5; }
.dark-mode { --scalar-color-accent: #818cf8; }
`;
