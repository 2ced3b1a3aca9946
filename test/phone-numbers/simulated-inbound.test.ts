/**
 * Inbound calls under the simulator, end to end: `POST /admin/v1/simulator/inbound-calls` rings an
 * imported number; its inbound agent's published version answers (`{phone}` the caller, other
 * placeholders empty), the call is played, reported and billed once like an outbound one; a call
 * that cannot be served is declined and recorded as failed with `call.failed`.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type AgentFixture, agentFixture, balanceOf, grantCredits, publish } from '../calls/helpers.js';
import { createTenant, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { expectInvalidFields } from '../support/expect.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp({ env: { SIMULATED_CALL_SECONDS: '61' } });
});
afterAll(async () => {
  await t?.close();
});

const CALLER = '+14155550123';
let nextNumber = 200;

/** A tenant with a number answered by a published agent (owner with `credits`). */
async function inboundFixture(options: { credits?: number; agent?: Record<string, unknown> } = {}) {
  const tenant = await createTenant(t);
  const number = `+1415555${String(nextNumber++).padStart(4, '0')}`;
  const imported = await t.admin('POST', '/admin/v1/phone-numbers', {
    phone_number: number,
    tenant_id: tenant.id,
  });
  expect(imported.status, imported.raw).toBe(201);
  const fixture = await agentFixture(t, {
    tenant,
    credits: options.credits ?? 10,
    agent: {
      phone_number: number,
      prompt: 'Answer {phone} politely about {product}.',
      welcome_message: 'Thanks for calling, {name}!',
      ...options.agent,
    },
  });
  const set = await tenant.request('PATCH', `/api/v1/phone-numbers/${encodeURIComponent(number)}`, {
    inbound_agent_id: fixture.agent.id,
  });
  expect(set.status, set.raw).toBe(200);
  return { ...fixture, number };
}

async function ring(to: string, from = CALLER) {
  return t.admin('POST', '/admin/v1/simulator/inbound-calls', { to, from });
}

async function eventsOf(tenant: TestTenant, callId: string) {
  const events = await tenant.request('GET', '/api/v1/events?limit=100');
  return events.body.data.filter((e: any) => e.data.object.id === callId).map((e: any) => e.type);
}

async function finalCall(fixture: AgentFixture, callId: string) {
  await t.services.jobRunner.drain();
  return (await fixture.tenant.request('GET', `/api/v1/calls/${callId}`)).body.data;
}

describe('a simulated inbound call', () => {
  it('is answered by the number’s agent, played, reported and billed once', async () => {
    const fixture = await inboundFixture({ credits: 10 });
    const rung = await ring(fixture.number);
    expect(rung.status, rung.raw).toBe(201);
    expect(rung.body.data).toMatchObject({
      direction: 'inbound',
      from: CALLER,
      to: fixture.number,
      agent_id: fixture.agent.id,
      agent_version: 1,
      prompt: 'Answer +14155550123 politely about .',
      welcome_message: 'Thanks for calling, !',
    });
    const call = await finalCall(fixture, rung.body.data.id);
    expect(call).toMatchObject({ status: 'completed', direction: 'inbound', billed_minutes: 2 });
    expect(call.transcript).toContain('Agent: Thanks for calling, !');
    expect(await balanceOf(t, fixture.userId)).toBe(8);
    // Once: draining again changes nothing.
    await t.services.jobRunner.drain();
    expect(await balanceOf(t, fixture.userId)).toBe(8);
    expect(await eventsOf(fixture.tenant, call.id)).toEqual(
      expect.arrayContaining(['call.queued', 'call.started', 'call.completed']),
    );

    const inbound = await fixture.tenant.request('GET', '/api/v1/calls?direction=inbound');
    expect(inbound.body.data.map((c: any) => c.id)).toEqual([call.id]);
    const outbound = await fixture.tenant.request('GET', '/api/v1/calls?direction=outbound');
    expect(outbound.body.data).toEqual([]);
  });

  it('422 on `to` for a number that was not imported', async () => {
    expectInvalidFields(await ring('+14155559876'), ['to']);
  });
});

