/**
 * Inbound calls through a voice engine's fake (Vapi, Retell): the service on a real port that is
 * its PUBLIC_BASE_URL, so the fake reaches the route the import pointed the number at; fixtures for
 * a number with an inbound agent, and the states that make a call be declined.
 */
import { expect } from 'vitest';
import { agentFixture } from '../calls/helpers.js';
import { createTenant, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { freePort } from '../support/server-process.js';

export const CALLER = '+14155550123';
/** The numbers the fake engine holds: one per fixture. */
export const ENGINE_NUMBERS = Array.from(
  { length: 16 },
  (_, i) => `+1415555${String(300 + i).padStart(4, '0')}`,
);

export async function startListening(env: Record<string, string>): Promise<TestApp> {
  const port = await freePort();
  const t = await startTestApp({ env: { ...env, PUBLIC_BASE_URL: `http://127.0.0.1:${port}` } });
  await t.app.listen({ host: '127.0.0.1', port });
  return t;
}

export interface InboundFixture {
  tenant: TestTenant;
  userId: string;
  agent: { id: string };
  number: string;
}

/** A tenant with one of the engine's numbers imported, answered by an agent of its own. */
export async function inboundFixture(
  t: TestApp,
  number: string,
  options: { credits?: number; publish?: boolean; agent?: Record<string, unknown> } = {},
): Promise<InboundFixture> {
  const tenant = await createTenant(t);
  const imported = await t.admin('POST', '/admin/v1/phone-numbers', {
    phone_number: number,
    tenant_id: tenant.id,
  });
  expect(imported.status, imported.raw).toBe(201);
  const fixture = await agentFixture(t, {
    tenant,
    credits: options.credits ?? 10,
    publish: options.publish,
    agent: { phone_number: number, ...options.agent },
  });
  const set = await tenant.request('PATCH', `/api/v1/phone-numbers/${encodeURIComponent(number)}`, {
    inbound_agent_id: fixture.agent.id,
  });
  expect(set.status, set.raw).toBe(200);
  await t.services.jobRunner.drain();
  return { ...fixture, number };
}

/** Each way a call is declined: the fixture's options, and what then stops its agent answering. */
export const DECLINES: {
  reason: string;
  options?: { credits?: number; publish?: boolean };
  arrange?: (t: TestApp, fixture: InboundFixture) => Promise<void>;
}[] = [
  {
    reason: 'no-inbound-agent',
    arrange: async (_t, f) => {
      await f.tenant.request('PATCH', `/api/v1/phone-numbers/${encodeURIComponent(f.number)}`, {
        inbound_agent_id: null,
      });
    },
  },
  {
    reason: 'agent-unavailable',
    arrange: async (_t, f) => {
      await f.tenant.request('DELETE', `/api/v1/agents/${f.agent.id}`);
    },
  },
  { reason: 'agent-not-published', options: { publish: false } },
  { reason: 'insufficient-credits', options: { credits: 0 } },
  {
    reason: 'concurrency-cap-reached',
    arrange: async (t, f) => {
      await f.tenant.request('PATCH', `/api/v1/agents/${f.agent.id}`, {
        settings: { max_concurrent_calls: 1 },
      });
      // An outbound call talking holds the only slot.
      await t.services.database.db
        .insertInto('calls')
        .values({
          id: `call_capholder${f.number.slice(-4)}000000000`,
          tenant_id: f.tenant.id,
          agent_id: f.agent.id,
          agent_version: 1,
          user_id: f.userId,
          from_number: f.number,
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
    },
  },
  {
    reason: 'outside-calling-hours',
    arrange: async (_t, f) => {
      const closedDay = ((new Date().getUTCDay() + 3) % 7) + 1;
      await f.tenant.request('PATCH', `/api/v1/agents/${f.agent.id}`, {
        settings: { calling_hours: { timezone: 'UTC', days: [closedDay], start: '00:00', end: '00:01' } },
      });
    },
  },
];

/** The tenant's inbound calls, newest first. */
export async function inboundCalls(tenant: TestTenant): Promise<Record<string, any>[]> {
  const listed = await tenant.request('GET', '/api/v1/calls?direction=inbound&limit=100');
  expect(listed.status, listed.raw).toBe(200);
  return listed.body.data;
}

/** The event types sent about the call, sorted. */
export async function eventTypes(tenant: TestTenant, callId: string): Promise<string[]> {
  const events = await tenant.request('GET', '/api/v1/events?limit=100');
  return events.body.data
    .filter((e: any) => e.data.object.id === callId)
    .map((e: any) => e.type)
    .sort();
}
