/**
 * Deeply nested JSON: any body within the size limit is answered as bad input (400 in the
 * envelope), never a 5xx. API bodies may nest 32 levels of objects and arrays (the body is level
 * 1); the webhook's extra keys 8 levels below the body. Both are checked by one iterative walk
 * (checkStorable), which also finds the strings PostgreSQL cannot store at any depth.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { checkStorable, MAX_BODY_DEPTH } from '../../src/core/http/validation.js';
import { createRateLimits } from '../../src/rate-limits/service.js';
import { agentFixture, countRows, trigger } from '../calls/helpers.js';
import { ADMIN_TOKEN, createTenant, startTestApp, type TestApp, type TestTenant } from '../support/app.js';

/** `{"a":{"a":…{"a":1}…}}` with `levels` objects, as text (JSON.stringify would recurse). */
const nestedObjects = (levels: number) => `${'{"a":'.repeat(levels)}1${'}'.repeat(levels)}`;
/** `[[…[]…]]` with `levels` arrays. */
const nestedArrays = (levels: number) => `${'['.repeat(levels)}${']'.repeat(levels)}`;

let t: TestApp;
let tenant: TestTenant;
let webhookId: string;
beforeAll(async () => {
  t = await startTestApp({
    adapters: ({ database }) => ({
      rateLimits: createRateLimits({
        db: database.db,
        policies: { webhook: { perSecond: 1_000_000, burst: 1_000_000 } },
      }),
    }),
  });
  tenant = await createTenant(t);
  ({
    agent: { webhook_id: webhookId },
  } = await agentFixture(t, { tenant, credits: 1_000 }));
});
afterAll(() => t?.close());

function post(url: string, payload: string, authorization?: string) {
  return t.inject({
    method: 'POST',
    url,
    headers: {
      'content-type': 'application/json',
      ...(authorization ? { authorization: `Bearer ${authorization}` } : {}),
    },
    payload,
  });
}

describe('a body nested far beyond the limit, within 1 MiB', () => {
  const endpoints = () => [
    { url: '/api/v1/users', token: tenant.key },
    { url: '/api/v1/subscriptions', token: tenant.key },
    { url: '/admin/v1/tenants', token: ADMIN_TOKEN },
    { url: '/auth/v1/sessions', token: undefined },
  ];

  it('answers 400 invalid_request in the envelope on every JSON endpoint, and stores nothing', async () => {
    const deep = [
      `{"name":${nestedObjects(100_000)}}`,
      `{"email":"a@example.com","name":${nestedArrays(400_000)}}`,
    ];
    for (const body of deep) expect(Buffer.byteLength(body)).toBeLessThan(1024 * 1024);
    for (const { url, token } of endpoints()) {
      for (const body of deep) {
        const response = await post(url, body, token);
        expect(response.status, `${url}: ${response.raw.slice(0, 300)}`).toBe(400);
        expect(response.body.error.code).toBe('invalid_request');
        expect(response.body.error.message).toMatch(/nested too deeply: at most 32 levels/);
        expect(response.body.request_id).toBe(response.headers['x-request-id']);
      }
    }
    const users = await t.partner(tenant.key, 'GET', '/api/v1/users');
    expect(users.body.pagination.total).toBe(1);
  });

  it('is refused at 33 levels; 32 levels go on to ordinary validation', async () => {
    // The body is level 1: `name` holds 31 more objects at most.
    const at = (levels: number) =>
      `{"email":"x@example.com","password":"long enough","name":${nestedObjects(levels - 1)}}`;
    const refused = await post('/api/v1/users', at(MAX_BODY_DEPTH + 1), tenant.key);
    expect(refused.status, refused.raw).toBe(400);
    const validated = await post('/api/v1/users', at(MAX_BODY_DEPTH), tenant.key);
    expect(validated.status, validated.raw).toBe(422);
    expect(validated.body.error.code).toBe('validation_failed');
    expect(validated.body.error.details).toEqual([{ field: 'name', issue: 'must be of type string.' }]);
  });
});

describe('the call-trigger webhook', () => {
  const VALID = '"phone":"+14155550123","name":"Ada"';
  /** A context value holding `levels` levels of objects. */
  const withContext = (levels: number) => `{${VALID},"deep":${nestedObjects(levels)}}`;

  it('refuses deep context within 64 KiB with 400 and stores no call', async () => {
    const before = await countRows(t);
    for (const body of [withContext(10_000), `{${VALID},"deep":${nestedArrays(30_000)}}`]) {
      expect(Buffer.byteLength(body)).toBeLessThan(64 * 1024);
      const response = await trigger(t, webhookId, body);
      expect(response.status, response.raw.slice(0, 300)).toBe(400);
      expect(response.body.error).toEqual({
        code: 'invalid_request',
        message: 'Context values may be nested at most 8 levels deep.',
      });
    }
    expect(await countRows(t)).toEqual(before);
  });

  it('accepts context values nested 8 levels, refuses 9', async () => {
    expect((await trigger(t, webhookId, withContext(8))).status).toBe(202);
    expect((await trigger(t, webhookId, withContext(9))).status).toBe(400);
  });

  it('refuses a NUL character anywhere, a name alias included', async () => {
    for (const body of [
      `{${VALID},"deep":${'{"a":'.repeat(7)}"x\\u0000"${'}'.repeat(7)}}`,
      `{${VALID},"full_name":"Ada\\u0000"}`,
      `{${VALID},"k\\u0000":1}`,
    ]) {
      const response = await trigger(t, webhookId, body);
      expect(response.status, body).toBe(400);
      expect(response.body.error.message).toBe(
        'Strings must not contain NUL characters or unpaired surrogates.',
      );
    }
  });
});

describe('checkStorable', () => {
  it('walks any depth without recursion and stops at the limit', () => {
    let value: unknown = 'leaf';
    for (let i = 0; i < 1_000_000; i++) value = [value];
    expect(checkStorable(value, 32)).toEqual({ issues: [], tooDeep: true });
    expect(checkStorable(value, 2_000_000)).toEqual({ issues: [], tooDeep: false });
  });

  it('reports every unstorable string and key with its dotted path, in document order', () => {
    const data = {
      ok: 'fine',
      a: { b: ['x', 'bad\u0000'], 'k\u0000': 'never looked at\u0000' },
      lone: '\uD800',
      pair: '\uD83D\uDE00',
    };
    expect(checkStorable(data, 32)).toEqual({
      tooDeep: false,
      issues: [
        { field: 'a.b.1', issue: 'must not contain the NUL character (U+0000).' },
        { field: 'a.k\u0000', issue: 'must not contain the NUL character (U+0000).' },
        { field: 'lone', issue: 'must be valid Unicode (no unpaired surrogate).' },
      ],
    });
    expect(checkStorable('\u0000', 32).issues).toEqual([
      { issue: 'must not contain the NUL character (U+0000).' },
    ]);
  });

  it('counts the outermost object or array as level 1', () => {
    expect(checkStorable({ a: {} }, 2).tooDeep).toBe(false);
    expect(checkStorable({ a: { b: [] } }, 2).tooDeep).toBe(true);
    expect(checkStorable('text', 0).tooDeep).toBe(false);
  });
});
