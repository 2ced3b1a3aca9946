/**
 * Property-based fuzzing of every route (partner, operator, sessions, operations; discovered from
 * the app): random JSON bodies, raw bodies, query strings, path parameters and headers, sent with
 * valid credentials so they reach validation and the handlers. Whatever is sent:
 * - the answer is never a 5xx, and every error is the envelope with the request id;
 * - a refused request (4xx) stores nothing: a fingerprint of every table is unchanged, except
 *   the Idempotency-Key record of answers docs/design-choices.md says are stored (404, 409 conflict,
 *   422 unprocessable_entity).
 */
import fc from 'fast-check';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  ADMIN_TOKEN,
  createPlan,
  createTenant,
  createUser,
  SCOPES,
  startTestApp,
  type TestApp,
  type TestTenant,
} from '../support/app.js';
import {
  exampleValue,
  fillPath,
  listRoutes,
  type PartnerOperation,
  partnerOperations,
  type RouteInfo,
  toOpenApiPath,
  withoutRateLimits,
} from './routes.js';

const TOTAL_RUNS = Number(process.env.FUZZ_RUNS ?? 320);

const t: TestApp = await startTestApp({ env: { LOG_LEVEL: 'warn' }, adapters: withoutRateLimits });
const operations = await partnerOperations(t);
// The console, the client portal and the operator console answer HTML pages (not the envelope)
// and refuse every forged form by their CSRF checks: their own suites (test/console, test/portal,
// test/operator) cover them.
const routes = listRoutes(t.app).filter(
  (r) =>
    r.path !== '/api/v1/openapi.json' &&
    !r.path.startsWith('/console') &&
    !r.path.startsWith('/portal') &&
    !r.path.startsWith('/operator'),
);
afterAll(() => t.close());

let a: TestTenant;
let b: TestTenant;
let sessionToken: string;
/** A key of tenant A that the fuzzer never sees (it may revoke every key whose id it knows). */
let requestKey: string;
const ids: string[] = [];

beforeAll(async () => {
  a = await createTenant(t, { name: 'Fuzz A' });
  b = await createTenant(t, { name: 'Fuzz B' });
  const email = `fuzz.${Date.now()}@example.com`;
  for (const tenant of [a, b]) {
    ids.push(tenant.id, tenant.keyId, (await createUser(tenant)).id, (await createPlan(t, tenant.id)).id);
    ids.push((await createPlan(t, tenant.id, { provider: 'processor', name: 'Card' })).id);
    // A phone number of each tenant (the simulated engine holds it), for /phone-numbers/{phone_number}.
    const phone = `+1415${String(Math.floor(Math.random() * 1e6)).padStart(6, '0')}1`;
    const imported = await t.admin('POST', '/admin/v1/phone-numbers', {
      phone_number: phone,
      tenant_id: tenant.id,
    });
    if (imported.status !== 201) throw new Error(`could not import a number to fuzz: ${imported.raw}`);
    ids.push(phone);
  }
  // The session user stays out of the id pool, so its token keeps working.
  await createUser(a, { email, password: 'fuzz-password' });
  requestKey = (await t.admin('POST', `/admin/v1/tenants/${a.id}/api-keys`, { scopes: SCOPES })).body.data
    .key;
  const session = await t.inject({
    method: 'POST',
    url: '/auth/v1/sessions',
    headers: { 'content-type': 'application/json' },
    payload: JSON.stringify({ tenant_id: a.id, email, password: 'fuzz-password' }),
  });
  sessionToken = session.body.data.token;
});

/** A fingerprint (row count and content hash) of every table. */
let tableNames: Promise<{ table_name: string }[]> | undefined;

async function fingerprint(): Promise<Record<string, string>> {
  // The tables do not change during the run: read their names once.
  tableNames ??= sql<{ table_name: string }>`
    SELECT table_name FROM information_schema.tables
    WHERE table_schema = 'public' AND table_type = 'BASE TABLE' AND table_name <> 'schema_migrations'
    ORDER BY table_name`
    .execute(t.services.database.db)
    .then((result) => result.rows);
  const parts = (await tableNames).map(
    ({ table_name: name }) =>
      // Without api_keys.last_used_at: a refused request still authenticated its key, and says so.
      sql`SELECT ${name}::text AS name, count(*)::text || ':' || md5(coalesce(string_agg((to_jsonb(x) - 'last_used_at')::text, '|' ORDER BY (to_jsonb(x) - 'last_used_at')::text), '')) AS print FROM ${sql.table(name)} x`,
  );
  const result = await sql<{ name: string; print: string }>`${sql.join(parts, sql` UNION ALL `)}`.execute(
    t.services.database.db,
  );
  return Object.fromEntries(result.rows.map((row) => [row.name, row.print]));
}

