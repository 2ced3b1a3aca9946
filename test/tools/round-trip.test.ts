/**
 * One tool endpoint, every engine, end to end: the service runs with TELEPHONY=vapi, retell or the
 * simulator; an agent with tools is created and published through the API; a call is placed; and
 * during the call the engine itself calls the tool — the local Vapi server POSTs its `tool-calls`
 * server message to our route, the local Retell server its signed custom function call, the
 * simulator runs it in-process. The partner's endpoint verifies each request with the
 * `standardwebhooks` package, and its JSON comes back to the engine as the result; a failing or
 * slow endpoint is an error text answered 2xx (Retell, which retries failures, calls it once);
 * every tool call is a timeline entry of the call.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { agentFixture } from '../calls/helpers.js';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { type FakeRetell, startFakeRetell } from '../support/fake-retell.js';
import { type FakeVapi, startFakeVapi } from '../support/fake-vapi.js';
import { freePort } from '../support/server-process.js';
import { startToolEndpoint, type ToolEndpoint } from '../support/tool-endpoint.js';

const AGENT_NUMBER = '+14155550199';
const SERVER_SECRET = 'vapi-server-secret-0123456789';

/** Three tools on one endpoint: one answers, one fails, one is slower than its 1 s timeout. */
function toolsOn(endpoint: ToolEndpoint) {
  const tool = (name: string, path: string) => ({
    name,
    description: `The ${name} tool.`,
    parameters: { type: 'object', properties: { order_id: { type: 'string' } }, required: ['order_id'] },
    url: `${endpoint.url.replace(/\/tools$/, '')}${path}`,
    timeout_seconds: 1,
  });
  endpoint.answer = async (hit) => {
    if (hit.path === '/fail') return { status: 500, body: '{"oops":true}' };
    if (hit.path === '/slow') return { status: 200, body: '{}', delayMs: 1_500 };
    return { status: 200, body: JSON.stringify({ order: 'shipped', eta_days: 2 }) };
  };
  return [tool('check_order', '/ok'), tool('cancel_order', '/fail'), tool('track_order', '/slow')];
}

async function startListening(env: Record<string, string>): Promise<TestApp> {
  const port = await freePort();
  const t = await startTestApp({
    env: { ...env, WEBHOOK_ALLOW_PRIVATE: 'true', PUBLIC_BASE_URL: `http://127.0.0.1:${port}` },
  });
  await t.app.listen({ host: '127.0.0.1', port });
  return t;
}

interface Placed {
  tenant: TestTenant;
  agentId: string;
  callId: string;
}

/** An agent with the tools, published through the API; a tools secret; one call placed. */
async function placeCallWithTools(
  t: TestApp,
  endpoint: ToolEndpoint,
  phone = '+14155550123',
): Promise<Placed> {
  const fixture = await agentFixture(t, { credits: 10, agent: { config: { tools: toolsOn(endpoint) } } });
  const rotated = await fixture.tenant.request('POST', '/api/v1/tools-secret/rotate');
  expect(rotated.status, rotated.raw).toBe(200);
  endpoint.secrets = [rotated.body.data.secret];
  endpoint.hits.length = 0;
  await t.services.jobRunner.drain();
  const placed = await fixture.tenant.request('POST', '/api/v1/calls', { agent_id: fixture.agent.id, phone });
  expect(placed.status, placed.raw).toBe(202);
  await t.services.jobRunner.drain();
  return { tenant: fixture.tenant, agentId: fixture.agent.id, callId: placed.body.data.id };
}

async function toolEntries(placed: Placed) {
  const call = (await placed.tenant.request('GET', `/api/v1/calls/${placed.callId}`)).body.data;
  return (call.events as { status: string; detail: Record<string, unknown> }[])
    .filter((event) => event.status === 'tool_call')
    .map((event) => event.detail);
}

/** What the partner's endpoint received: verified with standardwebhooks, the same body for every engine. */
function expectVerifiedRequest(endpoint: ToolEndpoint, placed: Placed, path: string) {
  const hits = endpoint.hits.filter((hit) => hit.path === path);
  expect(hits).toHaveLength(1);
  expect(hits[0].error).toBeUndefined();
  expect(hits[0].verified).toEqual({
    call_id: placed.callId,
    agent_id: placed.agentId,
    tool: { '/ok': 'check_order', '/fail': 'cancel_order', '/slow': 'track_order' }[path],
    arguments: { order_id: 'A-1' },
  });
}

let endpoint: ToolEndpoint;
beforeAll(async () => {
  endpoint = await startToolEndpoint();
});
afterAll(async () => {
  await endpoint?.close();
});

