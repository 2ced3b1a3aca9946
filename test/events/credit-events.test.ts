/**
 * Credit events: `credits.low` once per crossing below the tenant's `low_balance_minutes`,
 * `credits.exhausted` when a balance reaches zero from above, both written by the ledger statement
 * itself (so also by a call batch's debit, which shares it) and gone with a rolled-back change;
 * the threshold set through the operator API.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { runPrepared } from '../../src/core/db/database.js';
import { newId } from '../../src/core/ids.js';
import { APPEND_CREDIT_ENTRIES, addCreditEntry } from '../../src/credits/repository.js';
import { createTenant, createUser, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { expectInvalidFields } from '../support/expect.js';
import { type Receiver, startReceiver } from './helpers.js';

const clock = new ManualClock('2026-06-01T08:00:00.000Z');
let t: TestApp;
let receiver: Receiver;

beforeAll(async () => {
  t = await startTestApp({ clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
});
afterAll(async () => {
  await receiver?.close();
  await t.close();
});

async function tenantWithThreshold(threshold: number | null): Promise<TestTenant> {
  const tenant = await createTenant(t);
  const patched = await t.admin('PATCH', `/admin/v1/tenants/${tenant.id}`, {
    low_balance_minutes: threshold,
  });
  expect(patched.status, patched.raw).toBe(200);
  return tenant;
}

async function move(userId: string, minutes: number): Promise<number> {
  const answer = await t.admin('POST', `/admin/v1/users/${userId}/credits`, { minutes });
  expect(answer.status, answer.raw).toBe(201);
  return answer.body.data.balance_minutes;
}

async function creditEvents(tenantId: string) {
  const rows = await t.services.database.db
    .selectFrom('events')
    .select(['id', 'type', 'created_at', 'data'])
    .where('tenant_id', '=', tenantId)
    .where('type', 'like', 'credits.%')
    .orderBy('created_at')
    .execute();
  return rows.map((row) => ({ id: row.id, type: row.type, object: row.data.object }));
}

describe('low_balance_minutes on the tenant', () => {
  it('is null by default, set by PATCH (an integer ≥ 1), cleared with null; bad values change nothing', async () => {
    const tenant = await createTenant(t);
    const url = `/admin/v1/tenants/${tenant.id}`;
    expect((await t.admin('GET', url)).body.data.low_balance_minutes).toBeNull();
    const set = await t.admin('PATCH', url, { low_balance_minutes: 30 });
    expect(set.status, set.raw).toBe(200);
    expect(set.body.data.low_balance_minutes).toBe(30);
    for (const bad of [0, -5, 1.5, '30']) {
      expectInvalidFields(await t.admin('PATCH', url, { low_balance_minutes: bad }), ['low_balance_minutes']);
    }
    expect((await t.admin('GET', url)).body.data.low_balance_minutes).toBe(30);
    const cleared = await t.admin('PATCH', url, { low_balance_minutes: null });
    expect(cleared.body.data.low_balance_minutes).toBeNull();
  });
});

describe('credits.low and credits.exhausted', () => {
  it('records credits.low once per crossing below the threshold and credits.exhausted on reaching zero', async () => {
    const tenant = await tenantWithThreshold(30);
    const user = await createUser(tenant);
    const low = (balance: number) => ({
      type: 'credits.low',
      object: { user_id: user.id, balance_minutes: balance, threshold_minutes: 30 },
    });
    const steps: [number, number, unknown[]][] = [
      [100, 100, []],
      [-70, 30, []], // at the threshold: not below it
      [-1, 29, [low(29)]],
      [-9, 20, []], // already below: no second event for the same crossing
      [+50, 70, []],
      [-45, 25, [low(25)]], // back above, then below again: a new crossing
      [-25, 0, [{ type: 'credits.exhausted', object: low(0).object }]],
      [-5, -5, []],
    ];
    const seen: unknown[] = [];
    for (const [minutes, expected, events] of steps) {
      clock.advance(1000);
      expect(await move(user.id, minutes)).toBe(expected);
      seen.push(...events);
      expect((await creditEvents(tenant.id)).map(({ type, object }) => ({ type, object }))).toEqual(seen);
    }
  });

  it('a debit from above the threshold to below zero records both, delivered and verified', async () => {
    const tenant = await tenantWithThreshold(10);
    receiver = await startReceiver();
    const endpoint = await tenant.request('POST', '/api/v1/webhook-endpoints', {
      url: receiver.url,
      events: ['credits.low', 'credits.exhausted'],
    });
    expect(endpoint.status, endpoint.raw).toBe(201);
    receiver.secret = endpoint.body.data.secret;
    const user = await createUser(tenant);
    await move(user.id, 50);
    await move(user.id, -60);
    const object = { user_id: user.id, balance_minutes: -10, threshold_minutes: 10 };
    const events = await creditEvents(tenant.id);
    expect(events.map((e) => e.type).sort()).toEqual(['credits.exhausted', 'credits.low']);
    for (const event of events) expect(event.object).toEqual(object);

    await t.services.jobRunner.drain();
    const received = await receiver.waitFor(2);
    expect(received.map((r) => r.error)).toEqual([undefined, undefined]);
    expect(received.map((r) => r.headers['webhook-id']).sort()).toEqual(events.map((e) => e.id).sort());
    for (const r of received) expect((r.verified as { data: unknown }).data).toEqual({ object });
  });

  it('without a threshold records no credits.low, still credits.exhausted', async () => {
    const tenant = await tenantWithThreshold(null);
    const user = await createUser(tenant);
    await move(user.id, 5);
    await move(user.id, -4);
    await move(user.id, -1);
    const events = await creditEvents(tenant.id);
    expect(events.map(({ type, object }) => ({ type, object }))).toEqual([
      {
        type: 'credits.exhausted',
        object: { user_id: user.id, balance_minutes: 0, threshold_minutes: null },
      },
    ]);
  });

  it('records nothing when the ledger entry rolls back', async () => {
    const tenant = await tenantWithThreshold(30);
    const user = await createUser(tenant);
    await move(user.id, 40);
    await expect(
      t.services.database.db.transaction().execute(async (tx) => {
        const balance = await addCreditEntry(tx, {
          tenantId: tenant.id,
          userId: user.id,
          minutes: -40,
          reason: 'rolled back',
          at: clock.now(),
        });
        expect(balance).toBe(0);
        throw new Error('the change fails after the debit');
      }),
    ).rejects.toThrow('the change fails');
    expect(await creditEvents(tenant.id)).toEqual([]);
    expect((await t.admin('GET', `/admin/v1/users/${user.id}/credits`)).body.data.balance_minutes).toBe(40);
  });

  it('a batch of entries in one statement (as a call batch debits) moves each balance once and records per user', async () => {
    const tenant = await tenantWithThreshold(20);
    const [ann, bob] = [await createUser(tenant), await createUser(tenant)];
    await move(ann.id, 30);
    await move(bob.id, 30);
    const entries = [
      [ann.id, -5],
      [ann.id, -6], // together 30 → 19: one crossing, one event
      [bob.id, -30],
    ] as const;
    await runPrepared(t.services.database.db, {
      name: 'test_credit_batch',
      text: `
        WITH credit_entry AS (
          SELECT * FROM unnest($1::text[], $2::text[], $3::text[], $4::integer[], $5::text[], $6::text[], $7::timestamptz[])
            AS e(id, tenant_id, user_id, minutes, reason, reference, created_at)
        ), ${APPEND_CREDIT_ENTRIES}
        SELECT 1`,
      values: [
        entries.map(() => newId('cred')),
        entries.map(() => tenant.id),
        entries.map(([userId]) => userId),
        entries.map(([, minutes]) => minutes),
        entries.map(() => 'call'),
        entries.map(() => `call:${newId('call')}`),
        entries.map(() => clock.now()),
      ],
    });
    const events = await creditEvents(tenant.id);
    const key = (e: { type: string; object: Record<string, unknown> }) => `${e.type}:${e.object.user_id}`;
    expect(events.map(key).sort()).toEqual(
      [`credits.low:${ann.id}`, `credits.low:${bob.id}`, `credits.exhausted:${bob.id}`].sort(),
    );
    expect(events.find((e) => e.object.user_id === ann.id)?.object.balance_minutes).toBe(19);
    expect(new Set(events.map((e) => e.id)).size).toBe(3);
    for (const e of events) expect(e.id).toMatch(/^evt_[0-9A-Za-z]{24}$/);
  });
});
