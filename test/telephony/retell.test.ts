/**
 * The Retell adapter against a local server speaking Retell's API (test/support/fake-retell.ts),
 * every request body checked against Retell's published OpenAPI schema of its operation.
 */

import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defaultAgentConfig } from '../../src/agents/config.js';
import { ManualClock } from '../../src/core/clock.js';
import type { RetellConfig } from '../../src/core/config/config.js';
import type { Database } from '../../src/core/db/database.js';
import type { DialRequest, PublishedAgentVersion, TelephonyAdapter } from '../../src/telephony/port.js';
import { TelephonyError } from '../../src/telephony/port.js';
import { createRetellTelephony, RETELL_WEBHOOK_PATH } from '../../src/telephony/retell/adapter.js';
import { createTestDatabase } from '../support/databases.js';
import { type FakeRetell, type FakeRetellOptions, startFakeRetell } from '../support/fake-retell.js';

const PUBLIC_BASE_URL = 'https://voiceplane.example';
const clock = new ManualClock('2026-05-04T10:00:00Z');

let database: Database;
let drop: () => Promise<void>;
let retell: FakeRetell;
let config: RetellConfig;
let published: Map<string, PublishedAgentVersion>;
let versionSeq = 0;

beforeAll(async () => {
  ({ database, drop } = await createTestDatabase());
});
afterAll(async () => {
  await drop();
});

/** Replaces this test's fake Retell (and the configuration pointing at it). */
async function useFakeRetell(options: FakeRetellOptions = {}): Promise<void> {
  await retell?.close();
  retell = await startFakeRetell(options);
  config = { apiKey: retell.apiKey, apiBase: retell.url, voiceId: '11labs-Adrian' };
}

beforeEach(async () => {
  await useFakeRetell();
  published = new Map();
});
afterEach(async () => {
  await retell.close();
});

/** A published version unique to the test (the database is shared by the file). */
function publish(overrides: Partial<PublishedAgentVersion> = {}): PublishedAgentVersion {
  const version: PublishedAgentVersion = {
    tenantId: 'ten_retell',
    agentId: `agent_${++versionSeq}`,
    version: 3,
    prompt: 'You call {name} about order {order_id}. Keep {unknown} as is.',
    welcomeMessage: 'Hello {name}!',
    phoneNumber: '+14155550100',
    config: defaultAgentConfig({
      voice: { provider: '11labs', voice_id: '11labs-Adrian' },
      model: { provider: 'openai', name: 'gpt-4.1', temperature: 0.7 },
    }),
    ...overrides,
  };
  published.set(`${version.agentId}:${version.version}`, version);
  return version;
}

function adapter(): TelephonyAdapter {
  return createRetellTelephony({
    config,
    db: database.db,
    clock,
    publicBaseUrl: PUBLIC_BASE_URL,
    findAgentVersion: async (tenantId, agentId, version) => {
      const found = published.get(`${agentId}:${version}`);
      return found?.tenantId === tenantId ? found : undefined;
    },
  });
}

function dialRequest(version: PublishedAgentVersion, overrides: Partial<DialRequest> = {}): DialRequest {
  const defaults: DialRequest = {
    callId: 'call_ours_1',
    attempt: 1,
    tenantId: version.tenantId,
    agentId: version.agentId,
    agentVersion: version.version,
    from: version.phoneNumber,
    to: '+14155550123',
    name: 'Ada Lovelace',
    email: null,
    prompt: 'rendered prompt',
    welcomeMessage: 'rendered welcome',
    context: {},
  };
  return Object.assign(defaults, overrides);
}

async function telephonyError(promise: Promise<unknown>): Promise<TelephonyError> {
  const error = await promise.then(
    () => undefined,
    (thrown: unknown) => thrown,
  );
  expect(error).toBeInstanceOf(TelephonyError);
  return error as TelephonyError;
}

