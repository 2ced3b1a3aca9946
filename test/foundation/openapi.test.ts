/**
 * The OpenAPI document tells the truth: real answers of every partner endpoint, success and error,
 * validate against the document's response schemas; every operation declares its scope and errors.
 */
import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormatsModule from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
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
        expect(schema.$ref ?? schema.$id, `${where} ${status} is the envelope`).toMatch(/ErrorEnvelope/);
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

  it('/docs answers 200', async () => {
    const response = await t.inject({ method: 'GET', url: '/docs' });
    expect(response.status).toBe(200);
    expect(response.raw).toMatch(/swagger/i);
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
