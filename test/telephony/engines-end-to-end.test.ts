/**
 * Whole calls through a real voice engine's protocol (docs/engines.md, docs/engines.md): the
 * service runs with TELEPHONY=vapi or retell against the local fake of that engine, listening on
 * a real port that is its PUBLIC_BASE_URL, so the fake's callbacks reach the real route, and the
 * partner reads the outcome through the API and the events.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { agentFixture } from '../calls/helpers.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { type FakeRetell, startFakeRetell } from '../support/fake-retell.js';
import { type FakeVapi, startFakeVapi } from '../support/fake-vapi.js';
import { freePort } from '../support/server-process.js';

const AGENT_NUMBER = '+14155550199';

/** The service on a real port, which is also its PUBLIC_BASE_URL (the engines call back there). */
async function startListening(env: Record<string, string>): Promise<TestApp> {
  const port = await freePort();
  const t = await startTestApp({ env: { ...env, PUBLIC_BASE_URL: `http://127.0.0.1:${port}` } });
  await t.app.listen({ host: '127.0.0.1', port });
  return t;
}

async function waitFor<T>(read: () => Promise<T>, done: (value: T) => boolean, what: string): Promise<T> {
  for (let i = 0; i < 200; i++) {
    const value = await read();
    if (done(value)) return value;
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  throw new Error(`timed out waiting for ${what}`);
}

describe('TELEPHONY=vapi', () => {
  const serverSecret = 'vapi-server-secret-0123456789';
  let vapi: FakeVapi;
  let t: TestApp;
  beforeAll(async () => {
    vapi = await startFakeVapi({ phoneNumbers: [AGENT_NUMBER], serverSecret });
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

  it('places the call with Vapi, and Vapi’s messages end and bill it with the transcript and recording', async () => {
    const fixture = await agentFixture(t, { credits: 10 });
    const placed = await fixture.tenant.request('POST', '/api/v1/calls', {
      agent_id: fixture.agent.id,
      phone: '+14155550123',
      name: 'Ada',
      context: { product: 'solar panels' },
    });
    expect(placed.status).toBe(202);
    const callId = placed.body.data.id;
    await t.services.jobRunner.drain();

    const created = vapi.requests.filter((r) => r.method === 'POST' && r.path === '/call');
    expect(created).toHaveLength(1);
    expect(created[0].schemaErrors).toEqual([]);
    const body = created[0].body as Record<string, any>;
    expect(body.customer.number).toBe('+14155550123');
    expect(body.assistant.firstMessage).toBe('Hello Ada, this is Acme.');
    expect(body.assistant.model.messages[0]).toEqual({
      role: 'system',
      content: 'Call Ada about solar panels.',
    });
    expect(body.assistant.metadata.voiceplane_call_id).toBe(callId);
    expect(body.assistant.server).toMatchObject({
      url: `${t.config.publicBaseUrl}/engines/vapi/server-messages`,
      credentialId: 'cred_voiceplane_test',
    });
    const engineCallId = [...vapi.calls.keys()][0];
    const dialing = await fixture.tenant.request('GET', `/api/v1/calls/${callId}`);
    expect(dialing.body.data).toMatchObject({
      status: 'dialing',
      engine: 'vapi',
      engine_call_id: engineCallId,
    });

    // A message without Vapi's credential changes nothing.
    expect(await vapi.playCall(engineCallId, { secret: 'not-the-server-secret' })).toEqual([
      401, 401, 401, 401,
    ]);
    expect((await fixture.tenant.request('GET', `/api/v1/calls/${callId}`)).body.data.status).toBe('dialing');

    const startedAt = new Date(Date.now() - 125_000);
    const statuses = await vapi.playCall(engineCallId, {
      startedAt,
      endedAt: new Date(startedAt.getTime() + 125_000),
      endedReason: 'customer-ended-call',
      transcript: 'AI: Hello Ada, this is Acme.\nUser: Hi!',
      recordingUrl: 'https://storage.vapi.ai/call.wav',
    });
    expect(statuses).toEqual([200, 200, 200, 200]);
    const call = (await fixture.tenant.request('GET', `/api/v1/calls/${callId}`)).body.data;
    expect(call).toMatchObject({
      status: 'completed',
      ended_reason: 'customer-ended-call',
      duration_seconds: 125,
      billed_minutes: 3,
      transcript: 'AI: Hello Ada, this is Acme.\nUser: Hi!',
      recording_url: 'https://storage.vapi.ai/call.wav',
      engine: 'vapi',
      engine_call_id: engineCallId,
    });
    expect(call.events.map((e: { status: string }) => e.status)).toEqual([
      'queued',
      'dialing',
      'in_progress',
      'completed',
    ]);
    const credits = await t.admin('GET', `/admin/v1/users/${fixture.userId}/credits`);
    expect(credits.body.data.balance_minutes).toBe(7);

    const events = await fixture.tenant.request('GET', '/api/v1/events?limit=100');
    const types = events.body.data
      .filter((e: any) => e.data.object.id === callId)
      .map((e: any) => e.type)
      .sort();
    expect(types).toEqual(['call.completed', 'call.queued', 'call.started']);

    // Vapi sends the report again (a retry of its own): acknowledged, nothing changes.
    expect(await vapi.playCall(engineCallId, { startedAt, endedAt: new Date() })).toEqual([
      200, 200, 200, 200,
    ]);
    expect((await fixture.tenant.request('GET', `/api/v1/calls/${callId}`)).body.data.duration_seconds).toBe(
      125,
    );
  });

  it('ends a call to a number not imported into Vapi as failed, without creating a Vapi call', async () => {
    const fixture = await agentFixture(t, { agent: { phone_number: '+14155550777' } });
    const before = vapi.calls.size;
    const placed = await fixture.tenant.request('POST', '/api/v1/calls', {
      agent_id: fixture.agent.id,
      phone: '+14155550123',
    });
    await t.services.jobRunner.drain();
    const call = await waitFor(
      async () => (await fixture.tenant.request('GET', `/api/v1/calls/${placed.body.data.id}`)).body.data,
      (c) => c.status === 'failed',
      'the call to fail',
    );
    expect(call.ended_reason).toBe('phone-number-not-imported');
    expect(call.failure_reason).toContain('not imported into Vapi');
    expect(vapi.calls.size).toBe(before);
  });

  it('keeps the engine routes out of the partner and operator API documents', async () => {
    for (const document of [
      await t.inject({ method: 'GET', url: '/api/v1/openapi.json' }),
      await t.admin('GET', '/admin/v1/openapi.json'),
    ]) {
      expect(document.status).toBe(200);
      expect(Object.keys(document.body.paths).length).toBeGreaterThan(5);
      expect(Object.keys(document.body.paths).filter((p) => p.startsWith('/engines'))).toEqual([]);
    }
  });
});

describe('TELEPHONY=vapi: a create answered 5xx is an unknown outcome, resolved by asking Vapi', () => {
  const serverSecret = 'vapi-server-secret-0123456789';
  // Near real time: Vapi's list is filtered by its own creation times.
  const clock = new ManualClock(new Date());
  let vapi: FakeVapi;
  let t: TestApp;
  beforeAll(async () => {
    vapi = await startFakeVapi({ phoneNumbers: [AGENT_NUMBER], serverSecret });
    t = await startTestApp({
      clock,
      env: {
        TELEPHONY: 'vapi',
        VAPI_API_KEY: vapi.apiKey,
        VAPI_API_BASE: vapi.url,
        VAPI_SERVER_SECRET: serverSecret,
        VAPI_SERVER_CREDENTIAL_ID: 'cred_voiceplane_test',
      },
    });
  });
  afterAll(async () => {
    await t?.close();
    await vapi?.close();
  });

  const creates = (callId: string) =>
    vapi.requests.filter(
      (r) =>
        r.method === 'POST' &&
        r.path === '/call' &&
        (r.body as any)?.assistant?.metadata?.voiceplane_call_id === callId,
    );

  it('nothing created: dialled again once the request has settled, and placed once', async () => {
    const fixture = await agentFixture(t);
    vapi.fail({ method: 'POST', path: /^\/call$/, status: 500, message: 'Internal server error' });
    const placed = await fixture.tenant.request('POST', '/api/v1/calls', {
      agent_id: fixture.agent.id,
      phone: '+14155550123',
    });
    const callId = placed.body.data.id;
    await t.services.jobRunner.drain();
    expect(creates(callId).map((r) => r.status)).toEqual([500]);
    expect((await fixture.tenant.request('GET', `/api/v1/calls/${callId}`)).body.data).toMatchObject({
      status: 'dialing',
      engine_call_id: null,
    });
    clock.advance(30_000);
    await t.services.jobRunner.drain();
    const lists = vapi.requests.filter((r) => r.method === 'GET' && r.path === '/call');
    expect(lists.length).toBeGreaterThan(0);
    expect(lists.every((r) => r.status === 200)).toBe(true);
    expect(creates(callId).map((r) => r.status)).toEqual([500, 201]);
    const ours = [...vapi.calls.values()].filter(
      (c) => c.call.assistant.metadata.voiceplane_call_id === callId,
    );
    expect(ours).toHaveLength(1);
    expect((await fixture.tenant.request('GET', `/api/v1/calls/${callId}`)).body.data).toMatchObject({
      status: 'dialing',
      engine_call_id: ours[0].call.id,
    });
  });

  it('created but the answer lost: Vapi’s call adopted from its list, never asked again', async () => {
    const fixture = await agentFixture(t);
    vapi.fail({ method: 'POST', path: /^\/call$/, mode: 'drop' });
    const placed = await fixture.tenant.request('POST', '/api/v1/calls', {
      agent_id: fixture.agent.id,
      phone: '+14155550124',
    });
    const callId = placed.body.data.id;
    await t.services.jobRunner.drain();
    // The cut connection left Vapi without the call here; Vapi creates it as the request it took.
    expect(creates(callId)).toHaveLength(1);
    const created = await fetch(`${vapi.url}/call`, {
      method: 'POST',
      headers: { authorization: `Bearer ${vapi.apiKey}`, 'content-type': 'application/json' },
      body: JSON.stringify(creates(callId)[0].body),
    });
    const engineCall = (await created.json()) as { id: string };
    // Nobody knew its id, so its messages went unheard: by now Vapi has it ended.
    Object.assign(vapi.calls.get(engineCall.id)!.call, {
      status: 'ended',
      endedReason: 'customer-ended-call',
      startedAt: new Date(Date.now() - 61_000).toISOString(),
      endedAt: new Date().toISOString(),
    });
    clock.advance(30_000);
    await t.services.jobRunner.drain();
    expect(creates(callId)).toHaveLength(2); // the first request and the stand-in for its arrival
    // Adopted, and its record applied at once by the backstop's look.
    expect((await fixture.tenant.request('GET', `/api/v1/calls/${callId}`)).body.data).toMatchObject({
      status: 'completed',
      engine_call_id: engineCall.id,
      ended_reason: 'customer-ended-call',
      billed_minutes: 2,
    });
  });
});

describe('TELEPHONY=retell', () => {
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

  it('syncs the published version at publish, places the call with it, and Retell’s signed webhooks end and bill it', async () => {
    const fixture = await agentFixture(t, { credits: 10 });
    await t.services.jobRunner.drain();
    expect(retell.llms).toHaveLength(1);
    expect(retell.llms[0]).toMatchObject({
      general_prompt: 'Call {{name}} about {{product}}.',
      begin_message: 'Hello {{name}}, this is Acme.',
    });
    expect(retell.agents).toHaveLength(1);
    expect(retell.requestsTo('POST', '/create-agent')[0].body).toMatchObject({
      webhook_url: `${t.config.publicBaseUrl}/engines/retell/webhooks`,
    });

    const placed = await fixture.tenant.request('POST', '/api/v1/calls', {
      agent_id: fixture.agent.id,
      phone: '+14155550123',
      name: 'Ada',
      context: { product: 'solar panels', visits: 3 },
    });
    expect(placed.status).toBe(202);
    const callId = placed.body.data.id;
    await t.services.jobRunner.drain();
    const created = retell.requestsTo('POST', '/v2/create-phone-call');
    expect(created).toHaveLength(1);
    expect(created[0].schemaErrors ?? []).toEqual([]);
    expect(created[0].body).toMatchObject({
      from_number: AGENT_NUMBER,
      to_number: '+14155550123',
      override_agent_id: retell.agents[0].agent_id,
      retell_llm_dynamic_variables: {
        name: 'Ada',
        product: 'solar panels',
        visits: '3',
        phone: '+14155550123',
      },
      metadata: { voiceplane_call_id: callId },
    });
    // No second sync: the version is synced once.
    expect(retell.requestsTo('POST', '/create-agent')).toHaveLength(1);
    const engineCallId = retell.calls[0].call_id as string;

    const forged = await retell.playCall(engineCallId, { signature: 'bad' });
    expect(forged.map((d) => d.status)).toEqual([401, 401, 401]);
    expect((await fixture.tenant.request('GET', `/api/v1/calls/${callId}`)).body.data.status).toBe('dialing');

    const delivered = await retell.playCall(engineCallId, {
      disconnectionReason: 'agent_hangup',
      durationMs: 61_000,
      transcript: 'Agent: Hello Ada, this is Acme.\nUser: Hi!',
      recordingUrl: 'https://retell.example/recording.wav',
    });
    expect(delivered.every((d) => d.status >= 200 && d.status < 300)).toBe(true);
    const call = (await fixture.tenant.request('GET', `/api/v1/calls/${callId}`)).body.data;
    expect(call).toMatchObject({
      status: 'completed',
      ended_reason: 'agent_hangup',
      duration_seconds: 61,
      billed_minutes: 2,
      transcript: 'Agent: Hello Ada, this is Acme.\nUser: Hi!',
      recording_url: 'https://retell.example/recording.wav',
      engine: 'retell',
      engine_call_id: engineCallId,
    });
    const credits = await t.admin('GET', `/admin/v1/users/${fixture.userId}/credits`);
    expect(credits.body.data.balance_minutes).toBe(8);
  });

  it('ends an unanswered call no_answer with Retell’s reason, billing nothing', async () => {
    const fixture = await agentFixture(t, { credits: 10 });
    const placed = await fixture.tenant.request('POST', '/api/v1/calls', {
      agent_id: fixture.agent.id,
      phone: '+14155550124',
    });
    await t.services.jobRunner.drain();
    const engineCallId = retell.calls.at(-1)?.call_id as string;
    await retell.playCall(engineCallId, { disconnectionReason: 'dial_no_answer' });
    const call = (await fixture.tenant.request('GET', `/api/v1/calls/${placed.body.data.id}`)).body.data;
    expect(call).toMatchObject({ status: 'no_answer', ended_reason: 'dial_no_answer', billed_minutes: 0 });
    const credits = await t.admin('GET', `/admin/v1/users/${fixture.userId}/credits`);
    expect(credits.body.data.balance_minutes).toBe(10);
  });
});