function expectAllSchemaValid() {
  for (const request of retell.requests) {
    expect(request.schemaErrors, `${request.method} ${request.path}`).toBeUndefined();
    expect(request.authorization).toBe(`Bearer ${retell.apiKey}`);
  }
}

describe('syncing a published version', () => {
  it('creates a Retell LLM with the placeholders as dynamic variables, then an agent using it, and publishes it', async () => {
    const version = publish();
    await adapter().syncAgentVersion?.(version);

    expectAllSchemaValid();
    const [created] = retell.agents;
    expect(retell.requests.map((request) => `${request.method} ${request.path} ${request.status}`)).toEqual([
      'POST /create-retell-llm 201',
      'POST /create-agent 201',
      `POST /publish-agent/${created.agent_id} 200`,
    ]);
    const [llm] = retell.llms;
    expect(llm.general_prompt).toBe('You call {{name}} about order {{order_id}}. Keep {{unknown}} as is.');
    expect(llm.begin_message).toBe('Hello {{name}}!');
    // Published: version 0 is frozen, and the agent's latest version is a new draft.
    const [agent, draft] = retell.agentVersions(created.agent_id as string);
    expect(agent).toMatchObject({ version: 0, is_published: true });
    expect(draft).toMatchObject({ version: 1, is_published: false });
    expect(retell.llmVersions(llm.llm_id as string)).toMatchObject([{ version: 0, is_published: true }]);
    expect(agent.response_engine).toEqual({ type: 'retell-llm', llm_id: llm.llm_id, version: 0 });
    expect(agent.voice_id).toBe('11labs-Adrian');
    expect(agent.webhook_url).toBe(`${PUBLIC_BASE_URL}${RETELL_WEBHOOK_PATH}`);
    expect(agent.agent_name).toContain(version.agentId);
    expect(agent.agent_name).toContain(`v${version.version}`);

    const row = await database.db
      .selectFrom('retell_agent_versions')
      .selectAll()
      .where('agent_id', '=', version.agentId)
      .executeTakeFirstOrThrow();
    expect(row).toMatchObject({
      tenant_id: version.tenantId,
      version: version.version,
      llm_id: llm.llm_id,
      llm_version: 0,
      retell_agent_id: agent.agent_id,
      retell_agent_version: 0,
    });
    expect(new Date(row.synced_at).toISOString()).toBe(clock.now().toISOString());
  });

  it('happens once per version: again, concurrently, or from another adapter instance', async () => {
    const version = publish();
    const first = adapter();
    await Promise.all([first.syncAgentVersion?.(version), first.syncAgentVersion?.(version)]);
    await first.syncAgentVersion?.(version);
    await adapter().syncAgentVersion?.(version);
    await adapter().dial(dialRequest(version));

    expect(retell.llms).toHaveLength(1);
    expect(retell.agents).toHaveLength(1);
    expect(retell.requestsTo('POST', '/v2/create-phone-call')).toHaveLength(1);
  });

  it('syncs each version of an agent as a published version of the same Retell LLM and agent', async () => {
    const v1 = publish({ version: 1 });
    const v2 = publish({ agentId: v1.agentId, version: 2, prompt: 'Second {name}' });
    const telephony = adapter();
    await telephony.syncAgentVersion?.(v1);
    await telephony.syncAgentVersion?.(v2);
    expectAllSchemaValid();
    expect(retell.llms).toHaveLength(1);
    expect(retell.agents).toHaveLength(1);
    const [llm] = retell.llms;
    const [agent] = retell.agents;
    expect(retell.llmVersions(llm.llm_id as string).map((version) => version.general_prompt)).toEqual([
      'You call {{name}} about order {{order_id}}. Keep {{unknown}} as is.',
      'Second {{name}}',
    ]);
    const rows = await database.db
      .selectFrom('retell_agent_versions')
      .select(['version', 'llm_id', 'llm_version', 'retell_agent_id', 'retell_agent_version'])
      .where('agent_id', '=', v1.agentId)
      .orderBy('version')
      .execute();
    expect(rows).toEqual([
      {
        version: 1,
        llm_id: llm.llm_id,
        llm_version: 0,
        retell_agent_id: agent.agent_id,
        retell_agent_version: 0,
      },
      {
        version: 2,
        llm_id: llm.llm_id,
        llm_version: 1,
        retell_agent_id: agent.agent_id,
        retell_agent_version: 1,
      },
    ]);
    // Each recorded Retell version is published, answers with its own LLM version, and never changed.
    const versions = retell.agentVersions(agent.agent_id as string);
    expect(versions.map((version) => [version.version, version.is_published])).toEqual([
      [0, true],
      [1, true],
      [2, false],
    ]);
    expect(versions[0].response_engine).toEqual({ type: 'retell-llm', llm_id: llm.llm_id, version: 0 });
    expect(versions[1].response_engine).toEqual({ type: 'retell-llm', llm_id: llm.llm_id, version: 1 });

    // A call of each version names its own published Retell version.
    await telephony.dial(dialRequest(v1, { callId: 'call_v1' }));
    await telephony.dial(dialRequest(v2, { callId: 'call_v2' }));
    expect(
      retell
        .requestsTo('POST', '/v2/create-phone-call')
        .map((request) => (request.body as any).override_agent_version),
    ).toEqual([0, 1]);
  });

  it('records nothing when Retell refuses, and syncs on the next try', async () => {
    const version = publish();
    retell.fail({ path: '/create-agent', status: 503 });
    const error = await telephonyError(adapter().syncAgentVersion?.(version) ?? Promise.resolve());
    expect(error.transient).toBe(true);
    const rows = await database.db
      .selectFrom('retell_agent_versions')
      .select('agent_id')
      .where('agent_id', '=', version.agentId)
      .execute();
    expect(rows).toEqual([]);

    await adapter().syncAgentVersion?.(version);
    expect(retell.agents).toHaveLength(1);
  });
});

