/**
 * The operator API's lists: every tenant, a tenant's API keys (never a secret) and a tenant's
 * agents, paged like the partner API (docs/design-choices.md) and isolated per tenant.
 */
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { createTenant, createUser, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { expectError, expectInvalidFields } from '../support/expect.js';

// The clock stands still, so rows created together share created_at: only the id tie-break orders them.
const clock = new ManualClock('2026-09-15T09:30:00.000Z');
let t: TestApp;
let a: TestTenant;
let b: TestTenant;
/** Every full key issued in this file: none may appear in a list. */
const secrets: string[] = [];

beforeAll(async () => {
  t = await startTestApp({ clock });
  a = await createTenant(t, { name: 'Acme Agency' });
  b = await createTenant(t, { name: 'Blue Agency' });
  secrets.push(a.key, b.key);
});
afterAll(() => t.close());

async function issueKey(tenantId: string, body: Record<string, unknown>) {
  const response = await t.admin('POST', `/admin/v1/tenants/${tenantId}/api-keys`, body);
  expect(response.status).toBe(201);
  secrets.push(response.body.data.key);
  return response.body.data as { id: string; key: string };
}

async function createAgent(tenant: TestTenant, name: string) {
  const owner = await createUser(tenant);
  const response = await t.admin('POST', `/admin/v1/tenants/${tenant.id}/agents`, {
    user_id: owner.id,
    name,
    phone_number: '+14155550123',
    prompt: 'You call {name}.',
    welcome_message: 'Hello {name}.',
  });
  expect(response.status).toBe(201);
  return response.body.data as { id: string; name: string };
}

/** Walks every page of a list and returns the ids in order. */
async function walk(url: string, limit: number): Promise<string[]> {
  const ids: string[] = [];
  for (let page = 1; ; page++) {
    const separator = url.includes('?') ? '&' : '?';
    const response = await t.admin('GET', `${url}${separator}page=${page}&limit=${limit}`);
    expect(response.status).toBe(200);
    ids.push(...response.body.data.map((item: { id: string }) => item.id));
    if (!response.body.pagination.has_more) return ids;
  }
}

describe('GET /admin/v1/tenants', () => {
  it('pages through every tenant with the partner pagination block, newest first with an id tie-break', async () => {
    for (const name of ['Cyan Agency', 'Delta Agency', 'Echo Agency']) {
      expect((await t.admin('POST', '/admin/v1/tenants', { name })).status).toBe(201);
    }
    const first = await t.admin('GET', '/admin/v1/tenants?limit=2');
    expect(first.status).toBe(200);
    expect(first.body.pagination).toEqual({ page: 1, limit: 2, total: 5, pages: 3, has_more: true });
    expect(Object.keys(first.body.data[0]).sort()).toEqual(
      [
        'created_at',
        'email',
        'id',
        'low_balance_minutes',
        'max_concurrent_calls',
        'name',
        'processor_account_id',
        'application_fee_percent',
        'rate_limit',
        'suspended_at',
        'suspended_reason',
      ].sort(),
    );

    const ids = await walk('/admin/v1/tenants', 2);
    expect(ids).toHaveLength(5);
    // Same created_at everywhere: the order is the id, descending, and no page repeats or skips one.
    expect(ids).toEqual([...ids].sort().reverse());

    const last = await t.admin('GET', '/admin/v1/tenants?limit=2&page=3');
    expect(last.body.pagination).toEqual({ page: 3, limit: 2, total: 5, pages: 3, has_more: false });
    expect(last.body.data).toHaveLength(1);
    const past = await t.admin('GET', '/admin/v1/tenants?limit=2&page=9');
    expect(past.body).toEqual({
      data: [],
      pagination: { page: 9, limit: 2, total: 5, pages: 3, has_more: false },
    });
  });

  it('sorts by name', async () => {
    const response = await t.admin('GET', '/admin/v1/tenants?sort_by=name&sort_order=asc');
    expect(response.body.data.map((tenant: { name: string }) => tenant.name)).toEqual([
      'Acme Agency',
      'Blue Agency',
      'Cyan Agency',
      'Delta Agency',
      'Echo Agency',
    ]);
  });

  it('refuses bad paging and sorting with validation_failed', async () => {
    expectInvalidFields(await t.admin('GET', '/admin/v1/tenants?limit=0'), ['limit']);
    expectInvalidFields(await t.admin('GET', '/admin/v1/tenants?limit=101&page=x'), ['limit', 'page']);
    expectInvalidFields(await t.admin('GET', '/admin/v1/tenants?sort_by=id&sort_order=up'), [
      'sort_by',
      'sort_order',
    ]);
  });
});

describe('GET /admin/v1/tenants/{id}/api-keys', () => {
  it("lists the tenant's keys with their state and never a secret", async () => {
    clock.advance(1000);
    const named = await issueKey(a.id, { scopes: ['users:read'], name: 'CRM sync', env: 'live' });
    const expiring = await issueKey(a.id, {
      scopes: ['plans:read'],
      expires_at: new Date(clock.now().getTime() + 60_000).toISOString(),
    });
    const revoked = await issueKey(a.id, { scopes: ['plans:read'] });
    expect((await t.admin('DELETE', `/admin/v1/api-keys/${revoked.id}`)).status).toBe(200);
    clock.advance(120_000);

    const response = await t.admin('GET', `/admin/v1/tenants/${a.id}/api-keys`);
    expect(response.status).toBe(200);
    expect(response.body.pagination).toEqual({ page: 1, limit: 20, total: 4, pages: 1, has_more: false });
    const byId = new Map(response.body.data.map((key: { id: string }) => [key.id, key]));
    expect(byId.get(named.id)).toEqual({
      id: named.id,
      name: 'CRM sync',
      env: 'live',
      scopes: ['users:read'],
      status: 'active',
      created_at: '2026-09-15T09:30:01.000Z',
      expires_at: null,
      revoked_at: null,
      last_used_at: null,
    });
    expect(byId.get(expiring.id)).toMatchObject({ status: 'expired', revoked_at: null });
    expect(byId.get(revoked.id)).toMatchObject({ status: 'revoked', revoked_at: '2026-09-15T09:30:01.000Z' });
    expect(byId.get(a.keyId)).toMatchObject({ status: 'active' });
    // Newest first: the three issued a second after the tenant's first key come before it.
    expect(response.body.data.at(-1).id).toBe(a.keyId);

    for (const secret of secrets) expect(response.raw).not.toContain(secret);
    expect(response.raw).not.toMatch(/"key"|key_hash/);
  });

  it("pages, and never shows another tenant's keys", async () => {
    const ids = await walk(`/admin/v1/tenants/${a.id}/api-keys?sort_order=asc`, 3);
    expect(ids).toHaveLength(4);
    expect(ids[0]).toBe(a.keyId);

    const other = await t.admin('GET', `/admin/v1/tenants/${b.id}/api-keys`);
    expect(other.body.data.map((key: { id: string }) => key.id)).toEqual([b.keyId]);
    expect(other.body.pagination.total).toBe(1);
    for (const id of ids) expect(other.raw).not.toContain(id);
  });

  it('is 404 for an unknown tenant', async () => {
    expectError(await t.admin('GET', '/admin/v1/tenants/ten_doesnotexist/api-keys'), 404, 'not_found');
  });

  it('shows when each key last authenticated a request, written at most once a minute', async () => {
    const probe = await issueKey(b.id, { scopes: ['users:read'], name: 'Last used probe' });
    const lastUsed = async () => {
      const list = await t.admin('GET', `/admin/v1/tenants/${b.id}/api-keys`);
      return list.body.data.find((key: { id: string }) => key.id === probe.id).last_used_at as string | null;
    };
    expect(await lastUsed()).toBeNull();

    const firstUse = clock.now().toISOString();
    expect((await t.partner(probe.key, 'GET', '/api/v1/users')).status).toBe(200);
    // The write is fire-and-forget: the request does not wait for it.
    await vi.waitFor(async () => expect(await lastUsed()).toBe(firstUse));

    // Within the minute the key is used again: nothing more is written.
    clock.advance(30_000);
    expect((await t.partner(probe.key, 'GET', '/api/v1/users')).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 100));
    expect(await lastUsed()).toBe(firstUse);

    // A refused request (a scope the key lacks) still authenticated the key; past the minute it is written.
    clock.advance(31_000);
    expect((await t.partner(probe.key, 'GET', '/api/v1/plans')).status).toBe(403);
    const later = clock.now().toISOString();
    await vi.waitFor(async () => expect(await lastUsed()).toBe(later));
  });
});

