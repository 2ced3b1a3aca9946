/**
 * /api/v1/agents: every route's happy path and errors, tenant isolation, the scope matrix,
 * Idempotency-Key on create, settings validation, soft deletion (webhook and routes 404, calls
 * stay readable), and the operator API calling the same service.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { grantCredits, trigger } from '../calls/helpers.js';
import { createTenant, createUser, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { expectError, expectInvalidFields, ISO_MS } from '../support/expect.js';

const clock = new ManualClock('2026-03-02T09:00:00.000Z');
let t: TestApp;
let a: TestTenant;
let b: TestTenant;
let ownerId: string;

const input = (overrides: Record<string, unknown> = {}) => ({
  user_id: ownerId,
  name: 'Reception',
  phone_number: '+14155550199',
  prompt: 'Call {name} about {product}.',
  welcome_message: 'Hello {name}, this is Acme.',
  ...overrides,
});

const NINE_TO_FIVE = { timezone: 'America/New_York', days: [1, 2, 3, 4, 5], start: '09:00', end: '17:30' };

async function newAgent(overrides: Record<string, unknown> = {}, tenant = a) {
  const response = await tenant.request('POST', '/api/v1/agents', input(overrides));
  expect(response.status, response.raw).toBe(201);
  return response.body.data;
}

beforeAll(async () => {
  t = await startTestApp({ clock });
  a = await createTenant(t, { name: 'A' });
  b = await createTenant(t, { name: 'B' });
  ownerId = (await createUser(a)).id;
});
afterAll(() => t.close());

describe('POST /api/v1/agents', () => {
  it('creates an unpublished agent: 201, Location that answers, settings shown', async () => {
    const response = await a.request(
      'POST',
      '/api/v1/agents',
      input({ settings: { max_concurrent_calls: 2 } }),
    );
    expect(response.status, response.raw).toBe(201);
    const agent = response.body.data;
    expect(agent).toMatchObject({
      user_id: ownerId,
      name: 'Reception',
      phone_number: '+14155550199',
      draft: { prompt: 'Call {name} about {product}.', welcome_message: 'Hello {name}, this is Acme.' },
      published_version: null,
      settings: { max_concurrent_calls: 2 },
    });
    expect(agent.id).toMatch(/^agt_/);
    expect(agent.created_at).toMatch(ISO_MS);
    expect(agent.webhook_url).toBe(`http://voiceplane.test/webhooks/agents/${agent.webhook_id}/trigger`);
    expect(response.headers.location).toBe(`http://voiceplane.test/api/v1/agents/${agent.id}`);
    const fetched = await a.request('GET', new URL(String(response.headers.location)).pathname);
    expect(fetched.status).toBe(200);
    expect(fetched.body.data).toEqual(agent);
  });

  it('without settings, settings are {}', async () => {
    expect((await newAgent()).settings).toEqual({});
  });

  it('422 validation_failed for bad fields, naming each; nothing stored', async () => {
    const before = (await a.request('GET', '/api/v1/agents?limit=1')).body.pagination.total;
    expectInvalidFields(await a.request('POST', '/api/v1/agents', input({ phone_number: '555', name: '' })), [
      'phone_number',
      'name',
    ]);
    expectInvalidFields(await a.request('POST', '/api/v1/agents', { ...input(), extra: 1 }), ['extra']);
    expect((await a.request('GET', '/api/v1/agents?limit=1')).body.pagination.total).toBe(before);
  });

  it('404 for a user that is not a live user of the tenant (unknown, other tenant, deleted)', async () => {
    expectError(
      await a.request('POST', '/api/v1/agents', input({ user_id: 'usr_missing' })),
      404,
      'not_found',
    );
    const foreign = await createUser(b);
    expectError(await a.request('POST', '/api/v1/agents', input({ user_id: foreign.id })), 404, 'not_found');
    const gone = await createUser(a);
    expect((await a.request('DELETE', `/api/v1/users/${gone.id}`)).status).toBe(200);
    expectError(await a.request('POST', '/api/v1/agents', input({ user_id: gone.id })), 404, 'not_found');
  });

  it('422 comes before 404: invalid settings with an unknown user', async () => {
    const response = await a.request(
      'POST',
      '/api/v1/agents',
      input({
        user_id: 'usr_missing',
        settings: { calling_hours: { ...NINE_TO_FIVE, timezone: 'Mars/Base' } },
      }),
    );
    expectInvalidFields(response, ['settings.calling_hours.timezone']);
  });

  it('Idempotency-Key: a retry replays the 201 and creates one agent; another body is 409', async () => {
    const key = { 'idempotency-key': `agent-${Date.now()}` };
    const first = await a.request('POST', '/api/v1/agents', input({ name: 'Once' }), key);
    expect(first.status).toBe(201);
    const again = await a.request('POST', '/api/v1/agents', input({ name: 'Once' }), key);
    expect(again.status).toBe(201);
    expect(again.headers['idempotent-replayed']).toBe('true');
    expect(again.body).toEqual(first.body);
    expect(again.headers.location).toBe(first.headers.location);
    const listed = await a.request('GET', `/api/v1/agents?user_id=${ownerId}&limit=100`);
    expect(listed.body.data.filter((x: any) => x.name === 'Once')).toHaveLength(1);
    expectError(
      await a.request('POST', '/api/v1/agents', input({ name: 'Other' }), key),
      409,
      'idempotency_key_reuse',
    );
  });
});

describe('settings validation', () => {
  const create = (settings: unknown) => a.request('POST', '/api/v1/agents', input({ settings }));

  it('accepts every control and shows them back', async () => {
    const settings = {
      max_concurrent_calls: 3,
      calling_hours: { timezone: 'Europe/Paris', days: [6, 7], start: '22:00', end: '06:00' },
      retry: { max_attempts: 3, delay_minutes: 30 },
    };
    const response = await create(settings);
    expect(response.status, response.raw).toBe(201);
    expect(response.body.data.settings).toEqual(settings);
  });

  it.each([
    ['an unknown key', { colour: 'blue' }, ['settings.colour']],
    [
      'an unknown calling_hours key',
      { calling_hours: { ...NINE_TO_FIVE, lunch: true } },
      ['settings.calling_hours.lunch'],
    ],
    [
      'an unknown time zone',
      { calling_hours: { ...NINE_TO_FIVE, timezone: 'America/Springfield' } },
      ['settings.calling_hours.timezone'],
    ],
    ['day 0', { calling_hours: { ...NINE_TO_FIVE, days: [0, 1] } }, ['settings.calling_hours.days.0']],
    ['day 8', { calling_hours: { ...NINE_TO_FIVE, days: [8] } }, ['settings.calling_hours.days.0']],
    ['no days', { calling_hours: { ...NINE_TO_FIVE, days: [] } }, ['settings.calling_hours.days']],
    ['a repeated day', { calling_hours: { ...NINE_TO_FIVE, days: [1, 1] } }, ['settings.calling_hours.days']],
    ['24:00', { calling_hours: { ...NINE_TO_FIVE, end: '24:00' } }, ['settings.calling_hours.end']],
    [
      'start equal to end',
      { calling_hours: { ...NINE_TO_FIVE, start: '09:00', end: '09:00' } },
      ['settings.calling_hours.end'],
    ],
    ['a cap of 0', { max_concurrent_calls: 0 }, ['settings.max_concurrent_calls']],
    ['6 attempts', { retry: { max_attempts: 6, delay_minutes: 5 } }, ['settings.retry.max_attempts']],
    ['a delay of 0', { retry: { max_attempts: 2, delay_minutes: 0 } }, ['settings.retry.delay_minutes']],
  ])('422 validation_failed for %s', async (_label, settings, fields) => {
    const response = await create(settings);
    expectError(response, 422, 'validation_failed');
    const named = response.body.error.details.map((d: { field: string }) => d.field);
    for (const field of fields)
      expect(
        named.some((n: string) => n.startsWith(field)),
        response.raw,
      ).toBe(true);
  });

  it('PATCH settings replaces the whole object; {} clears it; invalid changes nothing', async () => {
    const agent = await newAgent({
      settings: { max_concurrent_calls: 2, retry: { max_attempts: 2, delay_minutes: 5 } },
    });
    const patched = await a.request('PATCH', `/api/v1/agents/${agent.id}`, {
      settings: { calling_hours: NINE_TO_FIVE },
    });
    expect(patched.status, patched.raw).toBe(200);
    expect(patched.body.data.settings).toEqual({ calling_hours: NINE_TO_FIVE });
    expectInvalidFields(
      await a.request('PATCH', `/api/v1/agents/${agent.id}`, {
        name: 'Changed',
        settings: { calling_hours: { ...NINE_TO_FIVE, timezone: 'Nowhere/Land' } },
      }),
      ['settings.calling_hours.timezone'],
    );
    const unchanged = await a.request('GET', `/api/v1/agents/${agent.id}`);
    expect(unchanged.body.data).toMatchObject({
      name: 'Reception',
      settings: { calling_hours: NINE_TO_FIVE },
    });
    const cleared = await a.request('PATCH', `/api/v1/agents/${agent.id}`, { settings: {} });
    expect(cleared.body.data.settings).toEqual({});
  });
});

describe('GET /api/v1/agents', () => {
  it('lists the tenant’s live agents with the user filter, sorting and pagination', async () => {
    const tenant = await createTenant(t, { name: 'Lists' });
    const u1 = (await createUser(tenant)).id;
    const u2 = (await createUser(tenant)).id;
    const names = ['Charlie', 'Alpha', 'Bravo'];
    const created = [];
    for (const name of names) {
      clock.advance(1000);
      created.push((await tenant.request('POST', '/api/v1/agents', input({ user_id: u1, name }))).body.data);
    }
    await tenant.request('POST', '/api/v1/agents', input({ user_id: u2, name: 'Other owner' }));
    const page = await tenant.request('GET', `/api/v1/agents?user_id=${u1}&limit=2`);
    expect(page.status).toBe(200);
    expect(page.body.data.map((x: any) => x.name)).toEqual(['Bravo', 'Alpha']);
    expect(page.body.pagination).toEqual({ page: 1, limit: 2, total: 3, pages: 2, has_more: true });
    const byName = await tenant.request('GET', `/api/v1/agents?user_id=${u1}&sort_by=name&sort_order=asc`);
    expect(byName.body.data.map((x: any) => x.name)).toEqual(
      [...names].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0)),
    );
    const all = await tenant.request('GET', '/api/v1/agents');
    expect(all.body.pagination.total).toBe(4);
    const past = await tenant.request('GET', '/api/v1/agents?page=9');
    expect(past.body).toMatchObject({ data: [], pagination: { total: 4, page: 9 } });
    const unknown = await tenant.request('GET', '/api/v1/agents?user_id=usr_nobody');
    expect(unknown.body.data).toEqual([]);
    await tenant.request('DELETE', `/api/v1/agents/${created[0].id}`);
    expect((await tenant.request('GET', `/api/v1/agents?user_id=${u1}`)).body.pagination.total).toBe(2);
    expectInvalidFields(await tenant.request('GET', '/api/v1/agents?sort_by=prompt&limit=0'), [
      'sort_by',
      'limit',
    ]);
  });
});

describe('PATCH, publish, versions, rotate-webhook', () => {
  it('PATCH edits the draft, never a published version; publish freezes n+1', async () => {
    const agent = await newAgent();
    const v1 = await a.request('POST', `/api/v1/agents/${agent.id}/publish`);
    expect(v1.status).toBe(200);
    expect(v1.body.data.published_version).toBe(1);
    const patched = await a.request('PATCH', `/api/v1/agents/${agent.id}`, {
      prompt: 'New prompt for {name}.',
      phone_number: '+14155550100',
      name: 'Renamed',
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      name: 'Renamed',
      phone_number: '+14155550100',
      draft: { prompt: 'New prompt for {name}.' },
      published_version: 1,
    });
    clock.advance(1000);
    const v2 = await a.request('POST', `/api/v1/agents/${agent.id}/publish`);
    expect(v2.body.data.published_version).toBe(2);
    const versions = await a.request('GET', `/api/v1/agents/${agent.id}/versions`);
    expect(versions.status).toBe(200);
    expect(versions.body.data.map((v: any) => [v.version, v.prompt, v.phone_number])).toEqual([
      [2, 'New prompt for {name}.', '+14155550100'],
      [1, 'Call {name} about {product}.', '+14155550199'],
    ]);
    expect(versions.body.data[0].published_at).toMatch(ISO_MS);
    expect(versions.body.pagination).toMatchObject({ total: 2, pages: 1, has_more: false });
    const second = await a.request('GET', `/api/v1/agents/${agent.id}/versions?limit=1&page=2`);
    expect(second.body.data.map((v: any) => v.version)).toEqual([1]);
    expectInvalidFields(await a.request('PATCH', `/api/v1/agents/${agent.id}`, { published_version: 5 }), [
      'published_version',
    ]);
  });

  it('rotate-webhook: a new URL; the old one answers 404 at once', async () => {
    const agent = await newAgent();
    await grantCredits(t, ownerId, 50);
    await a.request('POST', `/api/v1/agents/${agent.id}/publish`);
    const call = { phone: '+14155550123', name: 'Ada', product: 'tea' };
    expect((await trigger(t, agent.webhook_id, call)).status).toBe(202);
    const rotated = await a.request('POST', `/api/v1/agents/${agent.id}/rotate-webhook`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.webhook_id).not.toBe(agent.webhook_id);
    expect(rotated.body.data.webhook_url).toContain(rotated.body.data.webhook_id);
    expectError(await trigger(t, agent.webhook_id, call), 404, 'not_found');
    expect((await trigger(t, rotated.body.data.webhook_id, call)).status).toBe(202);
  });
});

describe('DELETE /api/v1/agents/{id}', () => {
  it('soft-deletes: the webhook answers 404 at once, every agent route 404, calls stay readable, DELETE repeats', async () => {
    const agent = await newAgent();
    await grantCredits(t, ownerId, 50);
    await a.request('POST', `/api/v1/agents/${agent.id}/publish`);
    const call = { phone: '+14155550123', name: 'Ada', product: 'tea' };
    // Served once, so this process caches the webhook target: deletion must still win.
    const placed = await trigger(t, agent.webhook_id, call);
    expect(placed.status, placed.raw).toBe(202);

    clock.advance(5000);
    const deleted = await a.request('DELETE', `/api/v1/agents/${agent.id}`);
    expect(deleted.status).toBe(200);
    expect(deleted.body.data).toEqual({ id: agent.id, deleted_at: clock.now().toISOString() });
    expectError(await trigger(t, agent.webhook_id, call), 404, 'not_found');

    for (const [method, path, body] of [
      ['GET', `/api/v1/agents/${agent.id}`],
      ['PATCH', `/api/v1/agents/${agent.id}`, { name: 'Back' }],
      ['POST', `/api/v1/agents/${agent.id}/publish`],
      ['GET', `/api/v1/agents/${agent.id}/versions`],
      ['POST', `/api/v1/agents/${agent.id}/rotate-webhook`],
    ] as const) {
      expectError(await a.request(method, path, body), 404, 'not_found');
    }
    expectError(await t.admin('GET', `/admin/v1/agents/${agent.id}`), 404, 'not_found');
    const listed = await a.request('GET', '/api/v1/agents?limit=100');
    expect(listed.raw).not.toContain(agent.id);

    clock.advance(5000);
    const again = await a.request('DELETE', `/api/v1/agents/${agent.id}`);
    expect(again.status).toBe(200);
    expect(again.body).toEqual(deleted.body);

    const stored = await t.admin('GET', `/admin/v1/calls/${placed.body.data.id}`);
    expect(stored.status).toBe(200);
    expect(stored.body.data.agent_id).toBe(agent.id);
  });

  it('404 for an unknown agent', async () => {
    expectError(await a.request('DELETE', '/api/v1/agents/agt_missing'), 404, 'not_found');
  });
});

describe('tenant isolation and scopes', () => {
  it("another tenant's agent is 404 on every route, and is left unchanged", async () => {
    const agent = await newAgent();
    for (const [method, path, body] of [
      ['GET', `/api/v1/agents/${agent.id}`],
      ['PATCH', `/api/v1/agents/${agent.id}`, { name: 'Stolen' }],
      ['POST', `/api/v1/agents/${agent.id}/publish`],
      ['GET', `/api/v1/agents/${agent.id}/versions`],
      ['POST', `/api/v1/agents/${agent.id}/rotate-webhook`],
      ['DELETE', `/api/v1/agents/${agent.id}`],
    ] as const) {
      expectError(await b.request(method, path, body), 404, 'not_found');
    }
    expect((await b.request('GET', '/api/v1/agents?limit=100')).raw).not.toContain(agent.id);
    const own = await a.request('GET', `/api/v1/agents/${agent.id}`);
    expect(own.body.data).toEqual(agent);
  });

  it('agents:read reads but cannot write; agents:write writes; other scopes neither', async () => {
    const agent = await newAgent();
    const reader = await t.admin('POST', `/admin/v1/tenants/${a.id}/api-keys`, { scopes: ['agents:read'] });
    const writer = await t.admin('POST', `/admin/v1/tenants/${a.id}/api-keys`, { scopes: ['agents:write'] });
    const other = await t.admin('POST', `/admin/v1/tenants/${a.id}/api-keys`, {
      scopes: ['users:read', 'users:write', 'calls:read', 'calls:write'],
    });
    const as = (key: { body: any }) => (method: any, path: string, body?: unknown) =>
      t.partner(key.body.data.key, method, path, body);
    const reads = [
      ['GET', '/api/v1/agents'],
      ['GET', `/api/v1/agents/${agent.id}`],
      ['GET', `/api/v1/agents/${agent.id}/versions`],
    ] as const;
    const writes = [
      ['POST', '/api/v1/agents', input()],
      ['PATCH', `/api/v1/agents/${agent.id}`, { name: 'W' }],
      ['POST', `/api/v1/agents/${agent.id}/publish`],
      ['POST', `/api/v1/agents/${agent.id}/rotate-webhook`],
    ] as const;
    for (const [method, path] of reads) {
      expect((await as(reader)(method, path)).status).toBe(200);
      const refused = await as(writer)(method, path);
      expectError(refused, 403, 'permission_denied');
      expect(refused.body.error.details).toEqual({ required_scopes: ['agents:read'] });
      expectError(await as(other)(method, path), 403, 'permission_denied');
    }
    for (const [method, path, body] of writes) {
      const refused = await as(reader)(method, path, body);
      expectError(refused, 403, 'permission_denied');
      expect(refused.body.error.details).toEqual({ required_scopes: ['agents:write'] });
      expectError(await as(other)(method, path, body), 403, 'permission_denied');
      expect((await as(writer)(method, path, body)).status).toBeLessThan(300);
    }
    expectError(await as(reader)('DELETE', `/api/v1/agents/${agent.id}`), 403, 'permission_denied');
    expect((await as(writer)('DELETE', `/api/v1/agents/${agent.id}`)).status).toBe(200);
  });
});

describe('the operator API uses the same service', () => {
  it('creates, reads and validates settings like the partner API', async () => {
    const created = await t.admin(
      'POST',
      `/admin/v1/tenants/${a.id}/agents`,
      input({ settings: { max_concurrent_calls: 4 } }),
    );
    expect(created.status, created.raw).toBe(201);
    const viaPartner = await a.request('GET', `/api/v1/agents/${created.body.data.id}`);
    expect(viaPartner.body.data).toEqual(created.body.data);
    expectInvalidFields(
      await t.admin('PATCH', `/admin/v1/agents/${created.body.data.id}`, {
        settings: { calling_hours: { ...NINE_TO_FIVE, start: '10:00', end: '10:00' } },
      }),
      ['settings.calling_hours.end'],
    );
  });
});

describe('the tenant-wide call cap (operator API)', () => {
  it('is null by default, set by PATCH, shown, and removed with null', async () => {
    const shown = await t.admin('GET', `/admin/v1/tenants/${a.id}`);
    expect(shown.body.data.max_concurrent_calls).toBeNull();
    const set = await t.admin('PATCH', `/admin/v1/tenants/${a.id}`, { max_concurrent_calls: 10 });
    expect(set.status).toBe(200);
    expect(set.body.data.max_concurrent_calls).toBe(10);
    expect((await t.admin('GET', `/admin/v1/tenants/${a.id}`)).body.data.max_concurrent_calls).toBe(10);
    expectInvalidFields(await t.admin('PATCH', `/admin/v1/tenants/${a.id}`, { max_concurrent_calls: 0 }), [
      'max_concurrent_calls',
    ]);
    expectInvalidFields(await t.admin('PATCH', `/admin/v1/tenants/${a.id}`, { max_concurrent_calls: 1.5 }), [
      'max_concurrent_calls',
    ]);
    expect((await t.admin('GET', `/admin/v1/tenants/${a.id}`)).body.data.max_concurrent_calls).toBe(10);
    const cleared = await t.admin('PATCH', `/admin/v1/tenants/${a.id}`, { max_concurrent_calls: null });
    expect(cleared.body.data.max_concurrent_calls).toBeNull();
  });
});