describe('dialling', () => {
  it('syncs a version not synced yet, then creates the call with the template values as strings', async () => {
    const version = publish();
    const telephony = adapter();
    const result = await telephony.dial(
      dialRequest(version, {
        context: {
          order_id: 42,
          vip: true,
          cart: { items: [1, 2] },
          note: 'plain',
          missing: null,
          'not a key': 'x',
          phone: '+10000000000',
        },
      }),
    );

    expectAllSchemaValid();
    const [call] = retell.calls;
    expect(result).toEqual({ outcome: 'placed', engineCallId: call.call_id });
    const [request] = retell.requestsTo('POST', '/v2/create-phone-call');
    const [agent] = retell.agents;
    expect(request.body).toEqual({
      from_number: '+14155550100',
      to_number: '+14155550123',
      override_agent_id: agent.agent_id,
      override_agent_version: 0,
      retell_llm_dynamic_variables: {
        order_id: '42',
        vip: 'true',
        cart: '{"items":[1,2]}',
        note: 'plain',
        // The built-in values win over the context's, as in src/calls/input.ts.
        phone: '+14155550123',
        name: 'Ada Lovelace',
      },
      metadata: {
        voiceplane_call_id: 'call_ours_1',
        voiceplane_tenant_id: 'ten_retell',
        voiceplane_attempt: '1',
      },
    });
    for (const value of Object.values((request.body as any).retell_llm_dynamic_variables)) {
      expect(typeof value).toBe('string');
    }
  });

  it('passes the email when the call has one, and no name when it has none', async () => {
    const version = publish();
    const telephony = adapter();
    await telephony.dial(
      dialRequest(version, { context: { name: 'From context' }, email: 'ada@example.com' }),
    );
    await telephony.dial(dialRequest(version, { name: '' }));
    const [withEmail, withoutName] = retell.requestsTo('POST', '/v2/create-phone-call');
    expect((withEmail.body as any).retell_llm_dynamic_variables).toEqual({
      phone: '+14155550123',
      name: 'Ada Lovelace',
      email: 'ada@example.com',
    });
    expect((withoutName.body as any).retell_llm_dynamic_variables).toEqual({ phone: '+14155550123' });
  });

  it('fails the call when the version cannot be found, asking Retell nothing', async () => {
    const result = await adapter().dial(
      dialRequest(publish(), { agentId: 'agent_unknown', agentVersion: 9 }),
    );
    expect(result).toMatchObject({ outcome: 'failed' });
    expect(retell.requests).toEqual([]);
  });

  it('answers progress with a failure: placed calls are reported by webhook', async () => {
    expect(await adapter().progress('call_x', 'ten_x')).toMatchObject({ state: 'failed' });
  });
});