describe('GET /admin/v1/tenants/{id}/agents', () => {
  it("lists the tenant's agents, paged and sorted, and never another tenant's", async () => {
    const mine = [
      await createAgent(a, 'Reception'),
      await createAgent(a, 'Billing'),
      await createAgent(a, 'Sales'),
    ];
    const theirs = await createAgent(b, 'Front desk');

    const byName = await t.admin(
      'GET',
      `/admin/v1/tenants/${a.id}/agents?sort_by=name&sort_order=asc&limit=2`,
    );
    expect(byName.status).toBe(200);
    expect(byName.body.data.map((agent: { name: string }) => agent.name)).toEqual(['Billing', 'Reception']);
    expect(byName.body.pagination).toEqual({ page: 1, limit: 2, total: 3, pages: 2, has_more: true });
    expect(byName.body.data[0]).toEqual((await t.admin('GET', `/admin/v1/agents/${mine[1].id}`)).body.data);

    const ids = await walk(`/admin/v1/tenants/${a.id}/agents`, 2);
    expect([...ids].sort()).toEqual(mine.map((agent) => agent.id).sort());
    expect(ids).not.toContain(theirs.id);

    const other = await t.admin('GET', `/admin/v1/tenants/${b.id}/agents`);
    expect(other.body.data.map((agent: { id: string }) => agent.id)).toEqual([theirs.id]);
  });

  it('is 404 for an unknown tenant and 422 for a bad sort', async () => {
    expectError(await t.admin('GET', '/admin/v1/tenants/ten_doesnotexist/agents'), 404, 'not_found');
    expectInvalidFields(await t.admin('GET', `/admin/v1/tenants/${a.id}/agents?sort_by=phone`), ['sort_by']);
  });
});

describe('the operator token', () => {
  it.each(['/admin/v1/tenants', '/admin/v1/tenants/{a}/api-keys', '/admin/v1/tenants/{a}/agents'])(
    'is required by the list %s',
    async (route) => {
      const url = route.replace('{a}', a.id);
      for (const authorization of [undefined, `Bearer ${a.key}`, 'Bearer wrong-token-0123456789']) {
        const response = await t.inject({
          method: 'GET',
          url,
          headers: authorization ? { authorization } : {},
        });
        expectError(response, 401, 'authentication_failed');
        expect(response.raw).not.toContain(a.keyId);
      }
    },
  );
});
