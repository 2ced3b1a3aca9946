/**
 * The OpenAPI document tells the truth: real answers of every partner endpoint, success and error,
 * validate against the document's response schemas; every operation declares its scope and errors.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { codeToStatus, type ErrorCode } from '../../src/core/errors.js';
import {
  createPlan,
  createTenant,
  createUser,
  SCOPES,
  startTestApp,
  type TestApp,
  type TestResponse,
  type TestTenant,
} from '../support/app.js';

const addFormats = ((addFormatsModule as any).default ?? addFormatsModule) as (ajv: Ajv2020) => Ajv2020;
const METHODS = ['get', 'post', 'put', 'patch', 'delete'] as const;

let t: TestApp;
let a: TestTenant;
let doc: any;
let ajv: Ajv2020;

interface Operation {
  path: string;
  method: (typeof METHODS)[number];
  op: any;
}
let operations: Operation[];

const pointer = (...parts: string[]) =>
  parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');

/** Asserts the answer is declared for the operation and matches its schema. */
function expectDocumented(path: string, method: string, response: TestResponse) {
  const responses = doc.paths[path]?.[method]?.responses;
  expect(responses, `${method} ${path} is in the document`).toBeTruthy();
  const declared = responses[String(response.status)];
  expect(declared, `${method} ${path} declares ${response.status}`).toBeTruthy();
  const ref = `openapi.json#/${pointer('paths', path, method, 'responses', String(response.status), 'content', 'application/json', 'schema')}`;
  const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
  const ok = validate(response.body);
  expect(
    ok,
    `${method} ${path} ${response.status}: ${JSON.stringify(validate.errors)}\n${response.raw}`,
  ).toBe(true);
}

beforeAll(async () => {
  t = await startTestApp();
  a = await createTenant(t);
  const response = await t.inject({ method: 'GET', url: '/api/v1/openapi.json' });
  expect(response.status).toBe(200);
  doc = response.body;
  ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema(doc, 'openapi.json');
  operations = Object.entries<any>(doc.paths)
    .filter(([path]) => path.startsWith('/api/v1/'))
    .flatMap(([path, item]) =>
      METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] })),
    );
});
afterAll(() => t.close());

const webhookOperations = (): Operation[] =>
  Object.entries<any>(doc.paths)
    .filter(([path]) => path.startsWith('/webhooks/'))
    .map(([path, item]) => ({ path, method: 'post', op: item.post }));