describe('Retell errors', () => {
  async function dialAfter(fault: { status: number; message?: string } | 'bad-key' | 'down') {
    const version = publish();
    await adapter().syncAgentVersion?.(version);
    if (fault === 'bad-key') config = { ...config, apiKey: 'key_wrong_secret' };
    else if (fault === 'down') {
      const closed = http.createServer();
      await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
      const port = (closed.address() as AddressInfo).port;
      await new Promise<void>((resolve) => closed.close(() => resolve()));
      config = { ...config, apiBase: `http://127.0.0.1:${port}` };
    } else retell.fail({ path: '/v2/create-phone-call', ...fault });
    return telephonyError(adapter().dial(dialRequest(version)));
  }

  it('503 and 429 are transient, and nothing was placed', async () => {
    for (const status of [503, 429]) {
      const error = await dialAfter({ status });
      expect(error.transient).toBe(true);
      expect(error.maybePlaced).toBe(false);
    }
  });

  it('500 is transient, but the call may exist: the pipeline finds out before it asks again', async () => {
    const error = await dialAfter({ status: 500 });
    expect(error.transient).toBe(true);
    expect(error.maybePlaced).toBe(true);
  });

  it('other 4xx are permanent with Retell’s message, never the API key', async () => {
    const error = await dialAfter({ status: 400, message: 'to_number is not a valid number' });
    expect(error.transient).toBe(false);
    expect(error.message).toContain('to_number is not a valid number');

    const unauthorized = await dialAfter('bad-key');
    expect(unauthorized.transient).toBe(false);
    expect(unauthorized.message).toContain('401');
    expect(unauthorized.message).not.toContain('key_wrong_secret');
    expect(unauthorized.message).not.toContain(retell.apiKey);
  });

  it('an unreachable Retell is transient and proves nothing was placed', async () => {
    const error = await dialAfter('down');
    expect(error.transient).toBe(true);
    expect(error.maybePlaced).toBe(false);
  });
});

describe('lookup', () => {
  it('maps GET /v2/get-call like the webhook: registered, ongoing, ended', async () => {
    // Only Retell's side of the call matters here: its webhooks go nowhere.
    await useFakeRetell({ deliver: async () => ({ status: 204, body: '' }) });
    const version = publish();
    const telephony = adapter();
    const placed = await telephony.dial(dialRequest(version));
    if (placed.outcome !== 'placed') throw new Error('not placed');
    const engineCallId = placed.engineCallId;

    expect(await telephony.lookup?.(engineCallId, 'call_ours_1')).toBeUndefined();

    const startedAt = Date.now();
    await retell.playCall(engineCallId, { events: ['call_started'], startTimestamp: startedAt });
    expect(await telephony.lookup?.(engineCallId, 'call_ours_1')).toEqual({
      kind: 'started',
      callId: 'call_ours_1',
      engineCallId,
      startedAt: new Date(startedAt),
    });

    await retell.playCall(engineCallId, {
      events: ['call_ended'],
      startTimestamp: startedAt,
      durationMs: 61_400,
    });
    expect(await telephony.lookup?.(engineCallId, 'call_ours_1')).toMatchObject({
      kind: 'ended',
      outcome: 'completed',
      endedReason: 'user_hangup',
      durationSeconds: 61,
      endedAt: new Date(startedAt + 61_400),
    });
    expectAllSchemaValid();
  });

  it('an unknown call is a permanent error', async () => {
    const error = await telephonyError(adapter().lookup?.('call_nobody', 'call_ours') ?? Promise.resolve());
    expect(error.transient).toBe(false);
  });
});

