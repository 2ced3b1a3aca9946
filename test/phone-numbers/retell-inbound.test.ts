/**
 * Inbound calls on Retell, through its fake: the import sets the number's inbound_webhook_url to
 * our route and unbinds any agent (checked against Retell's published schema); Retell's signed
 * `call_inbound` is answered with the published version's Retell agent and version and `{phone}` as
 * a dynamic variable, storing nothing (Retell retries it, and no call may follow); the call is
 * stored by its first webhook, then reported and billed once. A call that cannot be served is
 * answered without an agent (Retell disconnects) and recorded as failed.
 */
import { sign } from 'retell-sdk';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { TestApp } from '../support/app.js';
import { type FakeRetell, startFakeRetell } from '../support/fake-retell.js';
import {
  CALLER,
  DECLINES,
  ENGINE_NUMBERS,
  eventTypes,
  inboundCalls,
  inboundFixture,
  startListening,
} from './engine-helpers.js';

let retell: FakeRetell;
let t: TestApp;
const numbers = [...ENGINE_NUMBERS];

beforeAll(async () => {
  retell = await startFakeRetell({ phoneNumbers: ENGINE_NUMBERS });
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

describe('an inbound call on Retell', () => {
  it('the import routes the number to us; the published version answers; stored by its first webhook, billed once', async () => {
    const number = numbers.shift() as string;
    const fixture = await inboundFixture(t, number, {
      agent: { prompt: 'Help the caller at {phone} about {product}.', welcome_message: 'Hello {name}!' },
    });
    const updates = retell.requestsTo('PATCH', '/update-phone-number/');
    expect(updates).toHaveLength(1);
    expect(updates[0].schemaErrors).toBeUndefined();
    expect(retell.phoneNumber(number)).toMatchObject({
      inbound_webhook_url: `${t.config.publicBaseUrl}/engines/retell/inbound`,
      inbound_agent_id: null,
      inbound_agents: null,
    });

    await fixture.tenant.request('PATCH', `/api/v1/agents/${fixture.agent.id}`, { prompt: 'Draft {phone}' });
    const rung = await retell.ringInbound(number, CALLER);
    expect(rung.status).toBe(200);
    expect(rung.problems).toEqual([]);
    const answer = rung.answer?.call_inbound;
    expect(answer.dynamic_variables).toEqual({ phone: CALLER, product: '', name: '' });
    // The published version's Retell agent, frozen by publish-agent.
    const version = retell
      .agentVersions(answer.override_agent_id)
      .find((v) => v.version === answer.override_agent_version);
    expect(version).toMatchObject({ is_published: true });
    expect(rung.callId).toEqual(expect.any(String));
    // Nothing is stored until Retell's call exists: a retried call_inbound leaves nothing behind.
    expect((await retell.ringInbound(number, CALLER)).status).toBe(200);
    expect(await inboundCalls(fixture.tenant)).toEqual([]);

    const deliveries = await retell.playCall(rung.callId as string, {
      disconnectionReason: 'user_hangup',
      durationMs: 61_000,
      transcript: 'Agent: Hello !',
    });
    expect(deliveries.map((d) => d.status)).toEqual([204, 204, 204]);
    // Retell delivers them again: acknowledged, stored and billed once.
    await retell.playCall(rung.callId as string, { disconnectionReason: 'user_hangup', durationMs: 61_000 });
    const calls = await inboundCalls(fixture.tenant);
    expect(calls).toHaveLength(1);
    expect(calls[0]).toMatchObject({
      direction: 'inbound',
      from: CALLER,
      to: number,
      status: 'completed',
      agent_id: fixture.agent.id,
      agent_version: 1,
      prompt: `Help the caller at ${CALLER} about .`,
      engine: 'retell',
      engine_call_id: rung.callId,
      duration_seconds: 61,
      billed_minutes: 2,
    });
    const credits = await t.admin('GET', `/admin/v1/users/${fixture.userId}/credits`);
    expect(credits.body.data.balance_minutes).toBe(8);
    expect(await eventTypes(fixture.tenant, calls[0].id)).toEqual(
      expect.arrayContaining(['call.completed', 'call.started']),
    );
  });

  it('a lost call_started: the call is stored by call_ended and billed', async () => {
    const number = numbers.shift() as string;
    const fixture = await inboundFixture(t, number);
    const rung = await retell.ringInbound(number, CALLER);
    await retell.playCall(rung.callId as string, { events: ['call_ended'], durationMs: 30_000 });
    expect((await inboundCalls(fixture.tenant))[0]).toMatchObject({ status: 'completed', billed_minutes: 1 });
  });

  it('an unsigned or badly signed call_inbound is 401', async () => {
    const body = JSON.stringify({
      event: 'call_inbound',
      call_inbound: { from_number: CALLER, to_number: numbers[0] },
    });
    const unsigned = await t.inject({
      method: 'POST',
      url: '/engines/retell/inbound',
      payload: body,
      headers: { 'content-type': 'application/json' },
    });
    expect(unsigned.status).toBe(401);
    const forged = await t.inject({
      method: 'POST',
      url: '/engines/retell/inbound',
      payload: body,
      headers: { 'content-type': 'application/json', 'x-retell-signature': await sign(body, 'not-the-key') },
    });
    expect(forged.status).toBe(401);
  });
});

describe('a declined inbound call on Retell', () => {
  for (const decline of DECLINES) {
    it(`${decline.reason}: answered without an agent (Retell disconnects); a failed call, call.failed`, async () => {
      const number = numbers.shift() as string;
      const fixture = await inboundFixture(t, number, decline.options);
      await decline.arrange?.(t, fixture);
      const rung = await retell.ringInbound(number, CALLER);
      expect(rung.status).toBe(200);
      expect(rung.answer).toEqual({ call_inbound: {} });
      expect(rung.callId).toBeUndefined();
      const calls = await inboundCalls(fixture.tenant);
      expect(calls).toHaveLength(1);
      expect(calls[0]).toMatchObject({
        direction: 'inbound',
        status: 'failed',
        ended_reason: decline.reason,
        from: CALLER,
        to: number,
        billed_minutes: 0,
      });
      await t.services.jobRunner.drain();
      expect(await eventTypes(fixture.tenant, calls[0].id)).toEqual(['call.failed']);
    });
  }
});
