/** GET /api/v1/users and GET /api/v1/users/{id}: every query parameter, default, bound, filter and sort. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import {
  createPlan,
  createTenant,
  createUser,
  startTestApp,
  type TestApp,
  type TestTenant,
} from '../support/app.js';
import { expectError, expectInvalidFields, ISO_MS, insertSubscription } from '../support/expect.js';

const clock = new ManualClock('2026-03-10T12:00:00.000Z');
let t: TestApp;
let a: TestTenant;
let b: TestTenant;
/** Users of tenant a, in creation order. */
const u: Record<string, { id: string; email: string; name: string }> = {};

const SECOND = 1000;
const DAY = 24 * 60 * 60 * 1000;

async function list(query = '', tenant = a) {
  return tenant.request('GET', `/api/v1/users${query}`);
}
const ids = (response: { body: { data: { id: string }[] } }) => response.body.data.map((x) => x.id);

beforeAll(async () => {
  t = await startTestApp({ clock });
  a = await createTenant(t, { name: 'A' });
  b = await createTenant(t, { name: 'B' });
  const people: [string, string, string][] = [
    ['alice', 'Alice Anders', 'alice@example.com'],
    ['bob', 'Bob_builder', 'BOB@Example.com'],
    ['carol', 'Carol 100%', 'carol@x.io'],
    ['dan', 'Dan \\ Slash', 'dan@x.io'],
    ['eve', 'Eve', 'eve@example.com'],
    ['eve2', 'Eve', 'eve2@example.com'],
  ];
  for (const [key, name, email] of people) {
    // eve and eve2 share created_at: the id tie-break orders them.
    if (key !== 'eve2') clock.advance(SECOND);
    u[key] = await createUser(a, { name, email });
  }
  expect((await t.admin('PATCH', `/admin/v1/users/${u.carol.id}`, { status: 'blocked' })).status).toBe(200);
  expect((await t.admin('PATCH', `/admin/v1/users/${u.dan.id}`, { status: 'pending' })).status).toBe(200);
  await createUser(b, { name: 'Alice Other Tenant', email: 'alice@example.com' });
});
afterAll(() => t.close());

describe('GET /api/v1/users: defaults and shape', () => {
  it('lists every user of the tenant (pending included), newest first, 20 per page', async () => {
    const response = await list();
    expect(response.status).toBe(200);
    const [e1, e2] = [u.eve.id, u.eve2.id].sort().reverse();
    expect(ids(response)).toEqual([e1, e2, u.dan.id, u.carol.id, u.bob.id, u.alice.id]);
    expect(response.body.pagination).toEqual({ page: 1, limit: 20, total: 6, pages: 1, has_more: false });
    expect(Object.keys(response.body).sort()).toEqual(['data', 'pagination']);
  });

  it('answers the list item fields exactly', async () => {
    const response = await list('?search=alice');
    expect(response.body.data).toEqual([
      {
        id: u.alice.id,
        name: 'Alice Anders',
        email: 'alice@example.com',
        phone: null,
        status: 'active',
        created_at: '2026-03-10T12:00:01.000Z',
        plan_id: null,
        plan_name: null,
      },
    ]);
    for (const item of (await list()).body.data) expect(item.created_at).toMatch(ISO_MS);
  });

  it('shows the phone when one was given', async () => {
    const c = await createTenant(t);
    await createUser(c, { phone: '+14155550123' });
    expect((await list('', c)).body.data[0].phone).toBe('+14155550123');
  });

  it('never shows another tenant’s users', async () => {
    const response = await list('', b);
    expect(response.body.data.map((x: { name: string }) => x.name)).toEqual(['Alice Other Tenant']);
    expect(response.body.pagination.total).toBe(1);
  });
});