describe('a declined inbound call', () => {
  async function expectDeclined(fixture: AgentFixture & { number: string }, reason: string) {
    const rung = await ring(fixture.number);
    expect(rung.status, rung.raw).toBe(201);
    expect(rung.body.data).toMatchObject({
      direction: 'inbound',
      status: 'failed',
      ended_reason: reason,
      from: CALLER,
      to: fixture.number,
    });
    expect(rung.body.data.failure_reason).toEqual(expect.any(String));
    const shown = await fixture.tenant.request('GET', `/api/v1/calls/${rung.body.data.id}`);
    expect(shown.body.data).toMatchObject({ billed_minutes: 0, direction: 'inbound' });
    await t.services.jobRunner.drain();
    expect(await eventsOf(fixture.tenant, rung.body.data.id)).toEqual(['call.failed']);
    return rung.body.data;
  }

  it('no inbound agent: recorded without an agent', async () => {
    const fixture = await inboundFixture();
    await fixture.tenant.request('PATCH', `/api/v1/phone-numbers/${encodeURIComponent(fixture.number)}`, {
      inbound_agent_id: null,
    });
    const call = await expectDeclined(fixture, 'no-inbound-agent');
    expect(call).toMatchObject({ agent_id: null, agent_version: null, user_id: null });
  });

  it('the agent deleted', async () => {
    const fixture = await inboundFixture();
    await fixture.tenant.request('DELETE', `/api/v1/agents/${fixture.agent.id}`);
    await expectDeclined(fixture, 'agent-unavailable');
  });

  it('the agent never published', async () => {
    const tenant = await createTenant(t);
    const number = `+1415555${String(nextNumber++).padStart(4, '0')}`;
    await t.admin('POST', '/admin/v1/phone-numbers', { phone_number: number, tenant_id: tenant.id });
    const fixture = await agentFixture(t, { tenant, publish: false, agent: { phone_number: number } });
    await tenant.request('PATCH', `/api/v1/phone-numbers/${encodeURIComponent(number)}`, {
      inbound_agent_id: fixture.agent.id,
    });
    await expectDeclined({ ...fixture, number }, 'agent-not-published');
  });

  it('no credits, then answered once credits are granted', async () => {
    const fixture = await inboundFixture({ credits: 0 });
    await expectDeclined(fixture, 'insufficient-credits');
    await grantCredits(t, fixture.userId, 5);
    expect((await ring(fixture.number)).body.data.status).toBe('queued');
  });

  it('the tenant’s wallet exhausted', async () => {
    const fixture = await inboundFixture();
    const now = new Date();
    await t.services.database.db
      .insertInto('tenant_wallets' as any)
      .values({
        tenant_id: fixture.tenant.id,
        balance_minutes: 0,
        wholesale_rate: '0.01',
        currency: 'usd',
        created_at: now,
        updated_at: now,
      })
      .execute();
    await expectDeclined(fixture, 'tenant-balance-exhausted');
  });

  it('the agent’s concurrency cap reached', async () => {
    const fixture = await inboundFixture();
    await fixture.tenant.request('PATCH', `/api/v1/agents/${fixture.agent.id}`, {
      settings: { max_concurrent_calls: 1 },
    });
    // One call talking holds the only slot.
    await t.services.database.db
      .insertInto('calls')
      .values({
        id: 'call_capholder0000000001',
        tenant_id: fixture.tenant.id,
        agent_id: fixture.agent.id,
        agent_version: 1,
        user_id: fixture.userId,
        from_number: fixture.number,
        to_number: CALLER,
        name: '',
        email: null,
        context: '{}',
        prompt: '',
        welcome_message: '',
        status: 'in_progress',
        created_at: new Date(),
        updated_at: new Date(),
        attempts: 1,
      } as any)
      .execute();
    await expectDeclined(fixture, 'concurrency-cap-reached');
  });

  it('outside the agent’s calling hours', async () => {
    const fixture = await inboundFixture();
    const now = new Date();
    const closedDay = ((now.getUTCDay() + 3) % 7) + 1;
    await fixture.tenant.request('PATCH', `/api/v1/agents/${fixture.agent.id}`, {
      settings: { calling_hours: { timezone: 'UTC', days: [closedDay], start: '00:00', end: '00:01' } },
    });
    await expectDeclined(fixture, 'outside-calling-hours');
  });
});

// A republished agent answers with its newest version.
describe('versions', () => {
  it('answers with the agent’s published version, not its draft', async () => {
    const fixture = await inboundFixture();
    await fixture.tenant.request('PATCH', `/api/v1/agents/${fixture.agent.id}`, { prompt: 'Draft {phone}' });
    expect((await ring(fixture.number)).body.data).toMatchObject({
      agent_version: 1,
      prompt: 'Answer +14155550123 politely about .',
    });
    await publish(t, fixture.agent.id);
    expect((await ring(fixture.number)).body.data).toMatchObject({
      agent_version: 2,
      prompt: 'Draft +14155550123',
    });
  });
});