describe('the document', () => {
  it('is OpenAPI 3.1 with the bearer scheme and the partner operations', () => {
    expect(doc.openapi).toMatch(/^3\.1\./);
    expect(doc.components.securitySchemes.apiKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    const ids = operations.map((o) => o.op.operationId);
    for (const id of ['listUsers', 'getUser', 'createUser', 'deleteUser', 'listPlans', 'getPlan'])
      expect(ids).toContain(id);
    expect(new Set(ids).size).toBe(ids.length);
    expect(Object.keys(doc.paths).some((p) => p.startsWith('/admin/'))).toBe(false);
  });

  it('every partner operation requires its scope and declares its errors in the envelope', () => {
    for (const { path, method, op } of operations) {
      const where = `${method} ${path}`;
      expect(op.security, where).toHaveLength(1);
      const scopes = op.security[0].apiKey;
      expect(scopes, where).toHaveLength(1);
      expect(SCOPES, where).toContain(scopes[0]);
      for (const status of ['401', '403', '429', '500', '503']) {
        const schema = op.responses[status]?.content?.['application/json']?.schema;
        expect(schema, `${where} declares ${status}`).toBeTruthy();
        expect(schema.allOf?.[0]?.$ref, `${where} ${status} is the envelope`).toMatch(/ErrorEnvelope/);
      }
      const success = Object.keys(op.responses).filter((s) => s.startsWith('2'));
      expect(success.length, where).toBeGreaterThan(0);
      expect(op.summary, where).toBeTruthy();
    }
  });

  it('documents the Location and Idempotent-Replayed headers of POST /users, and describes each success', () => {
    const created = doc.paths['/api/v1/users'].post.responses['201'];
    expect(Object.keys(created.headers)).toEqual(expect.arrayContaining(['Location', 'Idempotent-Replayed']));
    for (const { path, method, op } of operations.filter((o) => /\/(users|plans)/.test(o.path))) {
      for (const [status, response] of Object.entries<any>(op.responses)) {
        if (status.startsWith('2'))
          expect(response.description, `${method} ${path} ${status}`).not.toBe('Default Response');
      }
    }
  });

  it('/docs is our reference, reading the one document, with no second copy and nothing from a CDN', async () => {
    const redirect = await t.inject({ method: 'GET', url: '/docs' });
    expect(redirect.status).toBe(301);
    expect(redirect.headers.location).toBe('/docs/');
    const page = await t.inject({ method: 'GET', url: '/docs/' });
    expect(page.status).toBe(200);
    expect(page.headers['content-type']).toMatch(/text\/html/);
    expect(page.raw).toMatch(/<title>voiceplane API reference<\/title>/);
    expect(page.raw).toContain('/api/v1/openapi.json');
    // Every URL the page loads is relative to this server (the XML namespace of inline SVG aside).
    const external = [...page.raw.matchAll(/(?:src|href|url)\s*[=(:]\s*["'`]?(https?:\/\/[^"'`)\s]+)/g)].map(
      (m) => m[1],
    );
    expect(external).toEqual([]);
    const script = await t.inject({ method: 'GET', url: '/docs/js/scalar.js' });
    expect(script.status).toBe(200);
    expect(script.headers['content-type']).toMatch(/javascript/);
    for (const url of ['/docs/json', '/docs/yaml', '/docs/openapi.json', '/docs/openapi.yaml'])
      expect((await t.inject({ method: 'GET', url })).status, url).toBe(404);
  });
});

/** Every schema object in the document, with where it is. */
function* schemasOf(node: any, where: string[] = []): Generator<[any, string]> {
  if (Array.isArray(node)) {
    for (const [i, item] of node.entries()) yield* schemasOf(item, [...where, String(i)]);
  } else if (node && typeof node === 'object') {
    yield [node, where.join('/')];
    for (const [key, value] of Object.entries(node))
      if (key !== 'example' && key !== 'examples') yield* schemasOf(value, [...where, key]);
  }
}

describe('the document as tools read it', () => {
  it('enums are one enum, never anyOf of single values', () => {
    for (const [node, where] of schemasOf(doc)) {
      if (!Array.isArray(node.anyOf)) continue;
      const singles = node.anyOf.filter((b: any) => b.const !== undefined || b.enum?.length === 1);
      expect(singles.length, `${where} is a union of literals`).toBe(0);
    }
    const sortOrder = doc.paths['/api/v1/plans'].get.parameters.find((p: any) => p.name === 'sort_order');
    expect(sortOrder.schema).toMatchObject({ type: 'string', enum: ['asc', 'desc'], default: 'desc' });
    expect(doc.components.schemas.SubscriptionStatus.enum).toContain('past_due');
  });

  it('parameters with a default are optional; every parameter is described with an example', () => {
    for (const { path, method, op } of operations) {
      for (const parameter of op.parameters ?? []) {
        const where = `${method} ${path} ${parameter.in} ${parameter.name}`;
        if (parameter.schema.default !== undefined) expect(parameter.required, where).toBe(false);
        expect(parameter.description, where).toBeTruthy();
        // An id (`usr_…`), or an E.164 number where the number is the key (the do-not-call list).
        if (parameter.in === 'path')
          expect(parameter.example, where).toMatch(/^([a-z]+_[A-Za-z0-9]+|\+[1-9][0-9]{6,14})$/);
      }
    }
    const listPlans = doc.paths['/api/v1/plans'].get.parameters;
    expect(listPlans.filter((p: any) => p.required)).toEqual([]);
  });

  it('the shapes are named components, referenced by $ref', () => {
    const names = Object.keys(doc.components.schemas);
    for (const name of [
      'User',
      'CreatedUser',
      'Plan',
      'Subscription',
      'Pagination',
      'QueuedCall',
      'ErrorCode',
    ])
      expect(names).toContain(name);
    const listUsers = doc.paths['/api/v1/users'].get.responses['200'].content['application/json'].schema;
    expect(listUsers.properties.data.items.$ref).toBe('#/components/schemas/User');
    expect(listUsers.properties.pagination.$ref).toBe('#/components/schemas/Pagination');
    const plan = doc.components.schemas.Plan;
    expect(plan.properties.provider.$ref).toBe('#/components/schemas/PlanProvider');
  });

  it('each error response publishes its codes and an example of its own', () => {
    const statusOf = (code: string) =>
      code === 'invalid_request' ? [400, 413, 415] : [codeToStatus[code as ErrorCode]];
    for (const { path, method, op } of operations.concat(webhookOperations())) {
      for (const [status, response] of Object.entries<any>(op.responses)) {
        if (Number(status) < 400) continue;
        const where = `${method} ${path} ${status}`;
        const media = response.content['application/json'];
        const codes: string[] = media.schema.allOf[1].properties.error.properties.code.enum;
        expect(codes.length, where).toBeGreaterThan(0);
        for (const code of codes) expect(statusOf(code), `${where} ${code}`).toContain(Number(status));
        expect(codes, where).toContain(media.example.error.code);
        expect(media.example.request_id, where).toMatch(/^req_/);
      }
    }
    const webhook409 = doc.paths['/webhooks/agents/{agentWebhookId}/trigger'].post.responses['409'];
    expect(
      webhook409.content['application/json'].schema.allOf[1].properties.error.properties.code.enum,
    ).toEqual([
      'agent_not_published',
      'agent_unavailable',
      'do_not_call',
      'conflict',
      'idempotency_key_reuse',
    ]);
    const examples = ['401', '404', '429'].map(
      (s) => doc.paths['/api/v1/users/{id}'].get.responses[s].content['application/json'].example.error.code,
    );
    expect(examples).toEqual(['authentication_failed', 'not_found', 'rate_limited']);
  });

  it('declares the headers answers carry', () => {
    for (const { path, method, op } of operations) {
      for (const [status, response] of Object.entries<any>(op.responses)) {
        const where = `${method} ${path} ${status}`;
        expect(Object.keys(response.headers ?? {}), where).toEqual(
          expect.arrayContaining([
            'X-Request-Id',
            'RateLimit-Limit',
            'RateLimit-Remaining',
            'RateLimit-Reset',
          ]),
        );
        if (status === '429') expect(response.headers, where).toHaveProperty('Retry-After');
        if (status === '201') expect(response.headers, where).toHaveProperty('Location');
      }
    }
    for (const [path, method] of [
      ['/api/v1/users', 'post'],
      ['/api/v1/subscriptions', 'post'],
      ['/api/v1/subscriptions/{id}/plan', 'patch'],
      ['/api/v1/calls', 'post'],
      ['/webhooks/agents/{agentWebhookId}/trigger', 'post'],
    ]) {
      const responses = doc.paths[path][method].responses;
      const success = Object.keys(responses).find((s) => s.startsWith('2'))!;
      expect(responses[success].headers, `${method} ${path}`).toHaveProperty('Idempotent-Replayed');
      expect(responses['409'].headers, `${method} ${path}`).toHaveProperty('Retry-After');
    }
  });

  it('examples are realistic: every scalar has one, and the license is named', () => {
    for (const [node, where] of schemasOf(doc.components)) {
      if (!['string', 'integer', 'number'].includes(node.type) || node.enum || node.const !== undefined)
        continue;
      if (/\/properties\/(error|request_id)\/properties\/(message|details)$/.test(where)) continue;
      expect(node.examples ?? node.default, `${where} has an example`).toBeDefined();
      expect(node.examples?.[0], where).not.toBe('string');
    }
    expect(doc.info.license).toMatchObject({ name: expect.any(String), identifier: expect.any(String) });
  });
});

describe('the operator document', () => {
  it('documents /admin/v1 apart from the partner document', async () => {
    const response = await t.inject({ method: 'GET', url: '/admin/v1/openapi.json' });
    expect(response.status).toBe(200);
    const operator = response.body;
    const paths = Object.keys(operator.paths);
    expect(paths.length).toBeGreaterThan(10);
    expect(paths.every((p) => p.startsWith('/admin/v1/'))).toBe(true);
    expect(paths).toContain('/admin/v1/tenants');
    expect(Object.keys(operator.components.securitySchemes)).toEqual(['adminToken']);
    const ids = new Set<string>();
    for (const item of Object.values<any>(operator.paths)) {
      for (const op of Object.values<any>(item)) {
        expect(op.security).toEqual([{ adminToken: [] }]);
        expect(op.tags).toHaveLength(1);
        expect(ids.has(op.operationId), op.operationId).toBe(false);
        ids.add(op.operationId);
      }
    }
    expect(Object.keys(doc.components.securitySchemes)).toEqual(['apiKey', 'userSession']);
  });
});

describe('user sessions in the partner document', () => {
  const sessionOperations = () =>
    Object.entries<any>(doc.paths)
      .filter(([path]) => path.startsWith('/auth/v1/'))
      .flatMap(([path, item]) =>
        METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] })),
      );

  it('documents every /auth/v1 route with the user-session scheme where a session is needed, and none before', () => {
    const documented = sessionOperations().map(({ path, method, op }) => [method, path, op.security]);
    expect(documented).toEqual(
      expect.arrayContaining([
        ['post', '/auth/v1/sessions', []],
        ['delete', '/auth/v1/sessions', [{ userSession: [] }]],
        ['get', '/auth/v1/me', [{ userSession: [] }]],
        ['post', '/auth/v1/password-resets', []],
        ['post', '/auth/v1/password-resets/confirm', []],
      ]),
    );
    expect(documented).toHaveLength(5);
    expect(doc.components.securitySchemes.userSession).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const { path, method, op } of sessionOperations()) {
      expect(op.tags, `${method} ${path}`).toEqual(['User sessions']);
      expect(op.summary, `${method} ${path}`).toBeTruthy();
      for (const status of ['500', '503'])
        expect(op.responses[status], `${method} ${path} declares ${status}`).toBeTruthy();
    }
    expect(doc.tags.map((tag: any) => tag.name)).toContain('User sessions');
    // Sign-in and reset requests are rate-limited once their body is parsed: every answer after
    // that carries the RateLimit-* headers, and 429 says how long to wait.
    for (const path of ['/auth/v1/sessions', '/auth/v1/password-resets']) {
      for (const [status, response] of Object.entries<any>(doc.paths[path].post.responses)) {
        const headers = Object.keys(response.headers ?? {});
        if (['400', '413', '415'].includes(status))
          expect(headers, `${path} ${status}`).not.toContain('RateLimit-Limit');
        else
          expect(headers, `${path} ${status}`).toEqual(
            expect.arrayContaining(['RateLimit-Limit', 'RateLimit-Reset']),
          );
        if (status === '429') expect(headers, `${path} ${status}`).toContain('Retry-After');
      }
    }
  });

  it('real answers of every route validate against it', async () => {
    const user = await createUser(a, { email: 'session-doc@example.com', password: 'open sesame 1' });
    const signIn = (password: string) =>
      t.inject({
        method: 'POST',
        url: '/auth/v1/sessions',
        payload: { tenant_id: a.id, email: 'session-doc@example.com', password },
      });
    const signedIn = await signIn('open sesame 1');
    expect(signedIn.status).toBe(201);
    expect(signedIn.headers['ratelimit-limit']).toBeDefined();
    expectDocumented('/auth/v1/sessions', 'post', signedIn);
    expectDocumented('/auth/v1/sessions', 'post', await signIn('wrong password'));
    expectDocumented(
      '/auth/v1/sessions',
      'post',
      await t.inject({ method: 'POST', url: '/auth/v1/sessions', payload: { tenant_id: a.id } }),
    );
    const bearer = { authorization: `Bearer ${signedIn.body.data.token}` };
    const me = await t.inject({ method: 'GET', url: '/auth/v1/me', headers: bearer });
    expect(me.body.data.id).toBe(user.id);
    expectDocumented('/auth/v1/me', 'get', me);
    expectDocumented('/auth/v1/me', 'get', await t.inject({ method: 'GET', url: '/auth/v1/me' }));
    const reset = await t.inject({
      method: 'POST',
      url: '/auth/v1/password-resets',
      payload: { tenant_id: a.id, email: 'session-doc@example.com' },
    });
    expect(reset.status).toBe(202);
    expectDocumented('/auth/v1/password-resets', 'post', reset);
    const confirm = await t.inject({
      method: 'POST',
      url: '/auth/v1/password-resets/confirm',
      payload: { token: 'vpr_unknown', password: 'a new password' },
    });
    expect(confirm.status).toBe(422);
    expectDocumented('/auth/v1/password-resets/confirm', 'post', confirm);
    const signedOut = await t.inject({ method: 'DELETE', url: '/auth/v1/sessions', headers: bearer });
    expect(signedOut.status).toBe(204);
    expectDocumented(
      '/auth/v1/sessions',
      'delete',
      await t.inject({ method: 'DELETE', url: '/auth/v1/sessions', headers: bearer }),
    );
  });
});

