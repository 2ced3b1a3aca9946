/**
 * Calls in the partner API (POST/GET /api/v1/calls, GET /api/v1/calls/{id}): the webhook's rules
 * in the API's envelope, filters and pagination, tenant isolation, scopes, Idempotency-Key, the
 * timeline; and the webhook's opt-in Idempotency-Key.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTenant, createUser, startTestApp, type TestApp } from '../support/app.js';
import { agentFixture, createAgent, grantCredits, trigger } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  // 20 duplicates and then more triggers of one webhook: above its default burst.
  t = await startTestApp({ env: { SIMULATED_CALL_SECONDS: '61', RATE_LIMIT_WEBHOOK_BURST: '100' } });
});
afterAll(() => t.close());

const listDoNotCall = (tenantId: string, phone: string) =>
  sql`INSERT INTO do_not_call (tenant_id, phone_number, reason, created_at) VALUES (${tenantId}, ${phone}, 'asked', now())`.execute(
    t.services.database.db,
  );

async function callCount(agentId: string): Promise<number> {
  const row = await t.services.database.db
    .selectFrom('calls')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('agent_id', '=', agentId)
    .executeTakeFirstOrThrow();
  return Number(row.n);
}

describe('POST /api/v1/calls', () => {
  it('answers 202 with the queued call, its rendered prompt, Location, and a queued event', async () => {
    const { tenant, agent, userId } = await agentFixture(t);
    const response = await tenant.request('POST', '/api/v1/calls', {
      agent_id: agent.id,
      phone: '+14155550123',
      name: 'Ada',
      email: 'ada@example.com',
      context: { product: 'solar panels' },
    });
    expect(response.status).toBe(202);
    const call = response.body.data;
    expect(call).toMatchObject({
      status: 'queued',
      agent_id: agent.id,
      user_id: userId,
      from: '+14155550199',
      to: '+14155550123',
      name: 'Ada',
      email: 'ada@example.com',
      context: { product: 'solar panels' },
      prompt: 'Call Ada about solar panels.',
      welcome_message: 'Hello Ada, this is Acme.',
      scheduled_for: null,
      attempts: 0,
      billed_minutes: null,
      ended_reason: null,
      engine: 'simulated',
      engine_call_id: null,
      transcript: null,
      recording_url: null,
    });
    expect(call.id).toMatch(/^call_/);
    expect(response.headers.location).toBe(`${t.config.publicBaseUrl}/api/v1/calls/${call.id}`);
    expect(call.events).toEqual([{ status: 'queued', at: call.created_at, detail: {} }]);
  });

  it('answers the webhook refusals with the same statuses and codes, storing nothing', async () => {
    const { tenant, agent, userId } = await agentFixture(t, { publish: false });
    const body = { agent_id: agent.id, phone: '+14155550123', name: 'Ada' };
    const unpublished = await tenant.request('POST', '/api/v1/calls', body);
    expect([unpublished.status, unpublished.body.error.code]).toEqual([409, 'agent_not_published']);

    const other = await agentFixture(t, { credits: 0 });
    const broke = await other.tenant.request('POST', '/api/v1/calls', { ...body, agent_id: other.agent.id });
    expect([broke.status, broke.body.error.code]).toEqual([402, 'insufficient_credits']);

    const blocked = await agentFixture(t);
    await t.admin('PATCH', `/admin/v1/users/${blocked.userId}`, { status: 'blocked' });
    const unavailable = await blocked.tenant.request('POST', '/api/v1/calls', {
      ...body,
      agent_id: blocked.agent.id,
    });
    expect([unavailable.status, unavailable.body.error.code]).toEqual([409, 'agent_unavailable']);

    const unknown = await tenant.request('POST', '/api/v1/calls', {
      ...body,
      agent_id: 'agt_doesnotexist000000000',
    });
    expect([unknown.status, unknown.body.error.code]).toEqual([404, 'not_found']);

    // Another tenant's agent is as unknown as one that never existed.
    const foreign = await tenant.request('POST', '/api/v1/calls', { ...body, agent_id: other.agent.id });
    expect([foreign.status, foreign.body.error.code]).toEqual([404, 'not_found']);

    // A deleted agent too.
    const gone = await agentFixture(t);
    await sql`UPDATE agents SET deleted_at = now() WHERE id = ${gone.agent.id}`.execute(
      t.services.database.db,
    );
    const deleted = await gone.tenant.request('POST', '/api/v1/calls', { ...body, agent_id: gone.agent.id });
    expect([deleted.status, deleted.body.error.code]).toEqual([404, 'not_found']);

    for (const id of [agent.id, other.agent.id, blocked.agent.id, gone.agent.id])
      expect(await callCount(id)).toBe(0);
    expect(userId).toBeTruthy();
  });

  it('refuses invalid fields with 422 validation_failed, naming each', async () => {
    const { tenant, agent } = await agentFixture(t);
    const response = await tenant.request('POST', '/api/v1/calls', {
      agent_id: agent.id,
      phone: '555',
      email: 'nope',
      context: 'text',
      extra: true,
    });
    expect(response.status).toBe(422);
    expect(response.body.error.code).toBe('validation_failed');
    const fields = response.body.error.details.map((d: { field: string }) => d.field).sort();
    expect(fields).toEqual(expect.arrayContaining(['context', 'email', 'phone']));
    const tooMany = Object.fromEntries(Array.from({ length: 201 }, (_, i) => [`k${i}`, i]));
    const big = await tenant.request('POST', '/api/v1/calls', {
      agent_id: agent.id,
      phone: '+14155550123',
      context: tooMany,
    });
    expect([big.status, big.body.error.details]).toEqual([
      422,
      [{ field: 'context', issue: 'must have at most 200 keys.' }],
    ]);
    expect(await callCount(agent.id)).toBe(0);
  });

  it('refuses a do-not-call number with 422 unprocessable_entity (the webhook: 409 do_not_call), storing nothing', async () => {
    const { tenant, agent } = await agentFixture(t);
    await listDoNotCall(tenant.id, '+14155550777');
    const api = await tenant.request('POST', '/api/v1/calls', { agent_id: agent.id, phone: '+14155550777' });
    expect([api.status, api.body.error.code]).toEqual([422, 'unprocessable_entity']);
    // Twice through the webhook: the second request comes after the target is cached.
    expect((await trigger(t, agent.webhook_id, { phone: '+14155550123', name: 'Ada' })).status).toBe(202);
    const hook = await trigger(t, agent.webhook_id, { phone: '+14155550777', name: 'Ada' });
    expect([hook.status, hook.body.error.code]).toEqual([409, 'do_not_call']);
    expect(await callCount(agent.id)).toBe(1);
    // Another tenant's list does not apply.
    const other = await agentFixture(t);
    expect((await trigger(t, other.agent.webhook_id, { phone: '+14155550777', name: 'Ada' })).status).toBe(
      202,
    );
  });

  it('honours Idempotency-Key: 20 concurrent duplicates place one call and answer the same 202', async () => {
    const { tenant, agent } = await agentFixture(t);
    const body = { agent_id: agent.id, phone: '+14155550123', name: 'Ada' };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        tenant.request('POST', '/api/v1/calls', body, { 'idempotency-key': 'call-ada-1' }),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(202));
    expect(new Set(answers.map((a) => a.body.data.id)).size).toBe(1);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
    expect(await callCount(agent.id)).toBe(1);
    const reuse = await tenant.request(
      'POST',
      '/api/v1/calls',
      { ...body, name: 'Bob' },
      { 'idempotency-key': 'call-ada-1' },
    );
    expect([reuse.status, reuse.body.error.code]).toEqual([409, 'idempotency_key_reuse']);
  });
});

describe('GET /api/v1/calls and /api/v1/calls/{id}', () => {
  it('lists the tenant’s calls newest first with every filter, asc on request, and pagination', async () => {
    const first = await agentFixture(t);
    const tenant = first.tenant;
    const secondUser = await createUser(tenant);
    await grantCredits(t, secondUser.id, 10);
    const second = await createAgent(t, tenant.id, secondUser.id);
    await t.admin('POST', `/admin/v1/agents/${second.id}/publish`);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const agentId = i % 2 === 0 ? first.agent.id : second.id;
      const r = await tenant.request('POST', '/api/v1/calls', {
        agent_id: agentId,
        phone: `+1415555010${i}`,
        name: 'X',
      });
      ids.push(r.body.data.id);
    }
    const all = await tenant.request('GET', '/api/v1/calls?limit=2');
    expect(all.status).toBe(200);
    expect(all.body.pagination).toEqual({ page: 1, limit: 2, total: 5, pages: 3, has_more: true });
    expect(all.body.data.map((c: { id: string }) => c.id)).toEqual([ids[4], ids[3]]);
    expect(all.body.data[0]).not.toHaveProperty('events');
    const last = await tenant.request('GET', '/api/v1/calls?limit=2&page=3');
    expect(last.body.data.map((c: { id: string }) => c.id)).toEqual([ids[0]]);
    expect(last.body.pagination.total).toBe(5);
    const past = await tenant.request('GET', '/api/v1/calls?limit=2&page=9');
    expect([past.body.data, past.body.pagination.total]).toEqual([[], 5]);
    const asc = await tenant.request('GET', '/api/v1/calls?sort_order=asc');
    expect(asc.body.data.map((c: { id: string }) => c.id)).toEqual(ids);
    const byAgent = await tenant.request('GET', `/api/v1/calls?agent_id=${second.id}`);
    expect(byAgent.body.data.map((c: { id: string }) => c.id)).toEqual([ids[3], ids[1]]);
    const byUser = await tenant.request('GET', `/api/v1/calls?user_id=${first.userId}`);
    expect(byUser.body.data.map((c: { id: string }) => c.id)).toEqual([ids[4], ids[2], ids[0]]);
    await t.services.jobRunner.drain();
    const completed = await tenant.request('GET', '/api/v1/calls?status=completed');
    expect(completed.body.pagination.total).toBe(5);
    expect((await tenant.request('GET', '/api/v1/calls?status=queued')).body.pagination.total).toBe(0);
    const createdAt = (await tenant.request('GET', `/api/v1/calls/${ids[2]}`)).body.data.created_at;
    const after = await tenant.request('GET', `/api/v1/calls?created_after=${createdAt}&sort_order=asc`);
    expect(after.body.data.map((c: { id: string }) => c.id)).toEqual([ids[3], ids[4]]);
    const before = await tenant.request('GET', `/api/v1/calls?created_before=${createdAt}&sort_order=asc`);
    expect(before.body.data.map((c: { id: string }) => c.id)).toEqual([ids[0], ids[1]]);
    const bad = await tenant.request('GET', '/api/v1/calls?created_after=yesterday&status=ringing');
    expect(bad.status).toBe(422);
    expect(bad.body.error.details.map((d: { field: string }) => d.field).sort()).toEqual([
      'created_after',
      'status',
    ]);
  });

  it('shows the whole call with its timeline, billing and outcome', async () => {
    const { tenant, agent } = await agentFixture(t);
    const placed = await tenant.request('POST', '/api/v1/calls', {
      agent_id: agent.id,
      phone: '+14155550123',
      name: 'Ada',
    });
    await t.services.jobRunner.drain();
    const response = await tenant.request('GET', `/api/v1/calls/${placed.body.data.id}`);
    expect(response.status).toBe(200);
    const call = response.body.data;
    expect(call).toMatchObject({
      status: 'completed',
      duration_seconds: 61,
      billed_minutes: 2,
      ended_reason: 'completed',
      attempts: 1,
      failure_reason: null,
    });
    expect(call.events.map((e: { status: string }) => e.status)).toEqual([
      'queued',
      'dialing',
      'in_progress',
      'completed',
    ]);
    expect(call.events[1].detail).toEqual({ attempt: 1 });
    expect(call.events[2].at).toBe(call.started_at);
    expect(call.events[3]).toMatchObject({
      at: call.ended_at,
      detail: { duration_seconds: 61, billed_minutes: 2 },
    });
    // The operator's view keeps its shape.
    const operator = await t.admin('GET', `/admin/v1/calls/${call.id}`);
    expect(operator.body.data).not.toHaveProperty('events');
  });

  it('lists each call as the console’s path and the call’s own page show it (the page’s JSON is built by PostgreSQL)', async () => {
    const { tenant, agent } = await agentFixture(t);
    const place = (phone: string, extra: Record<string, unknown> = {}) =>
      tenant.request('POST', '/api/v1/calls', { agent_id: agent.id, phone, name: 'Ada', ...extra });
    await place('+14155550131', { email: 'ada@example.com', context: { plan: 'gold', visits: [1, 2] } });
    await place('+14155550132');
    await t.services.jobRunner.drain();
    await place('+14155550133'); // still queued
    const listed = await tenant.request('GET', '/api/v1/calls?limit=10');
    expect(listed.status).toBe(200);
    expect(listed.body.data.map((call: { status: string }) => call.status)).toEqual([
      'queued',
      'completed',
      'completed',
    ]);
    const viaService = await t.services.calls.listForTenant(tenant.id, {
      page: 1,
      limit: 10,
      sort_order: 'desc',
    });
    expect(listed.body).toEqual(JSON.parse(JSON.stringify(viaService)));
    for (const item of listed.body.data) {
      const { events: _events, ...whole } = (await tenant.request('GET', `/api/v1/calls/${item.id}`)).body
        .data;
      expect(item).toEqual(whole);
    }
  });

  it('keeps tenants apart: another tenant’s call is 404 and absent from its list', async () => {
    const mine = await agentFixture(t);
    const theirs = await agentFixture(t);
    const placed = await theirs.tenant.request('POST', '/api/v1/calls', {
      agent_id: theirs.agent.id,
      phone: '+14155550123',
    });
    const read = await mine.tenant.request('GET', `/api/v1/calls/${placed.body.data.id}`);
    expect([read.status, read.body.error.code]).toEqual([404, 'not_found']);
    const list = await mine.tenant.request('GET', `/api/v1/calls?agent_id=${theirs.agent.id}`);
    expect(list.body.data).toEqual([]);
  });

  it('needs calls:read to read and calls:write to place', async () => {
    const { tenant, agent } = await agentFixture(t);
    const readOnly = await createTenant(t, { scopes: ['calls:read'] });
    const writeOnly = await createTenant(t, { scopes: ['calls:write'] });
    const none = await createTenant(t, { scopes: ['users:read'] });
    const body = { agent_id: agent.id, phone: '+14155550123' };
    for (const [who, method, url, expected] of [
      [readOnly, 'GET', '/api/v1/calls', 200],
      [readOnly, 'POST', '/api/v1/calls', 403],
      [writeOnly, 'GET', '/api/v1/calls', 403],
      [writeOnly, 'GET', '/api/v1/calls/call_x', 403],
      [writeOnly, 'POST', '/api/v1/calls', 404],
      [none, 'GET', '/api/v1/calls', 403],
      [none, 'POST', '/api/v1/calls', 403],
      [tenant, 'POST', '/api/v1/calls', 202],
    ] as const) {
      const response = await who.request(method, url, method === 'POST' ? body : undefined);
      expect([method, url, response.status]).toEqual([method, url, expected]);
      if (expected === 403) expect(response.body.error.details.required_scopes).toHaveLength(1);
    }
    expect((await t.partner('', 'GET', '/api/v1/calls')).status).toBe(401);
  });
});

describe('the webhook’s opt-in Idempotency-Key', () => {
  it('places one call for 20 concurrent duplicates and replays the first 202', async () => {
    const { agent } = await agentFixture(t);
    const headers = { 'content-type': 'application/json', 'idempotency-key': 'lead-42' };
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        trigger(t, agent.webhook_id, { phone: '+14155550123', name: 'Ada' }, headers),
      ),
    );
    expect(answers.map((a) => a.status)).toEqual(Array(20).fill(202));
    expect(new Set(answers.map((a) => a.body.data.id)).size).toBe(1);
    expect(answers.filter((a) => a.headers['idempotent-replayed'] === 'true')).toHaveLength(19);
    expect(await callCount(agent.id)).toBe(1);
    // Same key, another body: refused; without the header every request still places a call.
    const reuse = await trigger(t, agent.webhook_id, { phone: '+14155550124', name: 'Ada' }, headers);
    expect([reuse.status, reuse.body.error.code]).toEqual([409, 'idempotency_key_reuse']);
    for (let i = 0; i < 2; i++) {
      expect((await trigger(t, agent.webhook_id, { phone: '+14155550123', name: 'Ada' })).status).toBe(202);
    }
    expect(await callCount(agent.id)).toBe(3);
  });

  it('scopes keys to the webhook: the same key on another webhook places its own call', async () => {
    const first = await agentFixture(t);
    const second = await agentFixture(t, { tenant: first.tenant });
    const headers = { 'content-type': 'application/json', 'idempotency-key': 'same-key' };
    const a = await trigger(t, first.agent.webhook_id, { phone: '+14155550123', name: 'Ada' }, headers);
    const b = await trigger(t, second.agent.webhook_id, { phone: '+14155550123', name: 'Ada' }, headers);
    expect([a.status, b.status]).toEqual([202, 202]);
    expect(a.body.data.id).not.toBe(b.body.data.id);
    expect(b.headers['idempotent-replayed']).toBeUndefined();
  });

  it('refuses a malformed key with 400 and stores nothing', async () => {
    const { agent } = await agentFixture(t);
    const response = await trigger(
      t,
      agent.webhook_id,
      { phone: '+14155550123', name: 'Ada' },
      {
        'content-type': 'application/json',
        'idempotency-key': 'x'.repeat(256),
      },
    );
    expect([response.status, response.body.error.code]).toEqual([400, 'invalid_request']);
    expect(await callCount(agent.id)).toBe(0);
  });
});
