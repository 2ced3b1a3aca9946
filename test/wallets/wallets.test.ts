/**
 * Tenant wallets (docs/wallets.md): a completed call debits the user's credits and the tenant's
 * wallet together, the wallet and its ledger agree, a wallet at zero refuses new calls everywhere
 * with 402 tenant_balance_exhausted (nothing stored), unmetered tenants are untouched, and the
 * operator routes validate, credit once per Idempotency-Key, page the ledger and sum a month.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { SimulatedProcessor } from '../../src/billing/simulator/adapter.js';
import type { RefillPlan } from '../../src/wallets/schemas.js';
import { agentFixture, balanceOf, countRows, getCall, trigger } from '../calls/helpers.js';
import { type ConsoleFixture, startConsole } from '../console/helpers.js';
import { consoleClient } from '../console/http.js';
import { createTenant, type TestApp, type TestTenant } from '../support/app.js';

const CALLEE = { phone: '+14155550123', name: 'Ada' };
let f: ConsoleFixture;
let t: TestApp;

beforeAll(async () => {
  // Every answered simulated call lasts 61 s: 2 billed minutes.
  f = await startConsole({ env: { SIMULATED_CALL_SECONDS: '61' } });
  t = f.t;
});
afterAll(() => f?.close());

const db = () => t.services.database.db;

async function meter(tenantId: string, minutes: number, rate = 0.05, currency = 'usd') {
  const put = await t.admin('PUT', `/admin/v1/tenants/${tenantId}/wallet`, {
    wholesale_rate: rate,
    currency,
  });
  expect([200, 201]).toContain(put.status);
  if (minutes !== 0) {
    const credit = await t.admin('POST', `/admin/v1/tenants/${tenantId}/wallet/credits`, { minutes });
    expect(credit.status, credit.raw).toBe(201);
  }
}

async function wallet(tenantId: string) {
  const response = await t.admin('GET', `/admin/v1/tenants/${tenantId}/wallet`);
  expect(response.status).toBe(200);
  return response.body.data;
}

async function ledgerSum(tenantId: string): Promise<number> {
  const row = await db()
    .selectFrom('wallet_ledger')
    .select(sql<number>`coalesce(sum(minutes), 0)::integer`.as('sum'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return row.sum;
}

async function placeAndFinish(webhookId: string, count = 1): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < count; i++) {
    const response = await trigger(t, webhookId, CALLEE);
    expect(response.status, response.raw).toBe(202);
    ids.push(response.body.data.id);
  }
  await t.services.jobRunner.drain();
  return ids;
}

describe('the wholesale debit', () => {
  it('debits the user and the wallet the same minutes for each completed call, once, at the wallet’s rate', async () => {
    const { tenant, agent, userId } = await agentFixture(t, { credits: 50 });
    await meter(tenant.id, 100, 0.045);
    const ids = await placeAndFinish(agent.webhook_id, 3);
    for (const id of ids) expect(await getCall(t, id)).toMatchObject({ status: 'completed' });

    expect(await balanceOf(t, userId)).toBe(44);
    expect((await wallet(tenant.id)).balance_minutes).toBe(94);
    expect(await ledgerSum(tenant.id)).toBe(94);
    const rows = await db()
      .selectFrom('wallet_ledger')
      .selectAll()
      .where('tenant_id', '=', tenant.id)
      .where('reason', '=', 'call')
      .orderBy('reference')
      .execute();
    expect(rows.map((r) => [r.reference, r.minutes, r.wholesale_rate, r.user_id, r.call_id])).toEqual(
      [...ids].sort().map((id) => [`call:${id}`, -2, 0.045, userId, id]),
    );
    expect(rows[0].id).toMatch(/^wled_[0-9A-Za-z]{24}$/);
  });

  it('writes nothing for an unmetered tenant, whose calls are never refused for a wallet', async () => {
    const { tenant, agent, userId } = await agentFixture(t, { credits: 10 });
    const [id] = await placeAndFinish(agent.webhook_id);
    expect(await getCall(t, id)).toMatchObject({ status: 'completed' });
    expect(await balanceOf(t, userId)).toBe(8);
    expect(await wallet(tenant.id)).toMatchObject({ metered: false, balance_minutes: null, currency: null });
    expect(await ledgerSum(tenant.id)).toBe(0);
  });

  it('lets a running call take the wallet below zero', async () => {
    const { tenant, agent } = await agentFixture(t, { credits: 50 });
    await meter(tenant.id, 1);
    await placeAndFinish(agent.webhook_id);
    expect((await wallet(tenant.id)).balance_minutes).toBe(-1);
    expect(await ledgerSum(tenant.id)).toBe(-1);
  });

  it('is one transaction with the retail debit: a wallet that cannot move leaves the user’s credits and the call as they were', async () => {
    const { tenant, agent, userId } = await agentFixture(t, { credits: 50 });
    await meter(tenant.id, 1);
    // A constraint the wallet's debit breaks: the finish statement must fail as a whole.
    await sql`ALTER TABLE tenant_wallets ADD CONSTRAINT test_wallet_not_negative CHECK (balance_minutes >= 0 OR tenant_id <> ${sql.lit(tenant.id)})`.execute(
      db(),
    );
    try {
      const [id] = await placeAndFinish(agent.webhook_id);
      expect((await getCall(t, id)).status).not.toBe('completed');
      expect(await balanceOf(t, userId)).toBe(50);
      expect((await wallet(tenant.id)).balance_minutes).toBe(1);
      const debits = await db()
        .selectFrom('credit_ledger')
        .select('id')
        .where('reference', '=', `call:${id}`)
        .execute();
      expect(debits).toEqual([]);
    } finally {
      await sql`ALTER TABLE tenant_wallets DROP CONSTRAINT test_wallet_not_negative`.execute(db());
    }
  });
});

describe('refusal at zero', () => {
  let tenant: TestTenant;
  let agent: any;
  let userId: string;

  beforeAll(async () => {
    ({ tenant, agent, userId } = await agentFixture(t, { credits: 50 }));
    await meter(tenant.id, 2);
  });

  it('refuses the webhook and the API with 402 tenant_balance_exhausted once the wallet is used up, storing nothing', async () => {
    // The first call is accepted (and its target cached), and uses up the wallet.
    await placeAndFinish(agent.webhook_id);
    expect((await wallet(tenant.id)).balance_minutes).toBe(0);
    const before = await countRows(t);

    const hook = await trigger(t, agent.webhook_id, CALLEE);
    expect([hook.status, hook.body.error.code]).toEqual([402, 'tenant_balance_exhausted']);
    const api = await tenant.request('POST', '/api/v1/calls', { agent_id: agent.id, phone: CALLEE.phone });
    expect([api.status, api.body.error.code]).toEqual([402, 'tenant_balance_exhausted']);
    expect(await countRows(t)).toEqual(before);
    expect(await balanceOf(t, userId)).toBe(48);
  });

  it('answers tenant_balance_exhausted before insufficient_credits, and agent_unavailable before both', async () => {
    const { agent: broke, userId: brokeUser } = await agentFixture(t, { credits: 0, tenant });
    const hook = await trigger(t, broke.webhook_id, CALLEE);
    expect([hook.status, hook.body.error.code]).toEqual([402, 'tenant_balance_exhausted']);
    expect((await t.admin('PATCH', `/admin/v1/users/${brokeUser}`, { status: 'blocked' })).status).toBe(200);
    const answer = await trigger(t, broke.webhook_id, CALLEE);
    expect([answer.status, answer.body.error.code]).toEqual([409, 'agent_unavailable']);
  });

  it('places calls again as soon as the operator credits the wallet', async () => {
    await t.admin('POST', `/admin/v1/tenants/${tenant.id}/wallet/credits`, { minutes: 10 });
    expect((await trigger(t, agent.webhook_id, CALLEE)).status).toBe(202);
  });

  it('shows the console’s members the wallet, with a warning once calls are refused', async () => {
    await meter(f.tenant.id, 0, 0.02);
    const client = consoleClient(t);
    expect((await client.signIn(f.owner.email, f.owner.password)).status).toBeLessThan(400);
    const used = await client.get('/console');
    expect(used.status).toBe(200);
    expect(used.body).toContain('Wholesale minutes');
    expect(used.body).toContain('$0.02');
    expect(used.body).toContain('calls are refused');
    await t.admin('POST', `/admin/v1/tenants/${f.tenant.id}/wallet/credits`, { minutes: 75 });
    const credited = await client.get('/console');
    expect(credited.body).toContain('75 min');
    expect(credited.body).not.toContain('calls are refused');
  });
});

describe('the operator API', () => {
  let tenant: TestTenant;
  beforeAll(async () => {
    tenant = await createTenant(t);
  });

  it('refuses a credit that would overflow the balance (422), changing nothing', async () => {
    const full = await createTenant(t);
    const url = `/admin/v1/tenants/${full.id}/wallet`;
    expect((await t.admin('PUT', url, { wholesale_rate: 0.05, currency: 'usd' })).status).toBe(201);
    await sql`UPDATE tenant_wallets SET balance_minutes = 2140000000 WHERE tenant_id = ${full.id}`.execute(
      db(),
    );
    const refused = await t.admin('POST', `${url}/credits`, { minutes: 10_000_000 });
    expect(refused.status, refused.raw).toBe(422);
    expect(refused.body.error.code).toBe('unprocessable_entity');
    expect((await t.admin('GET', url)).body.data.balance_minutes).toBe(2_140_000_000);
    const ledger = await t.admin('GET', `${url}/ledger`);
    expect(ledger.body.data).toEqual([]);
  });

  it('creates the wallet (201), changes it (200), and refuses bad input changing nothing', async () => {
    const url = `/admin/v1/tenants/${tenant.id}/wallet`;
    const created = await t.admin('PUT', url, { wholesale_rate: 0.05, currency: 'usd' });
    expect(created.status, created.raw).toBe(201);
    expect(created.body.data).toMatchObject({
      tenant_id: tenant.id,
      metered: true,
      balance_minutes: 0,
      wholesale_rate: 0.05,
      currency: 'usd',
      auto_refill: null,
    });
    const changed = await t.admin('PUT', url, { wholesale_rate: 0.04, currency: 'usd' });
    expect([changed.status, changed.body.data.wholesale_rate]).toEqual([200, 0.04]);

    for (const body of [
      { wholesale_rate: 0.0000001, currency: 'usd' },
      { wholesale_rate: -1, currency: 'usd' },
      { wholesale_rate: 0.05, currency: 'USD' },
      { wholesale_rate: '0.05', currency: 'usd' },
      { wholesale_rate: 0.05 },
      { wholesale_rate: 0.05, currency: 'usd', extra: true },
      { wholesale_rate: 0.05, currency: 'usd', auto_refill: { threshold_minutes: 10, refill_minutes: 0 } },
    ]) {
      const refused = await t.admin('PUT', url, body);
      expect([refused.status, refused.body.error.code], JSON.stringify(body)).toEqual([
        422,
        'validation_failed',
      ]);
    }
    expect(await wallet(tenant.id)).toMatchObject({ wholesale_rate: 0.04, currency: 'usd' });
    const missing = await t.admin('PUT', '/admin/v1/tenants/ten_missing/wallet', {
      wholesale_rate: 1,
      currency: 'usd',
    });
    expect([missing.status, missing.body.error.code]).toEqual([404, 'not_found']);
    expect((await t.admin('GET', '/admin/v1/tenants/ten_missing/wallet')).status).toBe(404);
  });

  it('credits once per Idempotency-Key, and takes minutes back with a negative adjustment', async () => {
    const url = `/admin/v1/tenants/${tenant.id}/wallet/credits`;
    const headers = { 'idempotency-key': `wallet-credit-${tenant.id}` };
    const first = await t.admin('POST', url, { minutes: 500, reason: 'Invoice 42' }, headers);
    expect(first.status, first.raw).toBe(201);
    expect(first.body.data).toMatchObject({
      balance_minutes: 500,
      entry: { minutes: 500, reason: 'credit', note: 'Invoice 42', wholesale_rate: 0.04, call_id: null },
    });
    const replay = await t.admin('POST', url, { minutes: 500, reason: 'Invoice 42' }, headers);
    expect(replay.status).toBe(201);
    expect(replay.headers['idempotent-replayed']).toBe('true');
    expect(replay.body.data).toEqual(first.body.data);
    const reused = await t.admin('POST', url, { minutes: 501 }, headers);
    expect([reused.status, reused.body.error.code]).toEqual([409, 'idempotency_key_reuse']);

    const back = await t.admin('POST', url, { minutes: -120 });
    expect(back.body.data).toMatchObject({
      balance_minutes: 380,
      entry: { minutes: -120, reason: 'adjustment' },
    });
    expect((await wallet(tenant.id)).balance_minutes).toBe(380);
    expect(await ledgerSum(tenant.id)).toBe(380);

    for (const body of [{ minutes: 0 }, { minutes: 1.5 }, {}, { minutes: 1, other: 1 }]) {
      const refused = await t.admin('POST', url, body);
      expect([refused.status, refused.body.error.code]).toEqual([422, 'validation_failed']);
    }
    expect(await ledgerSum(tenant.id)).toBe(380);
    const unmetered = await createTenant(t);
    const refused = await t.admin('POST', `/admin/v1/tenants/${unmetered.id}/wallet/credits`, { minutes: 5 });
    expect([refused.status, refused.body.error.code]).toEqual([422, 'unprocessable_entity']);
    expect(await wallet(unmetered.id)).toMatchObject({ metered: false });
  });

  it('refuses a change of currency once the ledger has entries', async () => {
    const refused = await t.admin('PUT', `/admin/v1/tenants/${tenant.id}/wallet`, {
      wholesale_rate: 0.04,
      currency: 'eur',
    });
    expect([refused.status, refused.body.error.code]).toEqual([422, 'unprocessable_entity']);
  });

  it('pages the ledger newest first', async () => {
    const url = `/admin/v1/tenants/${tenant.id}/wallet/ledger`;
    const page = await t.admin('GET', `${url}?limit=1`);
    expect(page.status).toBe(200);
    expect(page.body.pagination).toMatchObject({ page: 1, limit: 1, total: 2, has_more: true });
    expect(page.body.data[0]).toMatchObject({ minutes: -120, reason: 'adjustment' });
    const second = await t.admin('GET', `${url}?limit=1&page=2`);
    expect(second.body.data[0]).toMatchObject({ minutes: 500, reason: 'credit' });
    expect((await t.admin('GET', `${url}?limit=0`)).status).toBe(422);
  });

  it('sums a UTC month’s call minutes and their wholesale amount in minor units', async () => {
    const { tenant: busy, agent } = await agentFixture(t, { credits: 100 });
    await meter(busy.id, 100, 0.035);
    await placeAndFinish(agent.webhook_id, 2);
    const period = new Date().toISOString().slice(0, 7);
    const usage = await t.admin('GET', `/admin/v1/tenants/${busy.id}/wallet/usage?period=${period}`);
    expect(usage.status, usage.raw).toBe(200);
    // 4 minutes × 0.035 = 0.14 usd.
    expect(usage.body.data).toMatchObject({
      metered: true,
      calls: 2,
      minutes: 4,
      amount: 14,
      currency: 'usd',
    });
    const empty = await t.admin('GET', `/admin/v1/tenants/${busy.id}/wallet/usage?period=2001-01`);
    expect(empty.body.data).toMatchObject({
      calls: 0,
      minutes: 0,
      amount: 0,
      period_start: '2001-01-01T00:00:00.000Z',
    });
    for (const bad of ['2026-13', '2026-1', 'soon', '', '0099-01']) {
      const refused = await t.admin('GET', `/admin/v1/tenants/${busy.id}/wallet/usage?period=${bad}`);
      expect(refused.status, bad).toBe(422);
    }
  });
});

describe('auto-refill', () => {
  const charges = () => (t.services.processor as SimulatedProcessor).calls.chargeCustomer;

  async function refillSetup(card: string) {
    const fixture = await agentFixture(t, { credits: 100 });
    const put = await t.admin('PUT', `/admin/v1/tenants/${fixture.tenant.id}/wallet`, {
      wholesale_rate: 0.05,
      currency: 'usd',
      auto_refill: { threshold_minutes: 5, refill_minutes: 100 },
    });
    expect(put.status).toBe(201);
    await t.admin('POST', `/admin/v1/tenants/${fixture.tenant.id}/wallet/credits`, { minutes: 8 });
    const carded = await t.admin('POST', `/admin/v1/tenants/${fixture.tenant.id}/wallet/payment-method`, {
      token: card,
    });
    expect(carded.status, carded.raw).toBe(200);
    expect(carded.body.data.refill_card).toMatchObject({ customer_id: expect.any(String) });
    return fixture;
  }

  const refillRows = (tenantId: string) =>
    db()
      .selectFrom('wallet_ledger')
      .selectAll()
      .where('tenant_id', '=', tenantId)
      .where('reason', '=', 'refill')
      .execute();

  it('charges refill_minutes × rate once when a call takes the wallet below its threshold, and credits once', async () => {
    const { tenant, agent } = await refillSetup('pm_card_visa');
    const before = charges();
    await placeAndFinish(agent.webhook_id, 2); // 8 → 4: below 5
    expect(charges()).toBe(before + 1);
    const state = await wallet(tenant.id);
    expect(state).toMatchObject({ balance_minutes: 104, last_refill_error: null });
    expect(state.last_refill_at).not.toBeNull();
    const rows = await refillRows(tenant.id);
    expect(rows.map((r) => [r.minutes, r.wholesale_rate])).toEqual([[100, 0.05]]);
    expect(await ledgerSum(tenant.id)).toBe(104);

    // The same job again (a retry after a crash): the processor replays, nothing is credited twice.
    const job = await db()
      .selectFrom('jobs')
      .selectAll()
      .where('singleton_key', '=', `wallet-refill:${tenant.id}`)
      .executeTakeFirstOrThrow();
    expect(rows[0].reference).toBe(`refill:${job.id}`);
    await t.services.wallets.refill({
      id: Number(job.id),
      tenantId: tenant.id,
      queue: job.queue,
      payload: job.payload as RefillPlan,
      attempt: 2,
      maxAttempts: job.max_attempts,
    });
    expect(charges()).toBe(before + 1);
    expect((await wallet(tenant.id)).balance_minutes).toBe(104);
    expect(await refillRows(tenant.id)).toHaveLength(1);
  });

  it('credits nothing for a declined card, shows the decline, and tries no more until a new card', async () => {
    const { tenant, agent } = await refillSetup('pm_card_chargeDeclined');
    await placeAndFinish(agent.webhook_id, 2); // 8 → 4
    const declined = await wallet(tenant.id);
    expect(declined.balance_minutes).toBe(4);
    expect(declined.last_refill_error).toEqual(expect.any(String));
    expect(await refillRows(tenant.id)).toEqual([]);
    const attempts = charges();
    await placeAndFinish(agent.webhook_id); // 4 → 2: no new attempt on the declined card
    expect(charges()).toBe(attempts);

    const replaced = await t.admin('POST', `/admin/v1/tenants/${tenant.id}/wallet/payment-method`, {
      token: 'pm_card_visa',
    });
    expect(replaced.body.data.last_refill_error).toBeNull();
    await t.services.jobRunner.drain();
    expect((await wallet(tenant.id)).balance_minutes).toBe(102);
    expect(await refillRows(tenant.id)).toHaveLength(1);
  });

  it('refuses a card for an unmetered tenant', async () => {
    const unmetered = await createTenant(t);
    const refused = await t.admin('POST', `/admin/v1/tenants/${unmetered.id}/wallet/payment-method`, {
      token: 'pm_card_visa',
    });
    expect([refused.status, refused.body.error.code]).toEqual([422, 'unprocessable_entity']);
  });
});
