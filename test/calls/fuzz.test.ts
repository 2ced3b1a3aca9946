/**
 * Bad input on the webhook: random JSON bodies, random field types, nested context, weird
 * strings, wrong content types, huge bodies, 10,000 extra keys. Never a 5xx; every refusal is a
 * 4xx in the envelope and stores nothing; every 202 stores exactly the call that was asked for.
 */
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NAME_REQUIRED } from '../../src/calls/input.js';
import { createRateLimits } from '../../src/rate-limits/service.js';
import { startTestApp, type TestApp, type TestResponse } from '../support/app.js';
import { agentFixture, countRows, getCall, trigger } from './helpers.js';

let t: TestApp;
let webhookId: string;
beforeAll(async () => {
  t = await startTestApp({
    // The per-webhook pace (10/s, burst 20) would answer most of these with 429 before the
    // handler: lift it here, the rate-limit suite covers it.
    adapters: ({ database }) => ({
      rateLimits: createRateLimits({
        db: database.db,
        policies: { webhook: { perSecond: 1_000_000, burst: 1_000_000 } },
      }),
    }),
  });
  ({
    agent: { webhook_id: webhookId },
  } = await agentFixture(t, { credits: 1_000_000 }));
});
afterAll(() => t.close());

const VALID = { phone: '+14155550123', name: 'Ada' };
const RUNS = Number(process.env.FUZZ_RUNS ?? 120);

/** Sends, and checks the invariant: no 5xx; a refusal is an envelope and stores nothing. */
async function checked(send: () => Promise<TestResponse>): Promise<TestResponse> {
  const before = await countRows(t);
  const response = await send();
  expect(response.status, response.raw).toBeLessThan(500);
  const after = await countRows(t);
  if (response.status === 202) {
    expect(after).toEqual({ calls: before.calls + 1, jobs: before.jobs + 1 });
  } else {
    expect(response.status).toBeGreaterThanOrEqual(400);
    expect(response.body?.error?.code, response.raw).toBeTypeOf('string');
    expect(response.body.request_id).toBe(response.headers['x-request-id']);
    expect(after).toEqual(before);
  }
  return response;
}

// Strings with the characters that break storage or templating.
const nasty = fc.string({
  unit: fc.constantFrom(
    'a',
    'Z',
    ' ',
    '{',
    '}',
    '\\',
    '"',
    '\u0000',
    '\ud800',
    '\udc00',
    '😀',
    'é',
    '\n',
    '%',
    '_',
  ),
  maxLength: 12,
});
const json = fc.letrec((tie) => ({
  value: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    fc.constant(null),
    fc.boolean(),
    fc.integer(),
    fc.double({ noNaN: true, noDefaultInfinity: true }),
    nasty,
    fc.array(tie('value'), { maxLength: 4 }),
    fc.dictionary(nasty, tie('value'), { maxKeys: 4 }),
  ),
})).value;

const phone = fc.oneof(
  fc.constant('+14155550123'),
  fc.stringMatching(/^\+[1-9][0-9]{6,14}$/),
  fc.stringMatching(/^\+?[0-9 ()-]{0,18}$/),
  json,
);
const nameValue = fc.oneof(fc.constant('Ada'), fc.string({ maxLength: 5 }), nasty, json);
const emailValue = fc.oneof(fc.constant('ada@example.com'), fc.constant('not an email'), json);

