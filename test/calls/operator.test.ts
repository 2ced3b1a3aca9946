/** Operator routes for agents and calls (docs/design-choices.md), and the demo agent of the seed. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { seedDemo } from '../../src/seed/demo.js';
import { createTenant, createUser, startTestApp, type TestApp } from '../support/app.js';
import { AGENT_INPUT, agentFixture, createAgent, trigger } from './helpers.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

describe('agents', () => {
  it('creates an unpublished agent with a secret webhook id and URL', async () => {
    const tenant = await createTenant(t);
    const user = await createUser(tenant);
    const response = await t.admin('POST', `/admin/v1/tenants/${tenant.id}/agents`, {
      user_id: user.id,
      ...AGENT_INPUT,
    });
    expect(response.status).toBe(201);
    const agent = response.body.data;
    expect(Object.keys(agent).sort()).toEqual(
      [
        'created_at',
        'draft',
        'id',
        'name',
        'phone_number',
        'published_version',
        'settings',
        'user_id',
        'webhook_id',
        'webhook_url',
      ].sort(),
    );
    expect(agent).toMatchObject({
      user_id: user.id,
      name: 'Reception',
      phone_number: '+14155550199',
      draft: { prompt: AGENT_INPUT.prompt, welcome_message: AGENT_INPUT.welcome_message },
      published_version: null,
    });
    expect(agent.id).toMatch(/^agt_[0-9A-Za-z]{20,}$/);
    // At least 128 bits: 32 base62 characters are about 190.
    expect(agent.webhook_id).toMatch(/^webh_[0-9A-Za-z]{32}$/);
    expect(agent.webhook_url).toBe(`http://voiceplane.test/webhooks/agents/${agent.webhook_id}/trigger`);
    const again = await createAgent(t, tenant.id, user.id);
    expect(again.webhook_id).not.toBe(agent.webhook_id);
    expect((await t.admin('GET', `/admin/v1/agents/${agent.id}`)).body.data).toEqual(agent);
  });

  it('refuses an owner from another tenant or a deleted one (404), and invalid fields (422)', async () => {
    const tenant = await createTenant(t);
    const other = await createTenant(t);
    const stranger = await createUser(other);
    const create = (body: Record<string, unknown>, tenantId = tenant.id) =>
      t.admin('POST', `/admin/v1/tenants/${tenantId}/agents`, { ...AGENT_INPUT, ...body });
    expect((await create({ user_id: stranger.id })).status).toBe(404);
    expect((await create({ user_id: stranger.id }, 'ten_unknown')).status).toBe(404);
    const user = await createUser(tenant);
    await tenant.request('DELETE', `/api/v1/users/${user.id}`);
    expect((await create({ user_id: user.id })).status).toBe(404);
    const invalid = await create({ user_id: stranger.id, phone_number: '555', name: '', extra: 1 }, other.id);
    expect(invalid.status).toBe(422);
    expect(invalid.body.error.details.map((d: any) => d.field).sort()).toEqual([
      'extra',
      'name',
      'phone_number',
    ]);
  });

  it('edits the draft, publishes immutable versions, and rotates the webhook id', async () => {
    const { agent } = await agentFixture(t, { publish: false });
    const patched = await t.admin('PATCH', `/admin/v1/agents/${agent.id}`, {
      name: 'Sales',
      prompt: 'v2 {name}',
    });
    expect(patched.status).toBe(200);
    expect(patched.body.data).toMatchObject({
      name: 'Sales',
      draft: { prompt: 'v2 {name}' },
      published_version: null,
    });
    const v1 = await t.admin('POST', `/admin/v1/agents/${agent.id}/publish`);
    expect(v1.body.data.published_version).toBe(1);
    await t.admin('PATCH', `/admin/v1/agents/${agent.id}`, { prompt: 'v3' });
    const v2 = await t.admin('POST', `/admin/v1/agents/${agent.id}/publish`);
    expect(v2.body.data.published_version).toBe(2);
    const versions = await t.services.database.db
      .selectFrom('agent_versions')
      .select(['version', 'prompt'])
      .where('agent_id', '=', agent.id)
      .orderBy('version')
      .execute();
    expect(versions).toEqual([
      { version: 1, prompt: 'v2 {name}' },
      { version: 2, prompt: 'v3' },
    ]);
    const rotated = await t.admin('POST', `/admin/v1/agents/${agent.id}/rotate-webhook`);
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.webhook_id).toMatch(/^webh_[0-9A-Za-z]{32}$/);
    expect(rotated.body.data.webhook_id).not.toBe(agent.webhook_id);
    expect(rotated.body.data.published_version).toBe(2);
    for (const [method, url] of [
      ['PATCH', '/admin/v1/agents/agt_nope'],
      ['POST', '/admin/v1/agents/agt_nope/publish'],
      ['POST', '/admin/v1/agents/agt_nope/rotate-webhook'],
      ['GET', '/admin/v1/agents/agt_nope'],
    ] as const) {
      const response = await t.admin(method, url, method === 'PATCH' ? { name: 'x' } : undefined);
      expect(response.status).toBe(404);
    }
  });

  it('requires the operator token', async () => {
    const tenant = await createTenant(t);
    const anonymous = await t.inject({ method: 'GET', url: '/admin/v1/calls' });
    expect(anonymous.status).toBe(401);
    const partnerKey = await t.partner(tenant.key, 'GET', '/admin/v1/calls');
    expect(partnerKey.status).toBe(401);
  });
});

describe('calls', () => {
  it('lists calls newest first with agent, tenant and status filters and pagination', async () => {
    const a = await agentFixture(t);
    const b = await agentFixture(t);
    const ids: string[] = [];
    for (let i = 0; i < 5; i++) {
      const response = await trigger(t, a.agent.webhook_id, {
        phone: i === 4 ? '+14155550000' : '+14155550123',
        name: `N${i}`,
      });
      ids.push(response.body.data.id);
    }
    await trigger(t, b.agent.webhook_id, { phone: '+14155550123', name: 'B' });
    await t.services.jobRunner.drain();

    const page1 = await t.admin('GET', `/admin/v1/calls?agent_id=${a.agent.id}&limit=2`);
    expect(page1.status).toBe(200);
    expect(page1.body.pagination).toEqual({ page: 1, limit: 2, total: 5, pages: 3, has_more: true });
    const all = await t.admin('GET', `/admin/v1/calls?agent_id=${a.agent.id}&limit=100`);
    const listed = all.body.data.map((c: any) => c.id);
    expect([...listed].sort()).toEqual([...ids].sort());
    const created = all.body.data.map((c: any) => `${c.created_at}|${c.id}`);
    expect(created).toEqual([...created].sort().reverse());
    expect(page1.body.data.map((c: any) => c.id)).toEqual(listed.slice(0, 2));

    const noAnswer = await t.admin('GET', `/admin/v1/calls?agent_id=${a.agent.id}&status=no_answer`);
    expect(noAnswer.body.data.map((c: any) => c.id)).toEqual([ids[4]]);
    const byTenant = await t.admin('GET', `/admin/v1/calls?tenant_id=${b.tenant.id}`);
    expect(byTenant.body.data).toHaveLength(1);
    expect(byTenant.body.data[0]).toMatchObject({ agent_id: b.agent.id, name: 'B', status: 'completed' });
    const past = await t.admin('GET', `/admin/v1/calls?agent_id=${a.agent.id}&page=9`);
    expect(past.body).toMatchObject({ data: [], pagination: { total: 5, pages: 1, has_more: false } });
    expect((await t.admin('GET', '/admin/v1/calls?status=ringing')).status).toBe(422);
    expect((await t.admin('GET', '/admin/v1/calls?limit=101')).status).toBe(422);

    // The agent filter is read through the agent's tenant: another tenant named with it lists
    // nothing, an agent never created lists nothing, and a deleted agent's calls stay listed.
    const wrongTenant = await t.admin(
      'GET',
      `/admin/v1/calls?agent_id=${a.agent.id}&tenant_id=${b.tenant.id}`,
    );
    expect(wrongTenant.body).toMatchObject({ data: [], pagination: { total: 0 } });
    const unknown = await t.admin('GET', '/admin/v1/calls?agent_id=agt_neverCreated');
    expect(unknown.status).toBe(200);
    expect(unknown.body).toMatchObject({ data: [], pagination: { total: 0, pages: 0, has_more: false } });
    const removed = await t.partner(a.tenant.key, 'DELETE', `/api/v1/agents/${a.agent.id}`);
    expect(removed.status).toBe(200);
    const afterDelete = await t.admin('GET', `/admin/v1/calls?agent_id=${a.agent.id}&limit=100`);
    expect(afterDelete.body.data.map((c: any) => c.id)).toEqual(listed);
  });

  it('reads one call with every field, and 404 for an unknown id', async () => {
    const { agent, userId } = await agentFixture(t);
    const response = await trigger(t, agent.webhook_id, {
      phone: '+14155550123',
      name: 'Ada',
      email: 'ada@example.com',
      product: 'tea',
    });
    await t.services.jobRunner.drain();
    const call = await t.admin('GET', `/admin/v1/calls/${response.body.data.id}`);
    expect(call.status).toBe(200);
    expect(Object.keys(call.body.data).sort()).toEqual(
      [
        'id',
        'agent_id',
        'agent_version',
        'user_id',
        'direction',
        'from',
        'to',
        'name',
        'email',
        'context',
        'prompt',
        'welcome_message',
        'status',
        'created_at',
        'started_at',
        'ended_at',
        'duration_seconds',
        'failure_reason',
        'ended_reason',
        'answered_by',
        'analysis',
        'transferred_to',
        'engine_cost_usd',
        'engine_duration_seconds',
      ].sort(),
    );
    expect(call.body.data).toMatchObject({
      user_id: userId,
      status: 'completed',
      duration_seconds: 30,
      prompt: 'Call Ada about tea.',
    });
    expect((await t.admin('GET', '/admin/v1/calls/call_nope')).status).toBe(404);
  });
});

describe('demo seed', () => {
  it('creates a published agent for the demo user and prints a curl that places a call', async () => {
    const seed = await seedDemo(t.services);
    const curl = seed.lines.find((line) => line.includes('curl -s -X POST'));
    expect(curl).toBeDefined();
    const match =
      /(http:\/\/voiceplane\.test\/webhooks\/agents\/(webh_[0-9A-Za-z]+)\/trigger).*-d '(.*)'/.exec(
        curl as string,
      );
    expect(match).not.toBeNull();
    const [, url, webhookId, body] = match as RegExpExecArray;
    expect(seed.lines.some((line) => line.trim() === url)).toBe(true);
    const response = await trigger(t, webhookId, JSON.parse(body));
    expect(response.status).toBe(202);
    await t.services.jobRunner.drain();
    const call = await t.admin('GET', `/admin/v1/calls/${response.body.data.id}`);
    expect(call.body.data).toMatchObject({ status: 'completed', user_id: seed.userId });
    expect(call.body.data.prompt).not.toMatch(/\{(name|topic)\}/);

    // The demo number answers with the demo agent: the printed inbound curl rings it.
    const ring = seed.lines.find((line) => line.includes('/admin/v1/simulator/inbound-calls'));
    const ringBody = /-d '(.*)'/.exec(ring as string)?.[1] as string;
    const rung = await t.admin('POST', '/admin/v1/simulator/inbound-calls', JSON.parse(ringBody));
    expect(rung.status, rung.raw).toBe(201);
    expect(rung.body.data).toMatchObject({ direction: 'inbound', status: 'queued', agent_id: seed.agent.id });
  });
});