// Field names of every body and query schema the service knows, so random objects often hit
// real fields; plus arbitrary names.
const KNOWN_FIELDS = [
  ...new Set([
    ...operations.flatMap((op) => [...Object.keys(op.body?.properties ?? {}), ...Object.keys(op.query)]),
    ...[
      'name',
      'email',
      'smtp_url',
      'from',
      'scopes',
      'env',
      'expires_at',
      'status',
      'minutes',
      'reason',
      'token',
    ],
    ...[
      'tenant_id',
      'password',
      'phone',
      'provider',
      'currency',
      'monthly_price',
      'annual_price',
      'included_minutes',
    ],
    ...[
      'overage_rate',
      'topup_rate',
      'trial_period_days',
      'active',
      'description',
      'user_id',
      'plan_id',
      'phone_number',
    ],
    ...[
      'prompt',
      'welcome_message',
      'page',
      'limit',
      'search',
      'sort_by',
      'sort_order',
      'agent_id',
      'rate_limit',
      '__proto__',
      'constructor',
    ],
  ]),
];

/** Lone surrogates replaced (they cannot be URL-encoded). */
const wellFormed = (s: string) =>
  s.replace(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/g, '\ufffd');
const encode = (s: string) => encodeURIComponent(wellFormed(s));

/** One of the ids created in beforeAll (resolved lazily: the arbitraries are built before). */
const knownIdArb = fc.nat().map((i) => ids[i % Math.max(1, ids.length)] ?? 'usr_x');

const stringArb = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.string({ unit: 'grapheme', maxLength: 20 }),
  fc.constantFrom(
    '',
    ' ',
    'null',
    'true',
    '0',
    '-1',
    '1.5',
    '1e3',
    '9007199254740993',
    '99999999999999999999999',
    'a@b.co',
    'A@EXAMPLE.COM',
    'not-an-email',
    '+14155550123',
    '+1',
    'usd',
    'USD',
    'pm_card_visa',
    'processor',
    'agency',
    'active',
    'blocked',
    'pending',
    'users:read',
    'live',
    'test',
    '2026-01-01T00:00:00.000Z',
    '2000-01-01T00:00:00Z',
    'smtp://user:pass@localhost:2525',
    "'; DROP TABLE users; --",
    '%_\\',
    '\u0000',
    '\ud800',
    '𝕏'.repeat(70),
  ),
  fc.nat({ max: 3000 }).map((n) => 'x'.repeat(n)),
  knownIdArb,
);

const scalarArb = fc.oneof(
  stringArb,
  fc.integer(),
  fc.constantFrom(0, -1, 1, 2 ** 31, 2 ** 53, -(2 ** 53), 1e21, 1e308, -0, 0.5, 730, 731, 10_000_001),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.boolean(),
  fc.constant(null),
);

const valueArb: fc.Arbitrary<unknown> = fc.oneof(
  { weight: 4, arbitrary: scalarArb },
  { weight: 1, arbitrary: fc.array(scalarArb, { maxLength: 4 }) },
  { weight: 1, arbitrary: fc.dictionary(fc.constantFrom(...KNOWN_FIELDS), scalarArb, { maxKeys: 3 }) },
  { weight: 1, arbitrary: fc.jsonValue({ maxDepth: 3 }) },
);

const objectArb = fc.dictionary(
  fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...KNOWN_FIELDS) }, fc.string({ maxLength: 12 })),
  valueArb,
  {
    maxKeys: 8,
  },
);

type Body =
  | { kind: 'json'; value: unknown }
  | { kind: 'raw'; text: string; contentType: string }
  | { kind: 'none' };

