/** The plan catalog: GET /api/v1/plans, GET /api/v1/plans/{id}, and its operator routes. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import {
  createPlan,
  createTenant,
  planInput,
  startTestApp,
  type TestApp,
  type TestTenant,
} from '../support/app.js';
import { expectError, expectInvalidFields, ISO_MS } from '../support/expect.js';

const clock = new ManualClock('2026-05-01T08:00:00.000Z');
let t: TestApp;
let a: TestTenant;
let b: TestTenant;
const p: Record<string, { id: string; name: string }> = {};

const list = (query = '', tenant = a) => tenant.request('GET', `/api/v1/plans${query}`);
const ids = (response: { body: { data: { id: string }[] } }) => response.body.data.map((x) => x.id);

const PLAN_FIELDS = [
  'active',
  'annual_price',
  'created_at',
  'currency',
  'description',
  'id',
  'included_minutes',
  'monthly_price',
  'name',
  'overage_rate',
  'provider',
  'topup_rate',
  'trial_period_days',
  'updated_at',
];

beforeAll(async () => {
  t = await startTestApp({ clock });
  a = await createTenant(t, { name: 'A' });
  b = await createTenant(t, { name: 'B' });
  const specs: [string, Record<string, unknown>][] = [
    ['starter', { name: 'Starter', provider: 'agency' }],
    ['growth', { name: 'Growth', provider: 'processor', monthly_price: 9900 }],
    ['inactive', { name: 'Legacy', provider: 'agency', active: false }],
    ['archived', { name: 'Archived', provider: 'processor' }],
    ['basic', { name: 'Basic', provider: 'processor' }],
  ];
  for (const [key, overrides] of specs) {
    clock.advance(1000);
    p[key] = await createPlan(t, a.id, overrides);
  }
  expect((await t.admin('DELETE', `/admin/v1/plans/${p.archived.id}`)).status).toBe(200);
  await createPlan(t, b.id, { name: 'Other tenant' });
});
afterAll(() => t.close());

describe('operator plan routes', () => {
  it('creates with defaults: active true, description null, trial_period_days 0', async () => {
    clock.advance(1000);
    const response = await t.admin(
      'POST',
      `/admin/v1/tenants/${b.id}/plans`,
      planInput({ name: 'Defaults' }),
    );
    expect(response.status).toBe(201);
    const plan = response.body.data;
    expect(Object.keys(plan).sort()).toEqual(PLAN_FIELDS);
    expect(plan).toMatchObject({
      name: 'Defaults',
      description: null,
      active: true,
      trial_period_days: 0,
      provider: 'agency',
      currency: 'usd',
      monthly_price: 2900,
      annual_price: 29000,
      included_minutes: 100,
      overage_rate: 0.12,
      topup_rate: 0.1,
    });
    expect(plan.id).toMatch(/^plan_[0-9A-Za-z]{20,}$/);
    expect(plan.created_at).toMatch(ISO_MS);
    expect(plan.updated_at).toBe(plan.created_at);
  });

  it('keeps every given field, numbers as numbers', async () => {
    const input = planInput({
      name: 'Full',
      description: 'All fields',
      active: false,
      provider: 'processor',
      currency: 'eur',
      monthly_price: 123456789012,
      trial_period_days: 14,
      overage_rate: 0.055,
    });
    const response = await t.admin('POST', `/admin/v1/tenants/${b.id}/plans`, input);
    expect(response.status).toBe(201);
    expect(response.body.data).toMatchObject(input);
  });

  it('types plan fields strictly', async () => {
    expectInvalidFields(
      await t.admin(
        'POST',
        `/admin/v1/tenants/${b.id}/plans`,
        planInput({ monthly_price: '1000', active: 'yes', provider: 'stripe' }),
      ),
      ['monthly_price', 'active', 'provider'],
    );
    expectInvalidFields(
      await t.admin('POST', `/admin/v1/tenants/${b.id}/plans`, planInput({ currency: 'USD', id: 'plan_x' })),
      ['currency', 'id'],
    );
    expectInvalidFields(
      await t.admin(
        'POST',
        `/admin/v1/tenants/${b.id}/plans`,
        planInput({ monthly_price: 1.5, trial_period_days: -1 }),
      ),
      ['monthly_price', 'trial_period_days'],
    );
    expectError(await t.admin('POST', '/admin/v1/tenants/ten_nope/plans', planInput()), 404, 'not_found');
  });

  it('refuses rates with more decimals than stored instead of rounding them', async () => {
    const url = `/admin/v1/tenants/${b.id}/plans`;
    const exact = await t.admin(
      'POST',
      url,
      planInput({ overage_rate: 0.123456, topup_rate: 999999.999999 }),
    );
    expect(exact.status).toBe(201);
    expect(exact.body.data).toMatchObject({ overage_rate: 0.123456, topup_rate: 999999.999999 });
    const response = await t.admin(
      'POST',
      url,
      planInput({ overage_rate: 0.1234567, topup_rate: 999999.9999999 }),
    );
    expectInvalidFields(response, ['overage_rate', 'topup_rate']);
    expectInvalidFields(
      await t.admin('PATCH', `/admin/v1/plans/${exact.body.data.id}`, { topup_rate: 0.00000001 }),
      ['topup_rate'],
    );
    // Checked before existence (422 before 404).
    expectInvalidFields(await t.admin('PATCH', '/admin/v1/plans/plan_missing', { overage_rate: 0.1234567 }), [
      'overage_rate',
    ]);
    expectInvalidFields(
      await t.admin('POST', '/admin/v1/tenants/ten_missing/plans', planInput({ overage_rate: 0.1234567 })),
      ['overage_rate'],
    );
  });

  it('patches any field but provider and currency', async () => {
    const plan = await createPlan(t, b.id, { name: 'Patchable' });
    clock.advance(5000);
    const response = await t.admin('PATCH', `/admin/v1/plans/${plan.id}`, {
      name: 'Patched',
      description: 'now described',
      monthly_price: 3900,
      trial_period_days: 7,
    });
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({
      ...plan,
      name: 'Patched',
      description: 'now described',
      monthly_price: 3900,
      trial_period_days: 7,
      updated_at: clock.now().toISOString(),
    });
    expect(response.body.data.created_at).toBe(plan.created_at);
    expect(
      (await t.admin('PATCH', `/admin/v1/plans/${plan.id}`, { description: null })).body.data.description,
    ).toBeNull();
    expectInvalidFields(await t.admin('PATCH', `/admin/v1/plans/${plan.id}`, { provider: 'processor' }), [
      'provider',
    ]);
    expectInvalidFields(await t.admin('PATCH', `/admin/v1/plans/${plan.id}`, { currency: 'eur', name: 5 }), [
      'currency',
      'name',
    ]);
    expectError(await t.admin('PATCH', '/admin/v1/plans/plan_nope', { name: 'x' }), 404, 'not_found');
    const empty = await t.admin('PATCH', `/admin/v1/plans/${plan.id}`, {});
    expectError(empty, 422, 'validation_failed');
    expect(
      (await t.admin('PATCH', `/admin/v1/plans/${plan.id}`, { description: 5 })).body.error.details,
    ).toEqual([{ field: 'description', issue: 'must be of type string or null.' }]);
  });

  it('delete archives: 200 Plan with active false, then 404 by id, listed only with active=false', async () => {
    const plan = await createPlan(t, b.id, { name: 'To archive' });
    const response = await t.admin('DELETE', `/admin/v1/plans/${plan.id}`);
    expect(response.status).toBe(200);
    expect(response.body.data).toMatchObject({ id: plan.id, active: false });
    expectError(await b.request('GET', `/api/v1/plans/${plan.id}`), 404, 'not_found');
    expect(ids(await list('?limit=100', b))).not.toContain(plan.id);
    expect(ids(await list('?limit=100&active=false', b))).toContain(plan.id);
    // Deleting again answers the same archived plan.
    expect((await t.admin('DELETE', `/admin/v1/plans/${plan.id}`)).body.data).toEqual(response.body.data);
    expectError(await t.admin('DELETE', '/admin/v1/plans/plan_nope'), 404, 'not_found');
  });
});

describe('GET /api/v1/plans', () => {
  it('lists only offered plans by default, newest first', async () => {
    const response = await list();
    expect(response.status).toBe(200);
    expect(ids(response)).toEqual([p.basic.id, p.growth.id, p.starter.id]);
    expect(response.body.pagination).toEqual({ page: 1, limit: 20, total: 3, pages: 1, has_more: false });
    for (const plan of response.body.data) expect(Object.keys(plan).sort()).toEqual(PLAN_FIELDS);
    expect(ids(await list('?active=true'))).toEqual(ids(response));
  });

  it('active=false includes inactive and archived plans', async () => {
    const response = await list('?active=false');
    expect(ids(response)).toEqual([p.basic.id, p.archived.id, p.inactive.id, p.growth.id, p.starter.id]);
    expect(response.body.pagination.total).toBe(5);
  });

  it('filters by provider', async () => {
    expect(ids(await list('?provider=processor'))).toEqual([p.basic.id, p.growth.id]);
    expect(ids(await list('?provider=agency'))).toEqual([p.starter.id]);
    expect(ids(await list('?provider=agency&active=false'))).toEqual([p.inactive.id, p.starter.id]);
  });

  it('sorts by name and created_at both ways', async () => {
    expect(ids(await list('?sort_by=name&sort_order=asc'))).toEqual([p.basic.id, p.growth.id, p.starter.id]);
    expect(ids(await list('?sort_by=name'))).toEqual([p.starter.id, p.growth.id, p.basic.id]);
    expect(ids(await list('?sort_by=created_at&sort_order=asc'))).toEqual([
      p.starter.id,
      p.growth.id,
      p.basic.id,
    ]);
  });

  it('breaks created_at ties by id', async () => {
    const c = await createTenant(t);
    const same = [];
    for (let i = 0; i < 4; i++) same.push((await createPlan(t, c.id, { name: 'Same' })).id);
    const asc = ids(await list('?sort_by=created_at&sort_order=asc', c));
    expect(asc).toEqual([...same].sort());
    expect(ids(await list('?sort_by=name&sort_order=desc', c))).toEqual([...same].sort().reverse());
    const walked = [];
    for (let page = 1; page <= 4; page++)
      walked.push(...ids(await list(`?limit=1&page=${page}&sort_by=name`, c)));
    expect(walked).toEqual([...same].sort().reverse());
  });

  it('paginates, with a page past the end answering data [] and the true total', async () => {
    expect((await list('?limit=2&active=false')).body.pagination).toEqual({
      page: 1,
      limit: 2,
      total: 5,
      pages: 3,
      has_more: true,
    });
    expect((await list('?limit=2&page=3&active=false')).body.pagination).toEqual({
      page: 3,
      limit: 2,
      total: 5,
      pages: 3,
      has_more: false,
    });
    expect((await list('?limit=2&page=4&active=false')).body).toEqual({
      data: [],
      pagination: { page: 4, limit: 2, total: 5, pages: 3, has_more: false },
    });
  });

  it('rejects bad parameters with 422 naming each', async () => {
    expectInvalidFields(await list('?active=yes'), ['active']);
    expectInvalidFields(await list('?active=1&provider=stripe'), ['active', 'provider']);
    expectInvalidFields(await list('?sort_by=price&sort_order=down&page=0&limit=101'), [
      'sort_by',
      'sort_order',
      'page',
      'limit',
    ]);
    expectInvalidFields(await list('?limit=1.5'), ['limit']);
  });

  it('never shows another tenant’s plans', async () => {
    const names = (await list('?limit=100&active=false', b)).body.data.map((x: { name: string }) => x.name);
    expect(names).toContain('Other tenant');
    expect(names).not.toContain('Growth');
    expect(names).not.toContain('Legacy');
  });
});

describe('GET /api/v1/plans/{id}', () => {
  it('answers an offered plan and an inactive one', async () => {
    const response = await a.request('GET', `/api/v1/plans/${p.growth.id}`);
    expect(response.status).toBe(200);
    expect(response.body.data).toEqual(
      (await list()).body.data.find((x: { id: string }) => x.id === p.growth.id),
    );
    const inactive = await a.request('GET', `/api/v1/plans/${p.inactive.id}`);
    expect(inactive.status).toBe(200);
    expect(inactive.body.data.active).toBe(false);
  });

  it('answers 404 for an archived plan, another tenant’s plan and an unknown id', async () => {
    expectError(await a.request('GET', `/api/v1/plans/${p.archived.id}`), 404, 'not_found');
    expectError(await b.request('GET', `/api/v1/plans/${p.growth.id}`), 404, 'not_found');
    expectError(await a.request('GET', '/api/v1/plans/plan_unknown'), 404, 'not_found');
  });
});

describe('plan list cache (PLAN_LIST_CACHE_MS)', () => {
  const names = async (tenant: TestTenant) =>
    (await list('?limit=100&active=false&sort_by=name&sort_order=asc', tenant)).body.data.map(
      (plan: { name: string }) => plan.name,
    );

  /** Polls the list until `seen` holds; answers how long that took. */
  async function msUntil(tenant: TestTenant, seen: (names: string[]) => boolean): Promise<number> {
    const started = Date.now();
    while (!seen(await names(tenant))) {
      if (Date.now() - started > 3000) throw new Error('the change never showed in the plan list');
      await new Promise((resolve) => setTimeout(resolve, 25));
    }
    return Date.now() - started;
  }

  it('shows each operator change through this process in the very next list', async () => {
    const c = await createTenant(t);
    const plan = await createPlan(t, c.id, { name: 'First' });
    expect(await names(c)).toEqual(['First']);
    const second = await createPlan(t, c.id, { name: 'Second' });
    expect(await names(c)).toEqual(['First', 'Second']);
    expect((await t.admin('PATCH', `/admin/v1/plans/${plan.id}`, { name: 'Renamed' })).status).toBe(200);
    expect(await names(c)).toEqual(['Renamed', 'Second']);
    expect((await t.admin('DELETE', `/admin/v1/plans/${second.id}`)).status).toBe(200);
    expect(ids(await list('', c))).toEqual([plan.id]);
  });

  it('shows a change made by another process (straight in the database) within the bound', async () => {
    const c = await createTenant(t);
    const plan = await createPlan(t, c.id, { name: 'Before' });
    expect(await names(c)).toEqual(['Before']);
    const { db } = t.services.database;
    await db.updateTable('plans').set({ name: 'After' }).where('id', '=', plan.id).execute();
    const renamedAfter = await msUntil(c, (seen) => seen[0] === 'After');
    await db.deleteFrom('plans').where('id', '=', plan.id).execute();
    const deletedAfter = await msUntil(c, (seen) => seen.length === 0);
    console.log(`[plans/cache] rename seen after ${renamedAfter} ms, delete after ${deletedAfter} ms`);
    // The bound is PLAN_LIST_CACHE_MS (500 ms); the rest is slack for a loaded CI machine.
    expect(renamedAfter).toBeLessThan(1500);
    expect(deletedAfter).toBeLessThan(1500);
  });

  it('keeps tenants apart: a change to one tenant’s plans leaves another’s list as it was', async () => {
    const c = await createTenant(t);
    const d = await createTenant(t);
    await createPlan(t, c.id, { name: 'C plan' });
    await createPlan(t, d.id, { name: 'D plan' });
    expect(await names(c)).toEqual(['C plan']);
    expect(await names(d)).toEqual(['D plan']);
    await createPlan(t, c.id, { name: 'C plan 2' });
    expect(await names(c)).toEqual(['C plan', 'C plan 2']);
    expect(await names(d)).toEqual(['D plan']);
  });
});