describe('webhook fuzzing', () => {
  it('random JSON bodies: 4xx or 202, never 5xx', async () => {
    await fc.assert(
      fc.asyncProperty(json, async (body) => {
        await checked(() => trigger(t, webhookId, JSON.stringify(body)));
      }),
      { numRuns: RUNS },
    );
  });

  it('random field types, weird strings and nested objects as context values', async () => {
    const body = fc.record(
      {
        phone,
        name: nameValue,
        full_name: nameValue,
        fullName: nameValue,
        email: emailValue,
        extra: fc.dictionary(
          fc.oneof(nasty, fc.constantFrom('name', 'product', '__proto__', 'constructor')),
          json,
          { maxKeys: 6 },
        ),
      },
      { requiredKeys: [] },
    );
    const statuses: Record<number, number> = {};
    await fc.assert(
      fc.asyncProperty(body, async ({ extra, ...fields }) => {
        const payload = { ...extra, ...fields };
        const response = await checked(() => trigger(t, webhookId, JSON.stringify(payload)));
        statuses[response.status] = (statuses[response.status] ?? 0) + 1;
        const names = [payload.name, payload.full_name, payload.fullName];
        if (!names.some((value) => typeof value === 'string' && value.trim() !== '')) {
          expect(response.status).toBe(400);
          if (!JSON.stringify(payload).includes('"__proto__"'))
            expect(response.body.error.message).toBe(NAME_REQUIRED);
        }
        if (response.status === 202) {
          expect(typeof payload.phone === 'string' && /^\+[1-9][0-9]{6,14}$/.test(payload.phone)).toBe(true);
          const call = await getCall(t, response.body.data.id);
          expect(call.to).toBe(payload.phone);
          const context = { ...payload } as Record<string, unknown>;
          for (const key of ['phone', 'name', 'full_name', 'fullName', 'email']) delete context[key];
          expect(call.context).toEqual(JSON.parse(JSON.stringify(context)));
        }
      }),
      { numRuns: RUNS },
    );
    console.info(`[calls/fuzz] answers by status: ${JSON.stringify(statuses)}`);
  });

  it('a valid callee with random context: stored exactly, unless a string cannot be stored (400)', async () => {
    const context = fc.dictionary(fc.oneof(nasty, fc.constantFrom('product', 'city', 'a')), json, {
      maxKeys: 8,
    });
    await fc.assert(
      fc.asyncProperty(context, async (extra) => {
        const payload = { ...extra, ...VALID };
        const raw = JSON.stringify(payload);
        const response = await checked(() => trigger(t, webhookId, raw));
        // JSON.stringify escapes NUL and unpaired surrogates: exactly what PostgreSQL refuses.
        const unstorable = /\\u0000|\\ud[89a-f][0-9a-f]{2}/i.test(raw);
        const poisoned = raw.includes('"__proto__"');
        expect(response.status, raw).toBe(unstorable || poisoned ? 400 : 202);
        if (response.status === 202) {
          const call = await getCall(t, response.body.data.id);
          const stored = { ...payload } as Record<string, unknown>;
          delete stored.phone;
          delete stored.name;
          expect(call.context).toEqual(JSON.parse(JSON.stringify(stored)));
        }
      }),
      { numRuns: RUNS },
    );
  });

  it('non-string names answer exactly "name or full name is required"', async () => {
    const nonString = fc.oneof(
      fc.integer(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.string()),
      fc.dictionary(fc.string(), fc.string()),
    );
    await fc.assert(
      fc.asyncProperty(nonString, fc.constantFrom('name', 'full_name', 'fullName'), async (value, key) => {
        const response = await checked(() => trigger(t, webhookId, { phone: VALID.phone, [key]: value }));
        expect(response.status).toBe(400);
        expect(response.body.error.message).toBe(NAME_REQUIRED);
      }),
      { numRuns: 40 },
    );
  });

  it('wrong content types answer 415', async () => {
    const type = fc.oneof(
      fc.constantFrom(
        'text/plain',
        'text/html',
        'application/xml',
        'application/x-www-form-urlencoded',
        'application/octet-stream',
        'multipart/form-data; boundary=abc',
        'application/json-patch+json',
        'json',
      ),
      fc.stringMatching(/^[a-z]{1,10}\/[a-z0-9.+-]{1,15}$/).filter((value) => value !== 'application/json'),
    );
    await fc.assert(
      fc.asyncProperty(type, async (contentType) => {
        const response = await checked(() =>
          trigger(t, webhookId, JSON.stringify(VALID), { 'content-type': contentType }),
        );
        expect(response.status).toBe(415);
      }),
      { numRuns: 40 },
    );
  });

  it('huge bodies answer 413, 10,000 extra keys included', async () => {
    for (const size of [64 * 1024 + 1, 200_000, 1024 * 1024 + 1, 5 * 1024 * 1024]) {
      const body = JSON.stringify({ ...VALID, notes: 'x'.repeat(size) });
      expect((await checked(() => trigger(t, webhookId, body))).status).toBe(413);
    }
    const manyKeys: Record<string, unknown> = { ...VALID };
    for (let i = 0; i < 10_000; i++) manyKeys[`k${i}`] = i;
    expect((await checked(() => trigger(t, webhookId, manyKeys))).status).toBe(413);
  });

  it('too many context keys, or nesting too deep, under the size limit answer 400', async () => {
    const wide: Record<string, unknown> = { ...VALID };
    for (let i = 0; i < 201; i++) wide[`k${i}`] = i;
    expect((await checked(() => trigger(t, webhookId, wide))).status).toBe(400);
    const deep = `{"phone":"+14155550123","name":"Ada","deep":${'['.repeat(20_000)}${']'.repeat(20_000)}}`;
    expect(Buffer.byteLength(deep)).toBeLessThan(64 * 1024);
    expect((await checked(() => trigger(t, webhookId, deep))).status).toBe(400);
    let nested: unknown = 'leaf';
    for (let i = 0; i < 7; i++) nested = { level: nested };
    expect((await checked(() => trigger(t, webhookId, { ...VALID, nested }))).status).toBe(202);
  });
});