function bodyArb(op: PartnerOperation | undefined): fc.Arbitrary<Body> {
  const options: fc.Arbitrary<Body>[] = [
    objectArb.map((value) => ({ kind: 'json', value })),
    fc.jsonValue({ maxDepth: 4 }).map((value) => ({ kind: 'json', value })),
    fc
      .tuple(
        fc.constantFrom('{', '{"a":', 'nul', '[1,', '{"email": "a@b.co",}', '\u0000', '{"a":1}{"b":2}', ''),
        fc.constantFrom(
          'application/json',
          'text/plain',
          'application/x-www-form-urlencoded',
          'application/json; charset=utf-8',
        ),
      )
      .map(([text, contentType]) => ({ kind: 'raw', text, contentType })),
    fc.constant({ kind: 'none' }),
  ];
  if (op?.body) {
    // A valid body with fields replaced, removed or added: gets past most checks.
    const base = exampleValue(op.body, '', {}) as Record<string, unknown>;
    options.push(
      fc
        .tuple(
          fc.dictionary(fc.constantFrom(...KNOWN_FIELDS), valueArb, { maxKeys: 2 }),
          fc.subarray(Object.keys(base)),
        )
        .map(([changes, removed]) => {
          const value: Record<string, unknown> = { ...(exampleValue(op.body, '', {}) as object) };
          // exampleValue() fills required fields only: add optional ones up to minProperties.
          for (const name of Object.keys(op.body.properties ?? {})) {
            if (Object.keys(value).length >= (op.body.minProperties ?? 0)) break;
            if (!(name in value)) value[name] = exampleValue(op.body.properties[name], name, {});
          }
          Object.assign(value, changes);
          for (const field of removed) delete value[field];
          return { kind: 'json', value };
        }),
    );
  }
  return fc.oneof(...options);
}

const queryValueArb = fc.oneof(
  stringArb,
  fc.integer().map(String),
  fc.constantFrom(
    '1',
    '100',
    '101',
    '0',
    '-1',
    '1.0',
    '1e2',
    '0x10',
    ' 1',
    '9007199254740991',
    '9007199254740992',
    'true',
    'false',
  ),
);

function queryArb(op: PartnerOperation | undefined): fc.Arbitrary<string> {
  const names = [...Object.keys(op?.query ?? {}), 'page', 'limit', 'user_id', 'status'];
  const pairs = fc.array(
    fc.tuple(
      fc.oneof({ weight: 4, arbitrary: fc.constantFrom(...names) }, fc.string({ maxLength: 10 })),
      queryValueArb,
    ),
    {
      maxLength: 6,
    },
  );
  return fc.oneof(
    {
      weight: 5,
      arbitrary: pairs.map((list) => list.map(([k, v]) => `${encode(k)}=${encode(v)}`).join('&')),
    },
    {
      weight: 1,
      arbitrary: fc.constantFrom(
        '%',
        '%zz',
        'a[b]=1',
        'page[]=1&page[]=2',
        '&&==&',
        'limit',
        '=1',
        'search=%00',
      ),
    },
  );
}

const pathParamArb = fc.oneof(
  { weight: 3, arbitrary: knownIdArb },
  { weight: 2, arbitrary: stringArb.filter((s) => s.length > 0).map(wellFormed) },
  { weight: 1, arbitrary: fc.stringMatching(/^[0-9A-Za-z]{24}$/).map((s) => `usr_${s}`) },
);

function credentialFor(route: RouteInfo): string | undefined {
  if (route.path.startsWith('/admin/v1/')) return ADMIN_TOKEN;
  if (route.path.startsWith('/auth/v1/')) return sessionToken;
  return requestKey;
}

// Answers that mean the request executed and, with an Idempotency-Key, was legitimately stored.
const STORED_ERRORS = new Set(['not_found', 'conflict', 'unprocessable_entity']);