describe('GET /api/v1/users: page and limit', () => {
  it('pages through with pages = ceil(total/limit) and has_more = page < pages', async () => {
    const p1 = await list('?limit=4');
    expect(p1.body.pagination).toEqual({ page: 1, limit: 4, total: 6, pages: 2, has_more: true });
    const p2 = await list('?limit=4&page=2');
    expect(p2.body.pagination).toEqual({ page: 2, limit: 4, total: 6, pages: 2, has_more: false });
    expect([...ids(p1), ...ids(p2)]).toEqual(ids(await list()));
  });

  it('answers a page past the end with data [] and the true total', async () => {
    const response = await list('?limit=4&page=3');
    expect(response.status).toBe(200);
    expect(response.body).toEqual({
      data: [],
      pagination: { page: 3, limit: 4, total: 6, pages: 2, has_more: false },
    });
  });

  it('accepts the extreme bounds', async () => {
    const last = await list('?page=9007199254740991&limit=100');
    expect(last.status).toBe(200);
    expect(last.body).toEqual({
      data: [],
      pagination: { page: 9007199254740991, limit: 100, total: 6, pages: 1, has_more: false },
    });
    const one = await list('?page=9007199254740991&limit=1');
    expect(one.status).toBe(200);
    expect(one.body.pagination.total).toBe(6);
    expect((await list('?limit=1')).body.pagination).toEqual({
      page: 1,
      limit: 1,
      total: 6,
      pages: 6,
      has_more: true,
    });
    expect((await list('?limit=100')).body.data).toHaveLength(6);
    expect((await list('?page=01&limit=010')).body.pagination).toMatchObject({ page: 1, limit: 10 });
  });

  it.each([
    ['page', '0'],
    ['page', '-1'],
    ['page', '9007199254740992'],
    ['page', '99999999999999999999999'],
    ['page', '1.5'],
    ['page', '1.0'],
    ['page', '0x10'],
    ['page', '%201'],
    ['page', '1%20'],
    ['page', '1e2'],
    ['page', '+1'],
    ['page', 'abc'],
    ['page', ''],
    ['limit', '0'],
    ['limit', '101'],
    ['limit', '1.5'],
    ['limit', '0x10'],
    ['limit', '%201'],
    ['limit', '1e2'],
    ['limit', 'ten'],
  ])('rejects %s=%s with 422 naming the parameter', async (name, value) => {
    expectInvalidFields(await list(`?${name}=${value}`), [name]);
  });

  it('names every invalid parameter at once', async () => {
    expectInvalidFields(await list('?page=0&limit=500&sort_by=email&sort_order=up&status=pending'), [
      'page',
      'limit',
      'sort_by',
      'sort_order',
      'status',
    ]);
  });

  it('gives one readable issue per enumerated parameter', async () => {
    const response = await list('?status=pending&sort_by=email&sort_order=up');
    expect(response.body.error.details).toEqual([
      { field: 'status', issue: 'must be one of: active, blocked.' },
      { field: 'sort_by', issue: 'must be one of: created_at, name.' },
      { field: 'sort_order', issue: 'must be one of: asc, desc.' },
    ]);
  });

  it('rejects a repeated parameter', async () => {
    expectInvalidFields(await list('?page=1&page=2'), ['page']);
  });

  it('ignores unknown query parameters', async () => {
    const response = await list('?colour=blue&limit=2');
    expect(response.status).toBe(200);
    expect(response.body.pagination.limit).toBe(2);
  });
});

describe('GET /api/v1/users: status filter', () => {
  it('status=active lists approved users only', async () => {
    const response = await list('?status=active');
    expect(new Set(ids(response))).toEqual(new Set([u.alice.id, u.bob.id, u.eve.id, u.eve2.id]));
    expect(response.body.pagination.total).toBe(4);
  });

  it('status=blocked lists blocked users only', async () => {
    const response = await list('?status=blocked');
    expect(ids(response)).toEqual([u.carol.id]);
    expect(response.body.data[0].status).toBe('blocked');
  });

  it('pending users appear only without the filter; status=pending is rejected', async () => {
    const all = await list();
    expect(all.body.data.find((x: { id: string }) => x.id === u.dan.id)?.status).toBe('pending');
    expectInvalidFields(await list('?status=pending'), ['status']);
    expectInvalidFields(await list('?status=ACTIVE'), ['status']);
    expectInvalidFields(await list('?status='), ['status']);
  });
});

