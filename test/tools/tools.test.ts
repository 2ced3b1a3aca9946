/**
 * Tools: one contract for every engine. A tool call under Vapi (its tool-calls server message),
 * Retell (a signed custom function call) and the simulator (in-process) reaches the partner's
 * endpoint as the same signed request, and its answer or failure comes back as the engine expects;
 * each is a timeline entry of the call. Also: the tools secret's rotation and the SSRF guard.
 */
import Fastify, { type FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { sign } from 'retell-sdk';
import { Webhook } from 'standardwebhooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import { registerErrorHandling } from '../../src/core/http/error-handler.js';
import { newId } from '../../src/core/ids.js';
import { TOOL_ROUTE_PATHS, toolRouteUrl } from '../../src/telephony/tool-paths.js';
import { retellToolRoutes } from '../../src/tools/retell-routes.js';
import { createToolService } from '../../src/tools/service.js';
import { vapiToolRoutes } from '../../src/tools/vapi-routes.js';
import { agentFixture } from '../calls/helpers.js';
import { startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { startToolEndpoint } from '../support/tool-endpoint.js';

const VAPI_SECRET = 'vapi-server-secret-0123456789';
const RETELL_KEY = 'key_retell_0123456789abcdef';

let t: TestApp;
let engines: FastifyInstance;
let endpoint: Awaited<ReturnType<typeof startToolEndpoint>>;
let tenant: TestTenant;
let agentId: string;
const clock = new ManualClock('2026-11-21T10:00:00Z');

async function placeCall(engine: 'vapi' | 'retell' | null): Promise<string> {
  const id = newId('call');
  const { rows } = await sql<{ user_id: string }>`SELECT user_id FROM agents WHERE id = ${agentId}`.execute(
    t.services.database.db,
  );
  await sql`
    INSERT INTO calls (id, tenant_id, agent_id, agent_version, user_id, from_number, to_number, name, prompt,
                       welcome_message, status, created_at, updated_at, engine, engine_call_id, context)
    VALUES (${id}, ${tenant.id}, ${agentId}, 1, ${rows[0].user_id}, '+14155550100', '+14155550123', 'Ada', 'Be kind.',
            'Hello', 'in_progress', ${clock.now()}, ${clock.now()}, ${engine}, ${engine ? `eng-${id}` : null}, '{}'::jsonb)
  `.execute(t.services.database.db);
  return id;
}

const metadata = (callId: string) => ({ voiceplane_call_id: callId, voiceplane_tenant_id: tenant.id });

async function timeline(callId: string) {
  const detail = await tenant.request('GET', `/api/v1/calls/${callId}`);
  return (detail.body.data.events as { status: string; detail: Record<string, unknown> }[]).filter(
    (event) => event.status === 'tool_call',
  );
}

beforeAll(async () => {
  endpoint = await startToolEndpoint();
  t = await startTestApp({ clock, env: { WEBHOOK_ALLOW_PRIVATE: 'true' } });
  const fixture = await agentFixture(t);
  tenant = fixture.tenant;
  agentId = fixture.agent.id;
  const tools = [
    {
      name: 'check_order',
      description: 'Where an order is',
      parameters: { type: 'object', properties: {} },
      url: endpoint.url,
      timeout_seconds: 1,
    },
  ];
  await sql`UPDATE agent_versions SET config = ${JSON.stringify({ tools })}::jsonb WHERE agent_id = ${agentId}`.execute(
    t.services.database.db,
  );
  const rotated = await tenant.request('POST', '/api/v1/tools-secret/rotate');
  expect(rotated.status).toBe(200);
  expect(rotated.body.data.previous_valid_until).toBeNull();
  endpoint.secrets = [rotated.body.data.secret];

  engines = Fastify();
  registerErrorHandling(engines);
  await engines.register(vapiToolRoutes, { tools: t.services.tools, config: { serverSecret: VAPI_SECRET } });
  await engines.register(retellToolRoutes, { tools: t.services.tools, config: { apiKey: RETELL_KEY } });
  await engines.ready();
});

afterAll(async () => {
  await engines?.close();
  await t?.close();
  await endpoint?.close();
});

describe('the tool route under Vapi', () => {
  const toolCallsMessage = (callId: string, args: unknown) => ({
    message: {
      type: 'tool-calls',
      call: { id: `eng-${callId}`, assistant: { metadata: metadata(callId) } },
      toolCallList: [{ id: 'toolu_1', type: 'function', function: { name: 'check_order', arguments: args } }],
    },
  });

  it('signs the request, answers the tool’s JSON as the result, writes the timeline entry', async () => {
    const callId = await placeCall('vapi');
    endpoint.hits.length = 0;
    const response = await engines.inject({
      method: 'POST',
      url: TOOL_ROUTE_PATHS.vapi,
      headers: { authorization: `Bearer ${VAPI_SECRET}` },
      payload: toolCallsMessage(callId, { order_id: 'A-17' }),
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({
      results: [{ toolCallId: 'toolu_1', name: 'check_order', result: JSON.stringify({ order: 'shipped' }) }],
    });
    expect(endpoint.hits).toHaveLength(1);
    expect(endpoint.hits[0].error).toBeUndefined();
    expect(endpoint.hits[0].verified).toEqual({
      call_id: callId,
      agent_id: agentId,
      tool: 'check_order',
      arguments: { order_id: 'A-17' },
    });
    const entries = await timeline(callId);
    expect(entries).toHaveLength(1);
    expect(entries[0].detail).toMatchObject({ name: 'check_order', outcome: 'succeeded', status_code: 200 });
    expect(typeof entries[0].detail.duration_ms).toBe('number');
    expect(JSON.stringify(entries)).not.toContain('A-17');
  });

  it('accepts the arguments as a JSON string too (toolWithToolCallList)', async () => {
    const callId = await placeCall('vapi');
    endpoint.hits.length = 0;
    const response = await engines.inject({
      method: 'POST',
      url: TOOL_ROUTE_PATHS.vapi,
      headers: { authorization: `Bearer ${VAPI_SECRET}` },
      payload: {
        message: {
          type: 'tool-calls',
          assistant: { metadata: metadata(callId) },
          toolWithToolCallList: [
            {
              type: 'function',
              function: { name: 'check_order' },
              toolCall: {
                id: 'toolu_2',
                type: 'function',
                function: { name: 'check_order', arguments: '{"order_id":"B-2"}' },
              },
            },
          ],
        },
      },
    });
    expect(response.json().results[0].result).toBe(JSON.stringify({ order: 'shipped' }));
    expect((endpoint.hits[0].verified as { arguments: unknown }).arguments).toEqual({ order_id: 'B-2' });
  });

  it('refuses a request without the server credential', async () => {
    const callId = await placeCall('vapi');
    const response = await engines.inject({
      method: 'POST',
      url: TOOL_ROUTE_PATHS.vapi,
      headers: { authorization: 'Bearer wrong' },
      payload: toolCallsMessage(callId, {}),
    });
    expect(response.statusCode).toBe(401);
  });

  it('a failing endpoint is an error text, 200 to Vapi', async () => {
    const callId = await placeCall('vapi');
    endpoint.answer = async () => ({ status: 500, body: '{"oops":true}' });
    const response = await engines.inject({
      method: 'POST',
      url: TOOL_ROUTE_PATHS.vapi,
      headers: { authorization: `Bearer ${VAPI_SECRET}` },
      payload: toolCallsMessage(callId, {}),
    });
    endpoint.answer = async () => ({ status: 200, body: JSON.stringify({ order: 'shipped' }) });
    expect(response.statusCode).toBe(200);
    expect(response.json().results[0]).toEqual({
      toolCallId: 'toolu_1',
      name: 'check_order',
      error: 'The tool check_order failed (HTTP 500).',
    });
    expect((await timeline(callId))[0].detail).toMatchObject({ outcome: 'failed', status_code: 500 });
  });
});

describe('the tool route under Retell', () => {
  const signed = async (payload: unknown) => {
    const body = JSON.stringify(payload);
    return { body, signature: await sign(body, RETELL_KEY) };
  };

  it('answers the tool’s JSON to a signed custom function call', async () => {
    const callId = await placeCall('retell');
    endpoint.hits.length = 0;
    const { body, signature } = await signed({
      call: { call_id: `eng-${callId}`, metadata: metadata(callId) },
      name: 'check_order',
      args: { order_id: 'C-3' },
    });
    const response = await engines.inject({
      method: 'POST',
      url: TOOL_ROUTE_PATHS.retell,
      headers: { 'content-type': 'application/json', 'x-retell-signature': signature },
      payload: body,
    });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ order: 'shipped' });
    expect(endpoint.hits[0].verified).toMatchObject({
      call_id: callId,
      tool: 'check_order',
      arguments: { order_id: 'C-3' },
    });
    expect(await timeline(callId)).toHaveLength(1);
  });

  it('a timeout is an error text, 200 to Retell (which would retry a failure)', async () => {
    const callId = await placeCall('retell');
    endpoint.answer = async () => ({ status: 200, body: '{}', delayMs: 1500 });
    const { body, signature } = await signed({
      call: { metadata: metadata(callId) },
      name: 'check_order',
      args: {},
    });
    const response = await engines.inject({
      method: 'POST',
      url: TOOL_ROUTE_PATHS.retell,
      headers: { 'content-type': 'application/json', 'x-retell-signature': signature },
      payload: body,
    });
    endpoint.answer = async () => ({ status: 200, body: JSON.stringify({ order: 'shipped' }) });
    expect(response.statusCode).toBe(200);
    expect(response.json()).toEqual({ error: 'The tool check_order did not answer in time.' });
    expect((await timeline(callId))[0].detail).toMatchObject({ outcome: 'timed_out' });
  });

  it('refuses a bad signature', async () => {
    const response = await engines.inject({
      method: 'POST',
      url: TOOL_ROUTE_PATHS.retell,
      headers: { 'content-type': 'application/json', 'x-retell-signature': 'v=1,d=00' },
      payload: '{"name":"check_order"}',
    });
    expect(response.statusCode).toBe(401);
  });
});

describe('the simulator (in-process)', () => {
  it('runs the same request, and refuses a call of another engine', async () => {
    const callId = await placeCall(null);
    endpoint.hits.length = 0;
    const runTool = t.services.tools.simulatedRunner();
    const answer = await runTool({
      tenantId: tenant.id,
      callId,
      name: 'check_order',
      arguments: { order_id: 'D-4' },
    });
    expect(answer).toEqual({ ok: true, result: { order: 'shipped' } });
    expect(endpoint.hits[0].verified).toEqual({
      call_id: callId,
      agent_id: agentId,
      tool: 'check_order',
      arguments: { order_id: 'D-4' },
    });
    const unknown = await t.services.tools.call({
      caller: 'simulated',
      tenantId: tenant.id,
      callId,
      name: 'nope',
      arguments: {},
    });
    expect(unknown).toEqual({ ok: false, error: 'There is no tool named nope.' });
    const vapiCall = await placeCall('vapi');
    const other = await t.services.tools.call({
      caller: 'simulated',
      tenantId: tenant.id,
      callId: vapiCall,
      name: 'check_order',
      arguments: {},
    });
    expect(other.ok).toBe(false);
    expect(toolRouteUrl('https://api.example.com/', 'vapi')).toBe(
      'https://api.example.com/engines/vapi/tool-calls',
    );
  });
});

describe('the tools secret', () => {
  it('keeps signing with the previous secret for 24 hours after a rotation', async () => {
    const old = endpoint.secrets[0];
    const rotated = await tenant.request('POST', '/api/v1/tools-secret/rotate');
    expect(rotated.status).toBe(200);
    expect(rotated.body.data.secret).toMatch(/^whsec_/);
    expect(rotated.body.data.previous_valid_until).toBe('2026-11-22T10:00:00.000Z');
    const callId = await placeCall(null);
    const run = () =>
      t.services.tools.call({
        caller: 'simulated',
        tenantId: tenant.id,
        callId,
        name: 'check_order',
        arguments: {},
      });

    endpoint.hits.length = 0;
    await run();
    const both = endpoint.hits[0].headers['webhook-signature'];
    expect(String(both).split(' ')).toHaveLength(2);
    endpoint.secrets = [rotated.body.data.secret];
    for (const secret of [old, rotated.body.data.secret]) {
      const hit = endpoint.hits[0];
      expect(() => new Webhook(secret).verify(hit.body, hit.headers as Record<string, string>)).not.toThrow();
    }

    clock.advance(24 * 3_600_000 + 1);
    endpoint.hits.length = 0;
    await run();
    const hit = endpoint.hits[0];
    expect(String(hit.headers['webhook-signature']).split(' ')).toHaveLength(1);
    expect(() => new Webhook(old).verify(hit.body, hit.headers as Record<string, string>)).toThrow();
    expect(hit.error).toBeUndefined();
  });

  it('two first rotations at once: both secrets are stored, one current, one previous', async () => {
    const { createTenant } = await import('../support/app.js');
    const fresh = await createTenant(t);
    const answers = await Promise.all([
      t.services.tools.rotateSecret(fresh.id),
      t.services.tools.rotateSecret(fresh.id),
    ]);
    expect(answers.map((answer) => answer.previous_valid_until === null).sort()).toEqual([false, true]);
    const row = await t.services.database.db
      .selectFrom('tools_secrets')
      .selectAll()
      .where('tenant_id', '=', fresh.id)
      .executeTakeFirstOrThrow();
    expect(row.previous_secret_sealed).not.toBeNull();
    expect(await t.services.tools.secretStatus(fresh.id)).toMatchObject({ exists: true });
  });

  it('needs agents:write', async () => {
    const { createTenant } = await import('../support/app.js');
    const reader = await createTenant(t, { scopes: ['agents:read'] });
    expect((await reader.request('POST', '/api/v1/tools-secret/rotate')).status).toBe(403);
  });
});

describe('the SSRF guard', () => {
  it('refuses a private target unless private targets are allowed', async () => {
    const guarded = createToolService({
      db: t.services.database.db,
      clock,
      secrets: t.services.secrets,
      allowPrivate: false,
      resolve: async () => [{ address: '127.0.0.1', family: 4 }],
    });
    const callId = await placeCall(null);
    endpoint.hits.length = 0;
    const answer = await guarded.call({
      caller: 'simulated',
      tenantId: tenant.id,
      callId,
      name: 'check_order',
      arguments: {},
    });
    expect(answer).toEqual({ ok: false, error: 'The tool check_order is not available right now.' });
    expect(endpoint.hits).toHaveLength(0);
    expect((await timeline(callId))[0].detail).toMatchObject({ outcome: 'refused' });
  });
});
