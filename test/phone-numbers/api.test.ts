/**
 * Phone numbers under the simulator (it holds every E.164 number except those ending in 0000): the
 * operator's import, list, reassign and release; the partner's list, get and choice of inbound
 * agent; scopes, tenant isolation and the caller-ID rule.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { agentFixture, createAgent } from '../calls/helpers.js';
import { createTenant, createUser, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { expectError, expectInvalidFields } from '../support/expect.js';

const clock = new ManualClock('2026-03-02T09:00:00.000Z');
let t: TestApp;
let a: TestTenant;
let b: TestTenant;

const encoded = (phone: string) => encodeURIComponent(phone);
const importNumber = (phone: string, tenantId: string) =>
  t.admin('POST', '/admin/v1/phone-numbers', { phone_number: phone, tenant_id: tenantId });

beforeAll(async () => {
  t = await startTestApp({ clock });
  a = await createTenant(t, { name: 'A' });
  b = await createTenant(t, { name: 'B' });
});
afterAll(() => t.close());

describe('operator: /admin/v1/phone-numbers', () => {
  it('imports a number the engine holds for a tenant: 201; GET shows it; importing it again is 409', async () => {
    const created = await importNumber('+14155550100', a.id);
    expect(created.status, created.raw).toBe(201);
    expect(created.body.data).toEqual({
      phone_number: '+14155550100',
      tenant_id: a.id,
      engine: 'simulated',
      engine_number_id: '+14155550100',
      inbound_agent_id: null,
      label: null,
      created_at: clock.now().toISOString(),
      updated_at: clock.now().toISOString(),
    });
    const fetched = await t.admin('GET', `/admin/v1/phone-numbers/${encoded('+14155550100')}`);
    expect(fetched.body.data).toEqual(created.body.data);
    expectError(await importNumber('+14155550100', b.id), 409, 'conflict');
  });

  it('422 naming every offending field: a number the engine does not hold, an unknown tenant', async () => {
    expectInvalidFields(await importNumber('+14155550000', 'ten_missing'), ['phone_number', 'tenant_id']);
    expectInvalidFields(await importNumber('4155550101', a.id), ['phone_number']);
    expectError(await t.admin('GET', `/admin/v1/phone-numbers/${encoded('+14155550000')}`), 404, 'not_found');
  });

  it('lists with the tenant filter, reassigns (clearing the inbound agent) and releases', async () => {
    const tenant = await createTenant(t, { name: 'Moves' });
    const other = await createTenant(t, { name: 'Gets' });
    clock.advance(1000);
    await importNumber('+14155550110', tenant.id);
    clock.advance(1000);
    await importNumber('+14155550111', tenant.id);
    const listed = await t.admin('GET', `/admin/v1/phone-numbers?tenant_id=${tenant.id}`);
    expect(listed.body.data.map((n: any) => n.phone_number)).toEqual(['+14155550111', '+14155550110']);
    expect(listed.body.pagination).toMatchObject({ total: 2, page: 1 });

    const { agent } = await agentFixture(t, { tenant, agent: { phone_number: '+14155550110' } });
    const set = await tenant.request('PATCH', `/api/v1/phone-numbers/${encoded('+14155550110')}`, {
      inbound_agent_id: agent.id,
      label: 'Front desk',
    });
    expect(set.status, set.raw).toBe(200);
    const moved = await t.admin('PATCH', `/admin/v1/phone-numbers/${encoded('+14155550110')}`, {
      tenant_id: other.id,
    });
    expect(moved.status, moved.raw).toBe(200);
    expect(moved.body.data).toMatchObject({ tenant_id: other.id, inbound_agent_id: null, label: null });
    expectError(
      await tenant.request('GET', `/api/v1/phone-numbers/${encoded('+14155550110')}`),
      404,
      'not_found',
    );
    expect((await other.request('GET', `/api/v1/phone-numbers/${encoded('+14155550110')}`)).status).toBe(200);

    const released = await t.admin('DELETE', `/admin/v1/phone-numbers/${encoded('+14155550110')}`);
    expect(released.status).toBe(200);
    expectError(await t.admin('GET', `/admin/v1/phone-numbers/${encoded('+14155550110')}`), 404, 'not_found');
    expectError(
      await t.admin('DELETE', `/admin/v1/phone-numbers/${encoded('+14155550110')}`),
      404,
      'not_found',
    );
  });
});

describe('partner: /api/v1/phone-numbers', () => {
  it('lists the tenant’s numbers only, filters by inbound agent, and never shows another tenant’s', async () => {
    const tenant = await createTenant(t, { name: 'Lists' });
    const stranger = await createTenant(t, { name: 'Stranger' });
    await importNumber('+14155550120', tenant.id);
    await importNumber('+14155550121', tenant.id);
    await importNumber('+14155550122', stranger.id);
    const { agent } = await agentFixture(t, { tenant, agent: { phone_number: '+14155550120' } });
    await tenant.request('PATCH', `/api/v1/phone-numbers/${encoded('+14155550121')}`, {
      inbound_agent_id: agent.id,
    });

    const all = await tenant.request('GET', '/api/v1/phone-numbers');
    expect(all.status).toBe(200);
    expect(all.body.data.map((n: any) => n.phone_number).sort()).toEqual(['+14155550120', '+14155550121']);
    expect(all.body.data[0]).not.toHaveProperty('tenant_id');
    const answered = await tenant.request('GET', `/api/v1/phone-numbers?inbound_agent_id=${agent.id}`);
    expect(answered.body.data.map((n: any) => n.phone_number)).toEqual(['+14155550121']);
    expect(answered.body.pagination.total).toBe(1);

    expectError(
      await tenant.request('GET', `/api/v1/phone-numbers/${encoded('+14155550122')}`),
      404,
      'not_found',
    );
    expectError(
      await tenant.request('PATCH', `/api/v1/phone-numbers/${encoded('+14155550122')}`, {
        inbound_agent_id: null,
      }),
      404,
      'not_found',
    );
    const theirs = await stranger.request('GET', `/api/v1/phone-numbers/${encoded('+14155550122')}`);
    expect(theirs.body.data.inbound_agent_id).toBeNull();
  });

  it('PATCH: the agent must be the tenant’s (422 on inbound_agent_id); null unassigns; "" clears the label', async () => {
    const tenant = await createTenant(t, { name: 'Patches' });
    await importNumber('+14155550130', tenant.id);
    const { agent: foreign } = await agentFixture(t, { tenant: b, agent: { phone_number: '+14155550199' } });
    const path = `/api/v1/phone-numbers/${encoded('+14155550130')}`;
    expectInvalidFields(await tenant.request('PATCH', path, { inbound_agent_id: foreign.id }), [
      'inbound_agent_id',
    ]);
    expectInvalidFields(await tenant.request('PATCH', path, { label: 'x' }), ['inbound_agent_id']);
    expectInvalidFields(await tenant.request('PATCH', path, { inbound_agent_id: null, extra: 1 }), ['extra']);
    expect((await tenant.request('GET', path)).body.data).toMatchObject({
      inbound_agent_id: null,
      label: null,
    });

    const { agent } = await agentFixture(t, { tenant, agent: { phone_number: '+14155550130' } });
    const set = await tenant.request('PATCH', path, { inbound_agent_id: agent.id, label: 'Sales line' });
    expect(set.body.data).toMatchObject({ inbound_agent_id: agent.id, label: 'Sales line' });
    const cleared = await tenant.request('PATCH', path, { inbound_agent_id: null, label: '' });
    expect(cleared.body.data).toMatchObject({ inbound_agent_id: null, label: null });
  });

  it('agents:read lists and reads; agents:write changes; other scopes neither', async () => {
    const tenant = await createTenant(t, { name: 'Scopes' });
    await importNumber('+14155550140', tenant.id);
    const key = async (scopes: string[]) =>
      (await t.admin('POST', `/admin/v1/tenants/${tenant.id}/api-keys`, { scopes })).body.data.key as string;
    const reader = await key(['agents:read']);
    const other = await key(['calls:read', 'calls:write']);
    const path = `/api/v1/phone-numbers/${encoded('+14155550140')}`;
    expect((await t.partner(reader, 'GET', '/api/v1/phone-numbers')).status).toBe(200);
    expect((await t.partner(reader, 'GET', path)).status).toBe(200);
    const refusedRead = await t.partner(other, 'GET', '/api/v1/phone-numbers');
    expectError(refusedRead, 403, 'permission_denied');
    expect(refusedRead.body.error.details).toEqual({ required_scopes: ['agents:read'] });
    const refusedWrite = await t.partner(reader, 'PATCH', path, { inbound_agent_id: null });
    expectError(refusedWrite, 403, 'permission_denied');
    expect(refusedWrite.body.error.details).toEqual({ required_scopes: ['agents:write'] });
  });
});

describe('the caller-ID rule', () => {
  it('a tenant without numbers keeps free caller ID; once it holds numbers, an agent calls from one (422 on phone_number)', async () => {
    const tenant = await createTenant(t, { name: 'Caller ID' });
    const user = await createUser(tenant);
    const free = await createAgent(t, tenant.id, user.id, { phone_number: '+14155550777' });
    expect(free.phone_number).toBe('+14155550777');

    await importNumber('+14155550150', tenant.id);
    const body = { user_id: user.id, name: 'Desk', prompt: 'Hi', welcome_message: 'Hello' };
    expectInvalidFields(
      await tenant.request('POST', '/api/v1/agents', { ...body, phone_number: '+14155550777' }),
      ['phone_number'],
    );
    expectInvalidFields(
      await tenant.request('PATCH', `/api/v1/agents/${free.id}`, { phone_number: '+14155550151' }),
      ['phone_number'],
    );
    const held = await tenant.request('POST', '/api/v1/agents', { ...body, phone_number: '+14155550150' });
    expect(held.status, held.raw).toBe(201);
    // Another tenant's number is not this tenant's.
    await importNumber('+14155550152', b.id);
    expectInvalidFields(
      await tenant.request('POST', '/api/v1/agents', { ...body, phone_number: '+14155550152' }),
      ['phone_number'],
    );
  });
});