describe('GET /api/v1/users: search', () => {
  const search = async (term: string, extra = '') =>
    ids(await list(`?search=${encodeURIComponent(term)}${extra}`)).sort();

  it('matches name and email case-insensitively as a substring', async () => {
    expect(await search('ALICE')).toEqual([u.alice.id]);
    expect(await search('anders')).toEqual([u.alice.id]);
    expect(await search('bob@example')).toEqual([u.bob.id]);
    expect(await search('EXAMPLE.com')).toEqual([u.alice.id, u.bob.id, u.eve.id, u.eve2.id].sort());
    expect(await search('nobody')).toEqual([]);
  });

  it('treats %, _ and \\ literally', async () => {
    expect(await search('%')).toEqual([u.carol.id]);
    expect(await search('0%')).toEqual([u.carol.id]);
    expect(await search('_')).toEqual([u.bob.id]);
    // As wildcards these would match carol@x.io and dan@x.io.
    expect(await search('x_io')).toEqual([]);
    expect(await search('x%io')).toEqual([]);
    expect(await search('\\')).toEqual([u.dan.id]);
    expect(await search('\\ S')).toEqual([u.dan.id]);
  });

  it('answers a repeated search alike (once its total is known, the page is found by a walk)', async () => {
    const cases: [string, string[]][] = [
      ['%', [u.carol.id]],
      ['0%', [u.carol.id]],
      ['_', [u.bob.id]],
      ['x_io', []],
      ['x%io', []],
      ['\\', [u.dan.id]],
      ['\\ S', [u.dan.id]],
      ['ALICE', [u.alice.id]],
      ['bob@example', [u.bob.id]],
      ['anders\nalice', []],
    ];
    for (const [term, expected] of cases) {
      expect(await search(term)).toEqual(expected);
      expect(await search(term)).toEqual(expected);
    }
  });

  it('never matches across the end of the name and the start of the email', async () => {
    // Both are stored lowered as one search text (`alice anders\nalice@example.com`).
    expect(await search('anders\nalice')).toEqual([]);
    expect(await search('s\na')).toEqual([]);
    expect(await search('\n')).toEqual([]);
    expect(await search('anders')).toEqual([u.alice.id]);
  });

  it('combines with the status filter and paginates the matches', async () => {
    expect(await search('e', '&status=blocked')).toEqual([]);
    expect(await search('x.io', '&status=blocked')).toEqual([u.carol.id]);
    const response = await list('?search=example&limit=1&page=2');
    expect(response.body.pagination).toEqual({ page: 2, limit: 1, total: 4, pages: 4, has_more: true });
  });

  it('accepts 200 characters and rejects 201', async () => {
    expect((await list(`?search=${'a'.repeat(200)}`)).status).toBe(200);
    expectInvalidFields(await list(`?search=${'a'.repeat(201)}`), ['search']);
  });

  it('an empty search matches everyone', async () => {
    expect((await list('?search=')).body.pagination.total).toBe(6);
  });
});

describe('GET /api/v1/users: sorting', () => {
  const names = (response: { body: { data: { name: string }[] } }) => response.body.data.map((x) => x.name);

  it('sort_by=name asc and desc, ties broken by id in the same direction', async () => {
    const [e1, e2] = [u.eve.id, u.eve2.id].sort();
    const asc = await list('?sort_by=name&sort_order=asc');
    expect(names(asc)).toEqual(['Alice Anders', 'Bob_builder', 'Carol 100%', 'Dan \\ Slash', 'Eve', 'Eve']);
    expect(ids(asc).slice(4)).toEqual([e1, e2]);
    const desc = await list('?sort_by=name');
    expect(ids(desc)).toEqual([...ids(asc)].reverse());
  });

  it('sort_by=created_at asc is the exact reverse of the default', async () => {
    const asc = await list('?sort_by=created_at&sort_order=asc');
    expect(ids(asc)).toEqual(ids(await list()).reverse());
  });

  it('walking pages of one never repeats or skips a row', async () => {
    for (const order of ['sort_by=name&sort_order=asc', 'sort_by=created_at&sort_order=desc']) {
      const seen: string[] = [];
      for (let page = 1; page <= 6; page++) seen.push(...ids(await list(`?${order}&limit=1&page=${page}`)));
      expect(seen).toEqual(ids(await list(`?${order}`)));
    }
  });

  it('rejects unknown sort fields and directions', async () => {
    expectInvalidFields(await list('?sort_by=email'), ['sort_by']);
    expectInvalidFields(await list('?sort_order=ASC'), ['sort_order']);
  });
});