describe('real answers validate against the document', () => {
  it('the check is not vacuous: wrong shapes fail', () => {
    const schemaOf = (path: string, method: string, status: string) =>
      ajv.compile({
        $ref: `openapi.json#/${pointer('paths', path, method, 'responses', status, 'content', 'application/json', 'schema')}`,
      });
    const created = schemaOf('/api/v1/users', 'post', '201');
    expect(
      created({ data: { id: 'usr_x', email: 'a@b.co', name: 'A', created_at: '2026-01-01T00:00:00.000Z' } }),
    ).toBe(true);
    expect(created({ data: { id: 'usr_x', email: 'a@b.co', name: 'A' } })).toBe(false);
    expect(created({ data: { id: 'usr_x', email: 'a@b.co', name: 'A', created_at: 'yesterday' } })).toBe(
      false,
    );
    const error = schemaOf('/api/v1/users', 'post', '422');
    expect(error({ error: { code: 'validation_failed', message: 'x' }, request_id: 'req_1' })).toBe(true);
    expect(error({ error: { message: 'x' }, request_id: 'req_1' })).toBe(false);
    const list = schemaOf('/api/v1/plans', 'get', '200');
    expect(list({ data: [], pagination: { page: 1, limit: 20, total: 0, pages: 0 } })).toBe(false);
  });

  it('users: every success and error answer', async () => {
    const created = await a.request('POST', '/api/v1/users', {
      email: 'doc@example.com',
      name: 'Doc',
      password: '12345678',
      phone: '+14155550123',
    });
    expectDocumented('/api/v1/users', 'post', created);
    expectDocumented(
      '/api/v1/users',
      'post',
      await a.request('POST', '/api/v1/users', {
        email: 'doc@example.com',
        name: 'Doc',
        password: '12345678',
      }),
    );
    expectDocumented(
      '/api/v1/users',
      'post',
      await a.request('POST', '/api/v1/users', { name: 42, extra: true }),
    );
    const key = { 'idempotency-key': 'doc-key' };
    expectDocumented(
      '/api/v1/users',
      'post',
      await a.request(
        'POST',
        '/api/v1/users',
        { email: 'd2@example.com', name: 'D', password: '12345678' },
        key,
      ),
    );
    const replay = await a.request(
      'POST',
      '/api/v1/users',
      { email: 'd2@example.com', name: 'D', password: '12345678' },
      key,
    );
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expectDocumented('/api/v1/users', 'post', replay);
    expectDocumented(
      '/api/v1/users',
      'post',
      await a.request(
        'POST',
        '/api/v1/users',
        { email: 'd3@example.com', name: 'D', password: '12345678' },
        key,
      ),
    );
    const raw = (payload: string, contentType: string) =>
      t.inject({
        method: 'POST',
        url: '/api/v1/users',
        headers: { authorization: `Bearer ${a.key}`, 'content-type': contentType },
        payload,
      });
    expectDocumented('/api/v1/users', 'post', await raw('{', 'application/json'));
    expectDocumented('/api/v1/users', 'post', await raw('hi', 'text/plain'));
    expectDocumented(
      '/api/v1/users',
      'post',
      await raw(JSON.stringify({ name: 'x'.repeat(1100 * 1024) }), 'application/json'),
    );

    expectDocumented('/api/v1/users', 'get', await a.request('GET', '/api/v1/users'));
    expectDocumented('/api/v1/users', 'get', await a.request('GET', '/api/v1/users?page=99'));
    expectDocumented('/api/v1/users', 'get', await a.request('GET', '/api/v1/users?page=0&status=pending'));

    const id = created.body.data.id;
    expectDocumented('/api/v1/users/{id}', 'get', await a.request('GET', `/api/v1/users/${id}`));
    expectDocumented('/api/v1/users/{id}', 'get', await a.request('GET', '/api/v1/users/usr_missing'));
    expectDocumented('/api/v1/users/{id}', 'delete', await a.request('DELETE', `/api/v1/users/${id}`));
    expectDocumented('/api/v1/users/{id}', 'delete', await a.request('DELETE', `/api/v1/users/${id}`));
    expectDocumented('/api/v1/users/{id}', 'delete', await a.request('DELETE', '/api/v1/users/usr_missing'));
  });

  it('users: the list item with a current plan', async () => {
    const user = await createUser(a);
    await t.admin('PATCH', `/admin/v1/users/${user.id}`, { status: 'pending' });
    expectDocumented(
      '/api/v1/users',
      'get',
      await a.request('GET', '/api/v1/users?sort_by=name&sort_order=asc&search=user'),
    );
  });

  it('plans: every success and error answer', async () => {
    const plan = await createPlan(t, a.id, {
      description: 'Documented',
      trial_period_days: 14,
      provider: 'processor',
    });
    await createPlan(t, a.id, { active: false });
    expectDocumented('/api/v1/plans', 'get', await a.request('GET', '/api/v1/plans?active=false'));
    expectDocumented('/api/v1/plans', 'get', await a.request('GET', '/api/v1/plans?page=5'));
    expectDocumented('/api/v1/plans', 'get', await a.request('GET', '/api/v1/plans?active=maybe'));
    expectDocumented('/api/v1/plans/{id}', 'get', await a.request('GET', `/api/v1/plans/${plan.id}`));
    expectDocumented('/api/v1/plans/{id}', 'get', await a.request('GET', '/api/v1/plans/plan_missing'));
  });

  it('agents: every success and error answer', async () => {
    const owner = await createUser(a);
    const body = {
      user_id: owner.id,
      name: 'Doc agent',
      phone_number: '+14155550199',
      prompt: 'Call {name}.',
      welcome_message: 'Hello {name}.',
      settings: {
        max_concurrent_calls: 2,
        calling_hours: { timezone: 'America/New_York', days: [1, 2], start: '09:00', end: '17:00' },
        retry: { max_attempts: 2, delay_minutes: 10 },
      },
    };
    const created = await a.request('POST', '/api/v1/agents', body, { 'idempotency-key': 'doc-agent' });
    expectDocumented('/api/v1/agents', 'post', created);
    expectDocumented(
      '/api/v1/agents',
      'post',
      await a.request('POST', '/api/v1/agents', body, { 'idempotency-key': 'doc-agent' }),
    );
    expectDocumented(
      '/api/v1/agents',
      'post',
      await a.request('POST', '/api/v1/agents', { ...body, name: 'x' }, { 'idempotency-key': 'doc-agent' }),
    );
    expectDocumented(
      '/api/v1/agents',
      'post',
      await a.request('POST', '/api/v1/agents', { ...body, user_id: 'usr_x' }),
    );
    expectDocumented(
      '/api/v1/agents',
      'post',
      await a.request('POST', '/api/v1/agents', { ...body, settings: { x: 1 } }),
    );
    expectDocumented('/api/v1/agents', 'get', await a.request('GET', '/api/v1/agents?sort_by=name'));
    const id = created.body.data.id;
    expectDocumented('/api/v1/agents/{id}', 'get', await a.request('GET', `/api/v1/agents/${id}`));
    expectDocumented('/api/v1/agents/{id}', 'get', await a.request('GET', '/api/v1/agents/agt_missing'));
    expectDocumented(
      '/api/v1/agents/{id}',
      'patch',
      await a.request('PATCH', `/api/v1/agents/${id}`, { settings: {} }),
    );
    expectDocumented(
      '/api/v1/agents/{id}/publish',
      'post',
      await a.request('POST', `/api/v1/agents/${id}/publish`),
    );
    expectDocumented(
      '/api/v1/agents/{id}/versions',
      'get',
      await a.request('GET', `/api/v1/agents/${id}/versions`),
    );
    expectDocumented(
      '/api/v1/agents/{id}/rotate-webhook',
      'post',
      await a.request('POST', `/api/v1/agents/${id}/rotate-webhook`),
    );
    expectDocumented('/api/v1/agents/{id}', 'delete', await a.request('DELETE', `/api/v1/agents/${id}`));
    expectDocumented('/api/v1/agents/{id}', 'delete', await a.request('DELETE', `/api/v1/agents/${id}`));
  });

  it('do-not-call: every success and error answer', async () => {
    const entry = { phone_number: '+14155550177', reason: 'Asked' };
    expectDocumented('/api/v1/do-not-call', 'post', await a.request('POST', '/api/v1/do-not-call', entry));
    expectDocumented('/api/v1/do-not-call', 'post', await a.request('POST', '/api/v1/do-not-call', entry));
    expectDocumented(
      '/api/v1/do-not-call',
      'post',
      await a.request('POST', '/api/v1/do-not-call', { phone_number: '1' }),
    );
    expectDocumented(
      '/api/v1/do-not-call',
      'get',
      await a.request('GET', '/api/v1/do-not-call?phone_number=%2B14155550177'),
    );
    const path = '/api/v1/do-not-call/{phone_number}';
    expectDocumented(path, 'get', await a.request('GET', '/api/v1/do-not-call/%2B14155550177'));
    expectDocumented(path, 'delete', await a.request('DELETE', '/api/v1/do-not-call/%2B14155550177'));
    expectDocumented(path, 'delete', await a.request('DELETE', '/api/v1/do-not-call/%2B14155550177'));
  });

  it('every partner operation: 401 without a key and 403 without its scope', async () => {
    const scopeless = new Map<string, TestTenant>();
    for (const { path, method, op } of operations) {
      const url = path.replace(/\{[^}]+\}/g, 'x_missing');
      const body = method === 'get' || method === 'delete' ? undefined : {};
      const unauthenticated = await t.inject({
        method: method.toUpperCase() as 'GET',
        url,
        headers: body ? { 'content-type': 'application/json' } : {},
        payload: body ? '{}' : undefined,
      });
      expect(unauthenticated.status, `${method} ${path}`).toBe(401);
      expectDocumented(path, method, unauthenticated);
      const scope = op.security[0].apiKey[0];
      if (!scopeless.has(scope))
        scopeless.set(scope, await createTenant(t, { scopes: SCOPES.filter((s) => s !== scope) }));
      const denied = await scopeless.get(scope)!.request(method.toUpperCase() as 'GET', url, body);
      expect(denied.status, `${method} ${path}`).toBe(403);
      expectDocumented(path, method, denied);
    }
  });
});
