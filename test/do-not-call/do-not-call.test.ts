/** /api/v1/do-not-call: add, re-add, list and filter, get, delete (URL-encoded `+`), isolation, scopes. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { isOnDoNotCallList } from '../../src/do-not-call/repository.js';
import { createTenant, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { expectError, expectInvalidFields, ISO_MS } from '../support/expect.js';

const clock = new ManualClock('2026-03-02T09:00:00.000Z');
let t: TestApp;
let a: TestTenant;
let b: TestTenant;

const listed = (tenant: TestTenant, phone: string) =>
  isOnDoNotCallList(t.services.database.db, tenant.id, phone);

beforeAll(async () => {
  t = await startTestApp({ clock });
  a = await createTenant(t, { name: 'A' });
  b = await createTenant(t, { name: 'B' });
});
afterAll(() => t.close());

describe('POST /api/v1/do-not-call', () => {
  it('lists a number: 201 with the entry and its Location; again: 200 with the existing entry', async () => {
    const first = await a.request('POST', '/api/v1/do-not-call', {
      phone_number: '+14155550101',
      reason: 'Asked not to be called',
    });
    expect(first.status, first.raw).toBe(201);
    expect(first.body.data).toEqual({
      phone_number: '+14155550101',
      reason: 'Asked not to be called',
      created_at: clock.now().toISOString(),
    });
    expect(first.headers.location).toBe('http://voiceplane.test/api/v1/do-not-call/%2B14155550101');
    const fetched = await a.request('GET', new URL(String(first.headers.location)).pathname);
    expect(fetched.status).toBe(200);
    expect(fetched.body.data).toEqual(first.body.data);

    clock.advance(60_000);
    const again = await a.request('POST', '/api/v1/do-not-call', {
      phone_number: '+14155550101',
      reason: 'Other',
    });
    expect(again.status).toBe(200);
    expect(again.body.data).toEqual(first.body.data);
    expect(again.headers.location).toBeUndefined();
    expect(await listed(a, '+14155550101')).toBe(true);
  });

  it('reason is optional (null)', async () => {
    const response = await a.request('POST', '/api/v1/do-not-call', { phone_number: '+14155550102' });
    expect(response.status).toBe(201);
    expect(response.body.data.reason).toBeNull();
    expect(response.body.data.created_at).toMatch(ISO_MS);
  });

  it('422 validation_failed for a number that is not E.164 or unknown fields; nothing stored', async () => {
    expectInvalidFields(await a.request('POST', '/api/v1/do-not-call', { phone_number: '4155550103' }), [
      'phone_number',
    ]);
    expectInvalidFields(
      await a.request('POST', '/api/v1/do-not-call', { phone_number: '+14155550103', x: 1 }),
      ['x'],
    );
    expectInvalidFields(await a.request('POST', '/api/v1/do-not-call', {}), ['phone_number']);
    expect(await listed(a, '+14155550103')).toBe(false);
  });
});

describe('GET /api/v1/do-not-call', () => {
  it('lists newest first with pagination and the phone_number filter', async () => {
    const tenant = await createTenant(t, { name: 'Lists' });
    for (const phone of ['+442071838750', '+14155550111', '+33142685300']) {
      clock.advance(1000);
      expect((await tenant.request('POST', '/api/v1/do-not-call', { phone_number: phone })).status).toBe(201);
    }
    const page = await tenant.request('GET', '/api/v1/do-not-call?limit=2');
    expect(page.status).toBe(200);
    expect(page.body.data.map((e: any) => e.phone_number)).toEqual(['+33142685300', '+14155550111']);
    expect(page.body.pagination).toEqual({ page: 1, limit: 2, total: 3, pages: 2, has_more: true });
    const filtered = await tenant.request(
      'GET',
      `/api/v1/do-not-call?phone_number=${encodeURIComponent('+14155550111')}`,
    );
    expect(filtered.body.data.map((e: any) => e.phone_number)).toEqual(['+14155550111']);
    expect(filtered.body.pagination.total).toBe(1);
    const none = await tenant.request('GET', '/api/v1/do-not-call?phone_number=%2B19999999999');
    expect(none.body).toMatchObject({ data: [], pagination: { total: 0 } });
    expectInvalidFields(await tenant.request('GET', '/api/v1/do-not-call?limit=500'), ['limit']);
  });
});

describe('DELETE /api/v1/do-not-call/{phone_number}', () => {
  it('removes the entry (the + URL-encoded or not): 200 with it; then 404', async () => {
    const added = await a.request('POST', '/api/v1/do-not-call', {
      phone_number: '+14155550121',
      reason: 'r',
    });
    const removed = await a.request('DELETE', '/api/v1/do-not-call/%2B14155550121');
    expect(removed.status).toBe(200);
    expect(removed.body.data).toEqual(added.body.data);
    expect(await listed(a, '+14155550121')).toBe(false);
    expectError(await a.request('DELETE', '/api/v1/do-not-call/%2B14155550121'), 404, 'not_found');
    expectError(await a.request('GET', '/api/v1/do-not-call/%2B14155550121'), 404, 'not_found');

    await a.request('POST', '/api/v1/do-not-call', { phone_number: '+14155550122' });
    const literal = await a.request('DELETE', '/api/v1/do-not-call/+14155550122');
    expect(literal.status).toBe(200);
    expect(literal.body.data.phone_number).toBe('+14155550122');
  });

  it('404 for a number never listed, whatever its shape', async () => {
    expectError(await a.request('DELETE', '/api/v1/do-not-call/%2B19998887777'), 404, 'not_found');
    expectError(await a.request('DELETE', '/api/v1/do-not-call/not-a-number'), 404, 'not_found');
  });

  it('a removed number can be listed again (201)', async () => {
    await a.request('POST', '/api/v1/do-not-call', { phone_number: '+14155550123' });
    await a.request('DELETE', '/api/v1/do-not-call/%2B14155550123');
    expect((await a.request('POST', '/api/v1/do-not-call', { phone_number: '+14155550123' })).status).toBe(
      201,
    );
  });
});

describe('tenant isolation and scopes', () => {
  it('each tenant has its own list', async () => {
    await a.request('POST', '/api/v1/do-not-call', { phone_number: '+14155550131', reason: 'A only' });
    expectError(await b.request('DELETE', '/api/v1/do-not-call/%2B14155550131'), 404, 'not_found');
    expectError(await b.request('GET', '/api/v1/do-not-call/%2B14155550131'), 404, 'not_found');
    expect((await b.request('GET', '/api/v1/do-not-call?limit=100')).raw).not.toContain('+14155550131');
    expect(await listed(b, '+14155550131')).toBe(false);
    expect(await listed(a, '+14155550131')).toBe(true);
    // B listing the same number is B's own entry (201), A's stays as it was.
    const own = await b.request('POST', '/api/v1/do-not-call', { phone_number: '+14155550131' });
    expect(own.status).toBe(201);
    expect(own.body.data.reason).toBeNull();
    const aEntry = await a.request('GET', '/api/v1/do-not-call/%2B14155550131');
    expect(aEntry.body.data.reason).toBe('A only');
  });

  it('calls:read lists but cannot change; calls:write changes; other scopes neither', async () => {
    const key = async (scopes: string[]) =>
      (await t.admin('POST', `/admin/v1/tenants/${a.id}/api-keys`, { scopes })).body.data.key as string;
    const reader = await key(['calls:read']);
    const writer = await key(['calls:write']);
    const other = await key(['agents:read', 'agents:write', 'users:write']);
    for (const k of [reader]) expect((await t.partner(k, 'GET', '/api/v1/do-not-call')).status).toBe(200);
    for (const k of [writer, other]) {
      const refused = await t.partner(k, 'GET', '/api/v1/do-not-call');
      expectError(refused, 403, 'permission_denied');
      expect(refused.body.error.details).toEqual({ required_scopes: ['calls:read'] });
    }
    for (const k of [reader, other]) {
      const refused = await t.partner(k, 'POST', '/api/v1/do-not-call', { phone_number: '+14155550141' });
      expectError(refused, 403, 'permission_denied');
      expect(refused.body.error.details).toEqual({ required_scopes: ['calls:write'] });
      expectError(
        await t.partner(k, 'DELETE', '/api/v1/do-not-call/%2B14155550101'),
        403,
        'permission_denied',
      );
    }
    expect(await listed(a, '+14155550141')).toBe(false);
    expect(
      (await t.partner(writer, 'POST', '/api/v1/do-not-call', { phone_number: '+14155550141' })).status,
    ).toBe(201);
    expect((await t.partner(writer, 'DELETE', '/api/v1/do-not-call/%2B14155550141')).status).toBe(200);
  });
});