describe('plan_id and plan_name come from the current subscription', () => {
  it('are null without a subscription and set by an active or trialing one that has started', async () => {
    const c = await createTenant(t);
    const plan = await createPlan(t, c.id, { name: 'Pro' });
    const other = await createPlan(t, c.id, { name: 'Basic' });
    const users = {
      active: await createUser(c),
      trialing: await createUser(c),
      canceled: await createUser(c),
      pastDue: await createUser(c),
      future: await createUser(c),
      none: await createUser(c),
      switching: await createUser(c),
    };
    const now = clock.now().getTime();
    const started = { start: new Date(now - DAY), end: new Date(now + 29 * DAY) };
    const add = (userId: string, status: string, planId = plan.id, period = started) =>
      insertSubscription(t, { tenantId: c.id, userId, planId, status, ...period });
    await add(users.active.id, 'active');
    await add(users.trialing.id, 'trialing');
    await add(users.canceled.id, 'canceled');
    await add(users.pastDue.id, 'past_due');
    await add(users.future.id, 'active', plan.id, {
      start: new Date(now + DAY),
      end: new Date(now + 31 * DAY),
    });
    // A scheduled downgrade: the current plan stays until the new subscription starts.
    await add(users.switching.id, 'active', plan.id);
    await add(users.switching.id, 'active', other.id, {
      start: new Date(now + 2 * DAY),
      end: new Date(now + 32 * DAY),
    });

    const byId = new Map(
      (await list('?limit=100', c)).body.data.map(
        (x: { id: string; plan_id: string | null; plan_name: string | null }) => [
          x.id,
          [x.plan_id, x.plan_name],
        ],
      ),
    );
    expect(byId.get(users.active.id)).toEqual([plan.id, 'Pro']);
    expect(byId.get(users.trialing.id)).toEqual([plan.id, 'Pro']);
    expect(byId.get(users.canceled.id)).toEqual([null, null]);
    expect(byId.get(users.pastDue.id)).toEqual([null, null]);
    expect(byId.get(users.future.id)).toEqual([null, null]);
    expect(byId.get(users.none.id)).toEqual([null, null]);
    expect(byId.get(users.switching.id)).toEqual([plan.id, 'Pro']);

    const one = await c.request('GET', `/api/v1/users/${users.active.id}`);
    expect(one.body.data).toMatchObject({ id: users.active.id, plan_id: plan.id, plan_name: 'Pro' });
    // Once the scheduled start passes, the new plan is current.
    clock.advance(3 * DAY);
    expect((await c.request('GET', `/api/v1/users/${users.switching.id}`)).body.data.plan_id).toBe(other.id);
    expect((await c.request('GET', `/api/v1/users/${users.future.id}`)).body.data.plan_id).toBe(plan.id);
    clock.advance(-3 * DAY);
  });
});

describe('GET /api/v1/users/{id}', () => {
  it('answers the list item of a user of the tenant', async () => {
    const response = await a.request('GET', `/api/v1/users/${u.bob.id}`);
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual((await list('?search=bob')).body.data[0]);
  });

  it('answers 404 for another tenant’s user and an unknown id', async () => {
    expectError(await b.request('GET', `/api/v1/users/${u.bob.id}`), 404, 'not_found');
    expectError(await a.request('GET', '/api/v1/users/usr_doesnotexist'), 404, 'not_found');
  });
});