describe('fuzzing every route', () => {
  it('discovers partner and operator routes', () => {
    expect(routes.some((r) => r.path.startsWith('/admin/v1/'))).toBe(true);
    expect(routes.some((r) => r.path.startsWith('/api/v1/'))).toBe(true);
  });

  const runsPerRoute = Math.max(8, Math.ceil(TOTAL_RUNS / Math.max(1, routes.length)));

  it.each(routes.map((r) => [`${r.method} ${r.path}`, r] as const))(
    '%s: no 5xx, envelope on errors, nothing stored by refused requests',
    async (_name, route) => {
      const op = operations.find((o) => o.method === route.method && o.path === toOpenApiPath(route.path));
      const paramNames = [...route.path.matchAll(/:(\w+)/g)].map((m) => m[1]);
      await fc.assert(
        fc.asyncProperty(
          fc.array(pathParamArb, { minLength: paramNames.length, maxLength: paramNames.length }),
          queryArb(op),
          bodyArb(op),
          fc.option(
            fc.oneof(
              fc.string({ maxLength: 300 }),
              fc.constantFrom('k1', 'k1', 'k2', '\u00e9t\u00e9', 'x'.repeat(256)),
            ),
            { freq: 3 },
          ),
          async (params, query, body, idempotencyKey) => {
            const url = `${fillPath(route.path, Object.fromEntries(paramNames.map((n, i) => [n, params[i]])))}${query ? `?${query}` : ''}`;
            const headers: Record<string, string> = {};
            const credential = credentialFor(route);
            if (credential) headers.authorization = `Bearer ${credential}`;
            if (idempotencyKey !== null) headers['idempotency-key'] = idempotencyKey;
            let payload: string | undefined;
            if (body.kind === 'json') {
              payload = JSON.stringify(body.value);
              headers['content-type'] = 'application/json';
            } else if (body.kind === 'raw') {
              payload = body.text;
              headers['content-type'] = body.contentType;
            }
            // A tenant rate limit the fuzzer set on an earlier run would turn the rest into 429s.
            await t.services.database.db
              .updateTable('tenants')
              .set({ rate_limit_per_second: null, rate_limit_burst: null })
              .execute();
            // A read never stores anything, refused or not: only writes are fingerprinted (two
            // passes over every table per request are most of this suite's time).
            const writes = route.method !== 'GET';
            const before = writes ? await fingerprint() : {};
            let response: Awaited<ReturnType<TestApp['inject']>>;
            try {
              response = await t.inject({ method: route.method as any, url, headers, payload });
            } catch (error) {
              // light-my-request refuses some header values itself (e.g. control characters): not the app's concern.
              if (
                /Invalid character in header|ERR_INVALID_CHAR|ERR_HTTP_INVALID_HEADER_VALUE/.test(
                  String(error),
                )
              )
                return;
              throw error;
            }
            const context = `${route.method} ${url}\n${payload ?? ''}\n-> ${response.status} ${response.raw.slice(0, 500)}`;
            expect(response.status, context).toBeLessThan(500);
            if (response.status < 400) return;
            expect(response.body?.error?.code, context).toEqual(expect.any(String));
            expect(response.body.request_id, context).toBe(response.headers['x-request-id']);
            if (!writes) return;
            const after = await fingerprint();
            if (idempotencyKey !== null && STORED_ERRORS.has(response.body.error.code)) {
              delete before.idempotency_keys;
              delete after.idempotency_keys;
            }
            expect(after, `a refused request changed stored data: ${context}`).toEqual(before);
          },
        ),
        { numRuns: runsPerRoute, endOnFailure: false },
      );
    },
  );

  // Once bugs: the router's own answers and U+0000 (which PostgreSQL text cannot hold).
  it.each([
    ['a path parameter over 500 characters', 'GET', `/api/v1/users/${'x'.repeat(501)}`, undefined],
    ['a malformed percent-encoding in the path', 'GET', '/api/v1/users/%zz', undefined],
    [
      'U+0000 in a body string',
      'POST',
      '/api/v1/users',
      { email: 'nul@example.com', name: 'a\u0000b', password: '12345678' },
    ],
    ['U+0000 in a query parameter', 'GET', '/api/v1/users?search=%00', undefined],
    ['U+0000 in a path parameter', 'GET', '/api/v1/users/usr_%00', undefined],
  ])('%s answers a 4xx in the envelope with X-Request-Id', async (_label, method, url, body) => {
    const response = await t.partner(requestKey, method as 'GET', url as string, body);
    expect(response.status, response.raw).toBeGreaterThanOrEqual(400);
    expect(response.status, response.raw).toBeLessThan(500);
    expect(response.body?.error?.code).toEqual(expect.any(String));
    expect(response.body.request_id).toBe(response.headers['x-request-id']);
  });
});