describe('under Vapi', () => {
  let vapi: FakeVapi;
  let t: TestApp;
  beforeAll(async () => {
    vapi = await startFakeVapi({ phoneNumbers: [AGENT_NUMBER], serverSecret: SERVER_SECRET });
    t = await startListening({
      TELEPHONY: 'vapi',
      VAPI_API_KEY: vapi.apiKey,
      VAPI_API_BASE: vapi.url,
      VAPI_SERVER_SECRET: SERVER_SECRET,
      VAPI_SERVER_CREDENTIAL_ID: 'cred_voiceplane_test',
    });
  });
  afterAll(async () => {
    await t?.close();
    await vapi?.close();
  });

  it('Vapi’s tool-calls message reaches the endpoint signed; the answer, a failure and a timeout come back as ToolCallResults', async () => {
    const placed = await placeCallWithTools(t, endpoint);
    const engineCallId = [...vapi.calls.keys()].at(-1) as string;
    const args = { order_id: 'A-1' };

    const ok = await vapi.callTool(engineCallId, 'check_order', args);
    expect(ok.schemaErrors).toEqual([]);
    expect(ok.status).toBe(200);
    expect(ok.result).toEqual({
      toolCallId: (ok.message.toolCallList as { id: string }[])[0].id,
      name: 'check_order',
      result: JSON.stringify({ order: 'shipped', eta_days: 2 }),
    });
    expectVerifiedRequest(endpoint, placed, '/ok');

    // Vapi's guides send the arguments as an object: the same request reaches the endpoint.
    const asObject = await vapi.callTool(engineCallId, 'check_order', args, { argumentsAs: 'object' });
    expect(asObject.result?.result).toBe(ok.result?.result);

    const failed = await vapi.callTool(engineCallId, 'cancel_order', args);
    expect(failed).toMatchObject({ status: 200, schemaErrors: [] });
    expect(failed.result).toMatchObject({
      name: 'cancel_order',
      error: expect.stringMatching(/cancel_order failed/),
    });
    expect(failed.result).not.toHaveProperty('result');
    expectVerifiedRequest(endpoint, placed, '/fail');

    const slow = await vapi.callTool(engineCallId, 'track_order', args);
    expect(slow).toMatchObject({ status: 200, timedOut: false, schemaErrors: [] });
    expect(slow.result?.error).toMatch(/did not answer in time/);

    expect((await toolEntries(placed)).map((entry) => [entry.name, entry.outcome])).toEqual([
      ['check_order', 'succeeded'],
      ['check_order', 'succeeded'],
      ['cancel_order', 'failed'],
      ['track_order', 'timed_out'],
    ]);
  });
});

describe('under Retell', () => {
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

  it('Retell’s signed function call reaches the endpoint signed; the answer, a failure and a timeout come back 200, each called once', async () => {
    const placed = await placeCallWithTools(t, endpoint);
    const engineCallId = retell.calls.at(-1)?.call_id as string;
    const args = { order_id: 'A-1' };

    const ok = await retell.callTool(engineCallId, 'check_order', args);
    expect(ok.attempts.map((attempt) => attempt.status)).toEqual([200]);
    expect(JSON.parse(ok.result ?? '')).toEqual({ order: 'shipped', eta_days: 2 });
    expectVerifiedRequest(endpoint, placed, '/ok');

    const failed = await retell.callTool(engineCallId, 'cancel_order', args);
    expect(failed.attempts.map((attempt) => attempt.status)).toEqual([200]);
    expect(JSON.parse(failed.result ?? '')).toEqual({ error: expect.stringMatching(/cancel_order failed/) });
    // Answered 200, so Retell does not retry: the partner's endpoint was called once.
    expectVerifiedRequest(endpoint, placed, '/fail');

    const slow = await retell.callTool(engineCallId, 'track_order', args);
    expect(slow.attempts.map((attempt) => attempt.status)).toEqual([200]);
    expect(JSON.parse(slow.result ?? '')).toEqual({ error: expect.stringMatching(/did not answer in time/) });
    expectVerifiedRequest(endpoint, placed, '/slow');

    expect((await toolEntries(placed)).map((entry) => [entry.name, entry.outcome])).toEqual([
      ['check_order', 'succeeded'],
      ['cancel_order', 'failed'],
      ['track_order', 'timed_out'],
    ]);
  });
});

describe('under the simulator', () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  });
  afterAll(async () => {
    await t?.close();
  });

  it('the simulator calls each tool once during the call, the same signed request; failures end nothing', async () => {
    endpoint.hits.length = 0;
    const placed = await placeCallWithTools(t, endpoint);
    for (let i = 0; i < 200 && (await toolEntries(placed)).length < 3; i++) {
      await t.services.jobRunner.drain();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    for (const hit of endpoint.hits) {
      expect(hit.error).toBeUndefined();
      expect(hit.verified).toMatchObject({ call_id: placed.callId, agent_id: placed.agentId });
    }
    expect(endpoint.hits.map((hit) => hit.path).sort()).toEqual(['/fail', '/ok', '/slow']);
    const entries = await toolEntries(placed);
    expect(Object.fromEntries(entries.map((entry) => [entry.name, entry.outcome]))).toEqual({
      check_order: 'succeeded',
      cancel_order: 'failed',
      track_order: 'timed_out',
    });
  });
});
