/**
 * POST /engines/retell/webhooks (src/telephony/retell/routes.ts): Retell's signed webhooks, played by
 * the fake Retell for calls the adapter placed, reach a recording EngineReports; anything unsigned,
 * badly signed or stale is 401 and applies nothing.
 */

import Fastify, { type FastifyInstance } from 'fastify';
import { sign } from 'retell-sdk';
import { afterAll, afterEach, beforeAll, beforeEach, expect, it } from 'vitest';
import { defaultAgentConfig } from '../../src/agents/config.js';
import { ManualClock } from '../../src/core/clock.js';
import type { RetellConfig } from '../../src/core/config/config.js';
import type { Database } from '../../src/core/db/database.js';
import { registerErrorHandling } from '../../src/core/http/error-handler.js';
import type { EngineReport, EngineReports, PublishedAgentVersion } from '../../src/telephony/port.js';
import { createRetellTelephony, RETELL_WEBHOOK_PATH } from '../../src/telephony/retell/adapter.js';
import { retellRoutes } from '../../src/telephony/retell/routes.js';
import { createTestDatabase } from '../support/databases.js';
import { type FakeRetell, startFakeRetell } from '../support/fake-retell.js';

const clock = new ManualClock('2026-05-04T10:00:00Z');
let database: Database;
let drop: () => Promise<void>;
let retell: FakeRetell;
let config: RetellConfig;
let agentSeq = 0;

beforeAll(async () => {
  ({ database, drop } = await createTestDatabase());
});
afterAll(async () => {
  await drop();
});

let app: FastifyInstance;
let applied: EngineReport[];
const reports: EngineReports = {
  apply: async (engine, report) => {
    expect(engine).toBe('retell');
    applied.push(report);
    return 'applied';
  },
};

beforeEach(async () => {
  applied = [];
  // Retell's webhooks reach the app through inject.
  retell = await startFakeRetell({
    deliver: async (url, body, headers) => {
      const response = await app.inject({
        method: 'POST',
        url: new URL(url).pathname,
        payload: body,
        headers,
      });
      return { status: response.statusCode, body: response.body };
    },
  });
  config = { apiKey: retell.apiKey, apiBase: retell.url, voiceId: '11labs-Adrian' };
  app = Fastify();
  registerErrorHandling(app);
  await app.register(retellRoutes, { reports, config, clock });
  // Another route of the app still gets parsed JSON: the raw-body parser stays in the plugin.
  app.post('/elsewhere', async (request) => ({ parsed: request.body }));
  await app.ready();
});
afterEach(async () => {
  await app.close();
  await retell.close();
});

const post = (payload: string, headers: Record<string, string> = {}) =>
  app.inject({
    method: 'POST',
    url: RETELL_WEBHOOK_PATH,
    payload,
    headers: { 'content-type': 'application/json', ...headers },
  });

/** A call the adapter placed with Retell (so its metadata carries our call id). */
async function placedCall(): Promise<string> {
  const version: PublishedAgentVersion = {
    tenantId: 'ten_retell',
    agentId: `agent_${++agentSeq}`,
    version: 1,
    prompt: 'Hi {name}',
    welcomeMessage: 'Hello',
    phoneNumber: '+14155550100',
    config: defaultAgentConfig({
      voice: { provider: '11labs', voice_id: '11labs-Adrian' },
      model: { provider: 'openai', name: 'gpt-4.1', temperature: 0.7 },
    }),
  };
  const telephony = createRetellTelephony({
    config,
    db: database.db,
    clock,
    publicBaseUrl: 'https://voiceplane.example',
    findAgentVersion: async () => version,
  });
  const placed = await telephony.dial({
    callId: 'call_ours_1',
    attempt: 1,
    tenantId: version.tenantId,
    agentId: version.agentId,
    agentVersion: version.version,
    from: version.phoneNumber,
    to: '+14155550123',
    name: 'Ada',
    email: null,
    prompt: 'Hi Ada',
    welcomeMessage: 'Hello',
    context: {},
  });
  if (placed.outcome !== 'placed') throw new Error('not placed');
  return placed.engineCallId;
}