describe('findDial: the call of an attempt whose answer was lost', () => {
  it('finds the call Retell created for the attempt with list-calls, by the metadata', async () => {
    await useFakeRetell({ deliver: async () => ({ status: 204, body: '' }) });
    const version = publish();
    const telephony = adapter();
    const sentAt = new Date();
    const first = await telephony.dial(dialRequest(version, { callId: 'call_lost_1' }));
    const second = await telephony.dial(dialRequest(version, { callId: 'call_lost_1', attempt: 2 }));
    await telephony.dial(dialRequest(version, { callId: 'call_someone_else' }));

    expect(await telephony.findDial(dialRequest(version, { callId: 'call_lost_1' }), sentAt)).toEqual(first);
    expect(
      await telephony.findDial(dialRequest(version, { callId: 'call_lost_1', attempt: 2 }), sentAt),
    ).toEqual(second);
    expect(
      await telephony.findDial(dialRequest(version, { callId: 'call_lost_1', attempt: 3 }), sentAt),
    ).toBeUndefined();
    expect(
      await telephony.findDial(dialRequest(version, { callId: 'call_never_made' }), sentAt),
    ).toBeUndefined();

    const lists = retell.requestsTo('POST', '/v2/list-calls');
    expect(lists).toHaveLength(4);
    expect(lists[0].body).toEqual({
      filter_criteria: { metadata: { 'metadata.voiceplane_call_id': ['call_lost_1'] } },
      sort_order: 'ascending',
      limit: 1000,
    });
    expectAllSchemaValid();
  });

  it('finds nothing for a create refused 500 before Retell made the call', async () => {
    await useFakeRetell({ deliver: async () => ({ status: 204, body: '' }) });
    const version = publish();
    const telephony = adapter();
    await telephony.syncAgentVersion?.(version);
    retell.fail({ path: '/v2/create-phone-call', status: 500 });
    const error = await telephonyError(telephony.dial(dialRequest(version, { callId: 'call_refused_500' })));
    expect(error.maybePlaced).toBe(true);
    expect(
      await telephony.findDial(dialRequest(version, { callId: 'call_refused_500' }), new Date()),
    ).toBeUndefined();
  });

  it('list-calls pages with pagination_key, and the fake checks the body against the published schema', async () => {
    await useFakeRetell({ deliver: async () => ({ status: 204, body: '' }) });
    const version = publish();
    const telephony = adapter();
    for (let attempt = 1; attempt <= 3; attempt++)
      await telephony.dial(dialRequest(version, { callId: 'call_paged', attempt }));
    const list = async (body: unknown) => {
      const response = await fetch(`${retell.url}/v2/list-calls`, {
        method: 'POST',
        headers: { authorization: `Bearer ${retell.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return { status: response.status, body: (await response.json()) as Record<string, any>[] };
    };
    const filter = { metadata: { 'metadata.voiceplane_call_id': ['call_paged'] } };
    const page1 = await list({ filter_criteria: filter, sort_order: 'ascending', limit: 2 });
    expect(page1.body.map((call) => call.metadata.voiceplane_attempt)).toEqual(['1', '2']);
    const page2 = await list({
      filter_criteria: filter,
      sort_order: 'ascending',
      limit: 2,
      pagination_key: page1.body[1].call_id,
    });
    expect(page2.body.map((call) => call.metadata.voiceplane_attempt)).toEqual(['3']);
    expect((await list({ filter_criteria: filter, sort_order: 'sideways' })).status).toBe(400);
    expect((await list({ filter_criteria: filter, metadata: {} })).status).toBe(400);
  });
});
