/**
 * Outcomes on the call (docs/calls.md, "Outcomes"): who answered, voicemail by the agent's setting,
 * the transfer, the analysis fitted to the configured fields with `call.analyzed`, and the
 * engine's own cost for the operator only. Through the real callback routes, with the local Vapi
 * and Retell servers' messages, and with the simulator.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Receiver, startReceiver } from '../events/helpers.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { type FakeRetell, startFakeRetell } from '../support/fake-retell.js';
import { type FakeVapi, startFakeVapi } from '../support/fake-vapi.js';
import { freePort } from '../support/server-process.js';
import { type AgentFixture, agentFixture, balanceOf } from './helpers.js';

const AGENT_NUMBER = '+14155550199';
const TRANSFER_NUMBER = '+14155550142';

const ANALYSIS = {
  summary: true,
  success_criteria: 'The callee agreed to a visit.',
  data: [
    { name: 'budget', type: 'number', description: 'The budget.' },
    { name: 'booked', type: 'boolean', description: 'Whether a visit was booked.' },
    { name: 'tier', type: 'enum', description: 'The tier.', values: ['gold', 'silver'] },
    { name: 'notes', type: 'string', description: 'Anything else.' },
  ],
};

const configWith = (voicemail: 'hang_up' | 'leave_message') => ({
  voicemail: { action: voicemail, message: 'Hi {name}, Acme here. We will call back.' },
  transfer: [{ phone_number: TRANSFER_NUMBER, description: 'The callee asks for a person.' }],
  analysis: ANALYSIS,
});

async function startListening(env: Record<string, string>): Promise<TestApp> {
  const port = await freePort();
  const t = await startTestApp({
    env: { ...env, PUBLIC_BASE_URL: `http://127.0.0.1:${port}`, WEBHOOK_ALLOW_PRIVATE: 'true' },
  });
  await t.app.listen({ host: '127.0.0.1', port });
  return t;
}

async function place(t: TestApp, fixture: AgentFixture, phone = '+14155550123'): Promise<string> {
  const placed = await fixture.tenant.request('POST', '/api/v1/calls', {
    agent_id: fixture.agent.id,
    phone,
    name: 'Ada',
    context: { product: 'solar panels' },
  });
  expect(placed.status, placed.raw).toBe(202);
  await t.services.jobRunner.drain();
  return placed.body.data.id;
}

const getCall = async (fixture: AgentFixture, callId: string) =>
  (await fixture.tenant.request('GET', `/api/v1/calls/${callId}`)).body.data;

async function eventTypes(fixture: AgentFixture, callId: string): Promise<string[]> {
  const events = await fixture.tenant.request('GET', '/api/v1/events?limit=100');
  return events.body.data
    .filter((e: any) => e.data.object.id === callId)
    .map((e: any) => e.type)
    .sort();
}

describe('TELEPHONY=vapi: the end-of-call-report’s outcome', () => {
  const serverSecret = 'vapi-server-secret-0123456789';
  let vapi: FakeVapi;
  let t: TestApp;
  let receiver: Receiver;
  beforeAll(async () => {
    vapi = await startFakeVapi({ phoneNumbers: [AGENT_NUMBER], serverSecret });
    receiver = await startReceiver();
    t = await startListening({
      TELEPHONY: 'vapi',
      VAPI_API_KEY: vapi.apiKey,
      VAPI_API_BASE: vapi.url,
      VAPI_SERVER_SECRET: serverSecret,
      VAPI_SERVER_CREDENTIAL_ID: 'cred_voiceplane_test',
    });
  });
  afterAll(async () => {
    await t?.close();
    await vapi?.close();
    await receiver?.close();
  });

  const engineIdOf = (callId: string) =>
    [...vapi.calls.entries()].find(
      ([, entry]) => entry.call.assistant?.metadata?.voiceplane_call_id === callId,
    )?.[0] as string;

  it('voicemail with hang_up ends no_answer, billed nothing; with leave_message completed, billed', async () => {
    const hangUp = await agentFixture(t, { credits: 10, agent: { config: configWith('hang_up') } });
    const first = await place(t, hangUp);
    await vapi.playCall(engineIdOf(first), { endedReason: 'voicemail' });
    expect(await getCall(hangUp, first)).toMatchObject({
      status: 'no_answer',
      ended_reason: 'voicemail',
      answered_by: 'voicemail',
      billed_minutes: 0,
    });
    expect(await balanceOf(t, hangUp.userId)).toBe(10);

    const leave = await agentFixture(t, { credits: 10, agent: { config: configWith('leave_message') } });
    const second = await place(t, leave);
    await vapi.playCall(engineIdOf(second), { endedReason: 'voicemail' });
    expect(await getCall(leave, second)).toMatchObject({
      status: 'completed',
      ended_reason: 'voicemail',
      answered_by: 'voicemail',
      duration_seconds: 42,
      billed_minutes: 1,
    });
    expect(await balanceOf(t, leave.userId)).toBe(9);
  });

  it('a transferred call ends completed with transferred_to; the analysis is fitted and call.analyzed sent', async () => {
    const fixture = await agentFixture(t, { credits: 10, agent: { config: configWith('hang_up') } });
    const endpoint = await fixture.tenant.request('POST', '/api/v1/webhook-endpoints', {
      url: receiver.url,
      events: ['call.analyzed'],
    });
    expect(endpoint.status, endpoint.raw).toBe(201);
    receiver.secret = endpoint.body.data.secret;
    const callId = await place(t, fixture);
    const statuses = await vapi.playCall(engineIdOf(callId), {
      endedReason: 'assistant-forwarded-call',
      destination: { type: 'number', number: TRANSFER_NUMBER },
      analysis: {
        summary: 'Ada asked for a person.',
        successEvaluation: 'true',
        structuredData: { budget: '1200', booked: 'yes', tier: 'Gold', invented: 1 },
      },
      cost: 0.2345,
      durationSeconds: 42.5,
    });
    expect(statuses).toEqual([200, 200, 200, 200]);
    const call = await getCall(fixture, callId);
    expect(call).toMatchObject({
      status: 'completed',
      ended_reason: 'assistant-forwarded-call',
      answered_by: 'human',
      transferred_to: TRANSFER_NUMBER,
      analysis: {
        summary: 'Ada asked for a person.',
        successful: true,
        data: { budget: 1200, booked: true, tier: 'gold', notes: null },
      },
    });
    expect(Object.keys(call.analysis.data).sort()).toEqual(['booked', 'budget', 'notes', 'tier']);
    // The engine's cost is the operator's: never in a partner's answer, list or event.
    expect(call).not.toHaveProperty('engine_cost_usd');
    const listed = await fixture.tenant.request('GET', '/api/v1/calls');
    expect(listed.body.data[0]).not.toHaveProperty('engine_cost_usd');
    const operator = await t.admin('GET', `/admin/v1/calls/${callId}`);
    expect(operator.body.data).toMatchObject({
      engine_cost_usd: 0.2345,
      engine_duration_seconds: 42.5,
      transferred_to: TRANSFER_NUMBER,
    });

    expect(await eventTypes(fixture, callId)).toEqual([
      'call.analyzed',
      'call.completed',
      'call.queued',
      'call.started',
    ]);
    await t.services.jobRunner.drain();
    const [delivered] = await receiver.waitFor(1);
    const event = delivered.verified as any;
    expect(event.type).toBe('call.analyzed');
    expect(event.data.object).toMatchObject({ id: callId, analysis: call.analysis, answered_by: 'human' });
    expect(event.data.object).not.toHaveProperty('engine_cost_usd');

    // The report again: nothing changes, no second call.analyzed.
    await vapi.playCall(engineIdOf(callId), {
      endedReason: 'assistant-forwarded-call',
      analysis: { summary: 'x' },
    });
    expect((await getCall(fixture, callId)).analysis.summary).toBe('Ada asked for a person.');
    expect((await eventTypes(fixture, callId)).filter((type) => type === 'call.analyzed')).toHaveLength(1);
  });
});

describe('TELEPHONY=retell: call_ended and call_analyzed', () => {
  let retell: FakeRetell;
  let t: TestApp;
  beforeAll(async () => {
    retell = await startFakeRetell();
    t = await startListening({
      TELEPHONY: 'retell',
      RETELL_API_KEY: retell.apiKey,
      RETELL_API_BASE: retell.url,
    });
  });
  afterAll(async () => {
    await t?.close();
    await retell?.close();
  });

  const engineIdOf = (callId: string) =>
    retell.calls.find((call) => (call.metadata as any)?.voiceplane_call_id === callId)?.call_id as string;

  it('voicemail_reached follows the agent’s setting; call_transfer sets transferred_to; call_analyzed the analysis', async () => {
    const leave = await agentFixture(t, { credits: 10, agent: { config: configWith('leave_message') } });
    await t.services.jobRunner.drain();
    const voicemail = await place(t, leave);
    await retell.playCall(engineIdOf(voicemail), {
      disconnectionReason: 'voicemail_reached',
      durationMs: 30_000,
    });
    expect(await getCall(leave, voicemail)).toMatchObject({
      status: 'completed',
      ended_reason: 'voicemail_reached',
      answered_by: 'voicemail',
      billed_minutes: 1,
    });

    const transferred = await place(t, leave, '+14155550124');
    const deliveries = await retell.playCall(engineIdOf(transferred), {
      disconnectionReason: 'call_transfer',
      transferDestination: TRANSFER_NUMBER,
      customAnalysisData: { budget: 900, booked: false, tier: 'platinum' },
      callCost: { combined_cost: 31.5, total_duration_seconds: 42 },
    });
    expect(deliveries.map((d) => `${d.event} ${d.status}`)).toEqual([
      'call_started 204',
      'call_ended 204',
      'call_analyzed 204',
    ]);
    expect(await getCall(leave, transferred)).toMatchObject({
      status: 'completed',
      ended_reason: 'call_transfer',
      answered_by: 'human',
      transferred_to: TRANSFER_NUMBER,
      analysis: {
        summary: 'A test call.',
        successful: true,
        data: { budget: 900, booked: false, tier: null, notes: null },
      },
    });
    const operator = await t.admin('GET', `/admin/v1/calls/${transferred}`);
    expect(operator.body.data).toMatchObject({ engine_cost_usd: 0.315, engine_duration_seconds: 42 });
    expect(await eventTypes(leave, transferred)).toContain('call.analyzed');
  });
});