it('a played call reaches EngineReports: started, then ended, then its analysis', async () => {
  const engineCallId = await placedCall();
  const start = Date.now() - 60_000;
  const deliveries = await retell.playCall(engineCallId, {
    startTimestamp: start,
    durationMs: 60_000,
    transcript: 'Agent: Hello',
    recordingUrl: 'https://retell.example/r.wav',
  });

  expect(deliveries.map((delivery) => `${delivery.event} ${delivery.status}`)).toEqual([
    'call_started 204',
    'call_ended 204',
    'call_analyzed 204',
  ]);
  expect(applied).toEqual([
    { kind: 'started', callId: 'call_ours_1', engineCallId, startedAt: new Date(start) },
    {
      kind: 'ended',
      callId: 'call_ours_1',
      engineCallId,
      outcome: 'completed',
      endedReason: 'user_hangup',
      startedAt: new Date(start),
      endedAt: new Date(start + 60_000),
      durationSeconds: 60,
      transcript: 'Agent: Hello',
      recordingUrl: 'https://retell.example/r.wav',
      answeredBy: 'human',
    },
    {
      kind: 'analyzed',
      callId: 'call_ours_1',
      engineCallId,
      analysis: { summary: 'A test call.', successful: true, data: {} },
    },
  ]);
});

it.each(['none', 'bad', 'stale'] as const)(
  'a %s signature is 401 in the envelope and applies nothing',
  async (signature) => {
    const engineCallId = await placedCall();
    const deliveries = await retell.playCall(engineCallId, { signature, disconnectionReason: 'dial_busy' });

    expect(deliveries.map((delivery) => delivery.status)).toEqual([401, 401]);
    const body = JSON.parse(deliveries[0].body);
    expect(body.error.code).toBe('authentication_failed');
    expect(typeof body.request_id).toBe('string');
    expect(applied).toEqual([]);
  },
);

it('verifies the bytes as sent, not a re-serialisation', async () => {
  const payload = '{ "event" : "call_started",\n  "call": { "call_id": "rc_spaced" } }';
  const response = await post(payload, { 'x-retell-signature': await sign(payload, retell.apiKey) });
  expect(response.statusCode).toBe(204);
  expect(applied).toMatchObject([{ kind: 'started', engineCallId: 'rc_spaced' }]);

  const tampered = payload.replace('rc_spaced', 'rc_other_');
  const refused = await post(tampered, { 'x-retell-signature': await sign(payload, retell.apiKey) });
  expect(refused.statusCode).toBe(401);
  expect(applied).toHaveLength(1);
});

it('a signed body that is not a Retell event is 400 in the envelope', async () => {
  for (const payload of ['not json', '[]', '{"event":"call_ended"}', '{"call":{"call_id":"x"}}']) {
    const response = await post(payload, { 'x-retell-signature': await sign(payload, retell.apiKey) });
    expect(response.statusCode, payload).toBe(400);
    expect(response.json().error.code).toBe('invalid_request');
  }
  expect(applied).toEqual([]);
});

it('a call_analyzed without an analysis and events we do not use are acknowledged without a report', async () => {
  for (const payload of [
    '{"event":"call_analyzed","call":{"call_id":"rc_1"}}',
    '{"event":"transcript_updated","call":{"call_id":"rc_1"}}',
  ]) {
    const response = await post(payload, { 'x-retell-signature': await sign(payload, retell.apiKey) });
    expect(response.statusCode).toBe(204);
  }
  expect(applied).toEqual([]);
});

it('leaves the other routes’ JSON parsing alone', async () => {
  const response = await app.inject({ method: 'POST', url: '/elsewhere', payload: { a: 1 } });
  expect(response.json()).toEqual({ parsed: { a: 1 } });
});
