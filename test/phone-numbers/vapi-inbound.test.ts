/**
 * Inbound calls on Vapi, through its fake: the import points the number at our server-messages
 * route (its PATCH checked against Vapi's published schema), Vapi's `assistant-request` is answered
 * with the published version as a transient assistant (checked against the published answer
 * schema), and the call is then reported and billed once like an outbound one. A call that cannot
 * be served is answered `{ error }` (what Vapi speaks before hanging up) and recorded as failed.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DECLINED_MESSAGE } from '../../src/phone-numbers/inbound.js';
import type { TestApp } from '../support/app.js';
import { type FakeVapi, startFakeVapi } from '../support/fake-vapi.js';
import {
  CALLER,
  DECLINES,
  ENGINE_NUMBERS,
  eventTypes,
  inboundCalls,
  inboundFixture,
  startListening,
} from './engine-helpers.js';

const serverSecret = 'vapi-server-secret-0123456789';
let vapi: FakeVapi;
let t: TestApp;
const numbers = [...ENGINE_NUMBERS];

beforeAll(async () => {
  vapi = await startFakeVapi({ phoneNumbers: ENGINE_NUMBERS, serverSecret });
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
});

describe('an inbound call on Vapi', () => {
  it('the import routes the number to us; the published version answers; the call is reported and billed once', async () => {
    const number = numbers.shift() as string;
    const fixture = await inboundFixture(t, number, {
      agent: { prompt: 'Help the caller at {phone} about {product}.', welcome_message: 'Hello {name}!' },
    });
    const patches = vapi.requests.filter((r) => r.method === 'PATCH' && r.path.startsWith('/phone-number/'));
    expect(patches).toHaveLength(1);
    expect(patches[0].schemaErrors).toEqual([]);
    expect(vapi.phoneNumber(number)?.server).toEqual({
      url: `${t.config.publicBaseUrl}/engines/vapi/server-messages`,
      credentialId: 'cred_voiceplane_test',
    });

    // A draft edit is not what answers: the published version is.
    await fixture.tenant.request('PATCH', `/api/v1/agents/${fixture.agent.id}`, { prompt: 'Draft {phone}' });
    const rung = await vapi.ringInbound(number, CALLER);
    expect(rung.status).toBe(200);
    expect(rung.schemaErrors).toEqual([]);
    const assistant = rung.answer.assistant;
    expect(assistant.firstMessage).toBe('Hello !');
    expect(assistant.model.messages[0]).toEqual({
      role: 'system',
      content: `Help the caller at ${CALLER} about .`,
    });
    expect(assistant.server.url).toBe(`${t.config.publicBaseUrl}/engines/vapi/server-messages`);
    const [stored] = await inboundCalls(fixture.tenant);
    expect(stored).toMatchObject({
      direction: 'inbound',
      from: CALLER,
      to: number,
      status: 'dialing',
      agent_id: fixture.agent.id,
      agent_version: 1,
      engine: 'vapi',
      engine_call_id: rung.engineCallId,
    });
    expect(assistant.metadata.voiceplane_call_id).toBe(stored.id);

    const startedAt = new Date(Date.now() - 125_000);
    const script = { startedAt, endedAt: new Date(startedAt.getTime() + 125_000), transcript: 'AI: Hello !' };
    expect(await vapi.playCall(rung.engineCallId, script)).toEqual([200, 200, 200, 200]);
    // Vapi sends its reports again: acknowledged, billed once.
    expect(await vapi.playCall(rung.engineCallId, script)).toEqual([200, 200, 200, 200]);
    const call = (await fixture.tenant.request('GET', `/api/v1/calls/${stored.id}`)).body.data;
    expect(call).toMatchObject({
      status: 'completed',
      direction: 'inbound',
      duration_seconds: 125,
      billed_minutes: 3,
      transcript: 'AI: Hello !',
    });
    const credits = await t.admin('GET', `/admin/v1/users/${fixture.userId}/credits`);
    expect(credits.body.data.balance_minutes).toBe(7);
    expect(await eventTypes(fixture.tenant, stored.id)).toEqual(['call.completed', 'call.started']);
  });

  it('the agent’s voicemail message is what a declined caller hears', async () => {
    const number = numbers.shift() as string;
    const fixture = await inboundFixture(t, number, {
      credits: 0,
      agent: { config: { voicemail: { action: 'leave_message', message: 'We are closed, {phone}.' } } },
    });
    const rung = await vapi.ringInbound(number, CALLER);
    expect(rung.answer).toEqual({ error: `We are closed, ${CALLER}.` });
    expect((await inboundCalls(fixture.tenant))[0]).toMatchObject({ ended_reason: 'insufficient-credits' });
  });
});

describe('a declined inbound call on Vapi', () => {
  for (const decline of DECLINES) {
    it(`${decline.reason}: Vapi is answered an error to speak; a failed call, call.failed`, async () => {
      const number = numbers.shift() as string;
      const fixture = await inboundFixture(t, number, decline.options);
      await decline.arrange?.(t, fixture);
      const rung = await vapi.ringInbound(number, CALLER);
      expect(rung.status).toBe(200);
      expect(rung.schemaErrors).toEqual([]);
      expect(rung.answer).toEqual({ error: DECLINED_MESSAGE });
      const calls = await inboundCalls(fixture.tenant);
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({
        direction: 'inbound',
        status: 'failed',
        ended_reason: decline.reason,
        from: CALLER,
        to: number,
        billed_minutes: 0,
        engine_call_id: rung.engineCallId,
      });
      await t.services.jobRunner.drain();
      expect(await eventTypes(fixture.tenant, calls[0].id)).toEqual(['call.failed']);
    });
  }
});
