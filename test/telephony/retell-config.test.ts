/**
 * Every field of an agent's configuration as Retell's LLM and agent (src/telephony/retell/agent-body.ts),
 * against the local Retell server, which checks each body against Retell's published OpenAPI schema.
 */
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defaultAgentConfig } from '../../src/agents/config.js';
import { ManualClock } from '../../src/core/clock.js';
import type { Database } from '../../src/core/db/database.js';
import type { AgentConfig } from '../../src/telephony/agent-config.js';
import type { PublishedAgentVersion, TelephonyAdapter } from '../../src/telephony/port.js';
import { createRetellTelephony, RETELL_WEBHOOK_PATH } from '../../src/telephony/retell/adapter.js';
import { retellConfigProblems } from '../../src/telephony/retell/agent-body.js';
import { toolRouteUrl } from '../../src/telephony/tool-paths.js';
import { createTestDatabase } from '../support/databases.js';
import { type FakeRetell, startFakeRetell } from '../support/fake-retell.js';

const PUBLIC_BASE_URL = 'https://voiceplane.example';
let database: Database;
let drop: () => Promise<void>;
let retell: FakeRetell;
let seq = 0;

beforeAll(async () => {
  ({ database, drop } = await createTestDatabase());
});
afterAll(async () => {
  await drop();
});
beforeEach(async () => {
  retell = await startFakeRetell();
});
afterEach(async () => {
  await retell.close();
});

const BASE = defaultAgentConfig({
  voice: { provider: '11labs', voice_id: '11labs-Adrian' },
  model: { provider: 'openai', name: 'gpt-4.1', temperature: 0.7 },
});

/** A configuration that sets every field. */
const EVERY_FIELD: AgentConfig = {
  voice: { provider: 'cartesia', voice_id: 'cartesia-Cimo' },
  language: 'es-ES',
  model: { provider: 'anthropic', name: 'claude-4.5-haiku', temperature: 0.3 },
  max_duration_seconds: 900,
  silence_timeout_seconds: 45,
  end_call_phrases: ['adiós', 'hasta luego'],
  voicemail: { action: 'leave_message', message: 'Hola {name}, le llamaremos de nuevo.' },
  transfer: [
    { phone_number: '+34910000001', description: 'The caller asks for a human.' },
    { phone_number: '+34910000002', description: 'The caller asks about billing.' },
  ],
  tools: [
    {
      name: 'book_appointment',
      description: 'Books an appointment on the given date.',
      parameters: { type: 'object', properties: { date: { type: 'string' } }, required: ['date'] },
      url: 'https://tools.example.com/book',
      timeout_seconds: 10,
    },
    {
      name: 'no_arguments',
      description: 'Takes nothing.',
      parameters: { type: 'object' },
      url: 'https://tools.example.com/none',
      timeout_seconds: 1,
    },
  ],
  analysis: {
    summary: true,
    success_criteria: 'An appointment was booked.',
    data: [
      { name: 'appointment_date', type: 'string', description: 'The date booked.' },
      { name: 'people', type: 'number', description: 'How many people.' },
      { name: 'booked', type: 'boolean', description: 'Whether it was booked.' },
      {
        name: 'mood',
        type: 'enum',
        description: 'The caller’s mood.',
        values: ['happy', 'neutral', 'angry'],
      },
    ],
  },
};

function version(config: AgentConfig, overrides: Partial<PublishedAgentVersion> = {}): PublishedAgentVersion {
  return {
    tenantId: 'ten_cfg',
    agentId: `agent_cfg_${++seq}`,
    version: 1,
    prompt: 'You call {name}.',
    welcomeMessage: 'Hola {name}!',
    phoneNumber: '+14155550100',
    config,
    ...overrides,
  };
}

function adapter(): TelephonyAdapter {
  return createRetellTelephony({
    config: { apiKey: retell.apiKey, apiBase: retell.url, voiceId: '11labs-Adrian' },
    db: database.db,
    clock: new ManualClock('2026-05-04T10:00:00Z'),
    publicBaseUrl: PUBLIC_BASE_URL,
    findAgentVersion: async () => undefined,
  });
}

function expectAllSchemaValid() {
  expect(retell.requests.length).toBeGreaterThan(0);
  for (const request of retell.requests) {
    expect(request.schemaErrors, `${request.method} ${request.path}`).toBeUndefined();
    expect(request.status, `${request.method} ${request.path}`).toBeLessThan(300);
  }
}

describe('a configuration that sets every field', () => {
  it('becomes the LLM (model, temperature, tools) and the agent (voice, language, limits, voicemail, analysis)', async () => {
    await adapter().syncAgentVersion?.(version(EVERY_FIELD));
    expectAllSchemaValid();

    const llmBody = retell.requestsTo('POST', '/create-retell-llm')[0].body;
    expect(llmBody).toEqual({
      general_prompt: 'You call {{name}}.',
      begin_message: 'Hola {{name}}!',
      model: 'claude-4.5-haiku',
      model_temperature: 0.3,
      general_tools: [
        { type: 'end_call', name: 'end_call', description: expect.any(String) },
        {
          type: 'transfer_call',
          name: 'transfer_1',
          description: 'The caller asks for a human.',
          transfer_destination: { type: 'predefined', number: '+34910000001' },
          transfer_option: { type: 'cold_transfer' },
        },
        {
          type: 'transfer_call',
          name: 'transfer_2',
          description: 'The caller asks about billing.',
          transfer_destination: { type: 'predefined', number: '+34910000002' },
          transfer_option: { type: 'cold_transfer' },
        },
        {
          type: 'custom',
          name: 'book_appointment',
          description: 'Books an appointment on the given date.',
          url: toolRouteUrl(PUBLIC_BASE_URL, 'retell'),
          method: 'POST',
          parameters: { type: 'object', properties: { date: { type: 'string' } }, required: ['date'] },
          speak_during_execution: false,
          speak_after_execution: true,
          timeout_ms: 15_000,
        },
        {
          type: 'custom',
          name: 'no_arguments',
          description: 'Takes nothing.',
          url: toolRouteUrl(PUBLIC_BASE_URL, 'retell'),
          method: 'POST',
          parameters: { type: 'object', properties: {} },
          speak_during_execution: false,
          speak_after_execution: true,
          timeout_ms: 6_000,
        },
      ],
    });

    const agentBody = retell.requestsTo('POST', '/create-agent')[0].body as Record<string, unknown>;
    expect(agentBody).toEqual({
      response_engine: { type: 'retell-llm', llm_id: retell.llms[0].llm_id, version: 0 },
      voice_id: 'cartesia-Cimo',
      agent_name: expect.stringContaining('agent_cfg_'),
      webhook_url: `${PUBLIC_BASE_URL}${RETELL_WEBHOOK_PATH}`,
      language: 'es-ES',
      max_call_duration_ms: 900_000,
      end_call_after_silence_ms: 45_000,
      voicemail_option: { action: { type: 'static_text', text: 'Hola {{name}}, le llamaremos de nuevo.' } },
      post_call_analysis_data: [
        { type: 'string', name: 'appointment_date', description: 'The date booked.' },
        { type: 'number', name: 'people', description: 'How many people.' },
        { type: 'boolean', name: 'booked', description: 'Whether it was booked.' },
        {
          type: 'enum',
          name: 'mood',
          description: 'The caller’s mood.',
          choices: ['happy', 'neutral', 'angry'],
        },
      ],
      analysis_successful_prompt: 'An appointment was booked.',
    });
    expect(retell.requestsTo('POST', '/publish-agent/')).toHaveLength(1);
  });
});

describe('a configuration with nulls and empties', () => {
  it('turns voicemail detection off, sends no transfer or custom tools and no analysis fields', async () => {
    await adapter().syncAgentVersion?.(version({ ...BASE, voicemail: null }));
    expectAllSchemaValid();
    const llmBody = retell.requestsTo('POST', '/create-retell-llm')[0].body as Record<string, unknown>;
    expect(llmBody.general_tools).toEqual([
      { type: 'end_call', name: 'end_call', description: expect.any(String) },
    ]);
    const agentBody = retell.requestsTo('POST', '/create-agent')[0].body as Record<string, unknown>;
    expect(agentBody).toMatchObject({
      voice_id: '11labs-Adrian',
      language: 'en-US',
      max_call_duration_ms: 600_000,
      end_call_after_silence_ms: 30_000,
      voicemail_option: null,
      post_call_analysis_data: [],
      analysis_successful_prompt: null,
    });
  });

  it('hangs up on voicemail, and leaves the welcome message when no message is set', async () => {
    await adapter().syncAgentVersion?.(version({ ...BASE, voicemail: { action: 'hang_up' } }));
    await adapter().syncAgentVersion?.(version({ ...BASE, voicemail: { action: 'leave_message' } }));
    expectAllSchemaValid();
    const [hangUp, leave] = retell.requestsTo('POST', '/create-agent').map((request) => request.body as any);
    expect(hangUp.voicemail_option).toEqual({ action: { type: 'hangup' } });
    expect(leave.voicemail_option).toEqual({ action: { type: 'static_text', text: 'Hola {{name}}!' } });
  });
});

describe('republishing', () => {
  it('updates the same LLM and agent in place and publishes a new Retell version', async () => {
    const telephony = adapter();
    const first = version(BASE);
    await telephony.syncAgentVersion?.(first);
    await telephony.syncAgentVersion?.({ ...first, version: 2, config: EVERY_FIELD, prompt: 'Second.' });
    expectAllSchemaValid();
    const [llm] = retell.llms;
    const [agent] = retell.agents;
    expect(retell.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      'POST /create-retell-llm',
      'POST /create-agent',
      `POST /publish-agent/${agent.agent_id}`,
      `GET /get-agent/${agent.agent_id}`,
      `PATCH /update-retell-llm/${llm.llm_id}`,
      `PATCH /update-agent/${agent.agent_id}`,
      `POST /publish-agent/${agent.agent_id}`,
    ]);
    const update = retell.requestsTo('PATCH', '/update-agent/')[0].body as Record<string, unknown>;
    expect(update).toMatchObject({ voice_id: 'cartesia-Cimo', language: 'es-ES' });
    const [v0, v1] = retell.agentVersions(agent.agent_id as string);
    // The first published version kept its own fields; the second has the new ones.
    expect(v0).toMatchObject({ is_published: true, voice_id: '11labs-Adrian', language: 'en-US' });
    expect(v1).toMatchObject({ is_published: true, voice_id: 'cartesia-Cimo', language: 'es-ES' });
  });
});

describe('versions of one agent synced at once', () => {
  it('are synced one after the other, each its own published Retell version', async () => {
    const telephony = adapter();
    const first = version(BASE);
    await Promise.all([
      telephony.syncAgentVersion?.(first),
      telephony.syncAgentVersion?.({ ...first, version: 2, config: EVERY_FIELD }),
      telephony.syncAgentVersion?.({ ...first, version: 3, prompt: 'Third.' }),
    ]);
    expectAllSchemaValid();
    expect(retell.agents).toHaveLength(1);
    const rows = await database.db
      .selectFrom('retell_agent_versions')
      .select(['version', 'retell_agent_version'])
      .where('agent_id', '=', first.agentId)
      .orderBy('version')
      .execute();
    expect(rows).toEqual([
      { version: 1, retell_agent_version: 0 },
      { version: 2, retell_agent_version: 1 },
      { version: 3, retell_agent_version: 2 },
    ]);
    const versions = retell.agentVersions(retell.agents[0].agent_id as string);
    expect(versions.map((v) => [v.version, v.is_published, v.language])).toEqual([
      [0, true, 'en-US'],
      [1, true, 'es-ES'],
      [2, true, 'en-US'],
      [3, false, 'en-US'],
    ]);
  });
});

describe('a version synced before versions were published', () => {
  it('is published as it stands before the next version updates the agent', async () => {
    // What an earlier sync left: an LLM and an agent, both drafts, recorded for version 1.
    const post = async (path: string, body: unknown) => {
      const response = await fetch(`${retell.url}${path}`, {
        method: 'POST',
        headers: { authorization: `Bearer ${retell.apiKey}`, 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      return (await response.json()) as Record<string, any>;
    };
    const llm = await post('/create-retell-llm', { general_prompt: 'Old.', begin_message: 'Hi.' });
    const agent = await post('/create-agent', {
      response_engine: { type: 'retell-llm', llm_id: llm.llm_id, version: 0 },
      voice_id: '11labs-Adrian',
      agent_name: 'old',
      webhook_url: `${PUBLIC_BASE_URL}${RETELL_WEBHOOK_PATH}`,
    });
    const old = version(BASE);
    await database.db
      .insertInto('retell_agent_versions')
      .values({
        agent_id: old.agentId,
        version: 1,
        tenant_id: old.tenantId,
        llm_id: llm.llm_id,
        llm_version: 0,
        retell_agent_id: agent.agent_id,
        retell_agent_version: 0,
        synced_at: new Date(),
      })
      .execute();
    retell.requests.length = 0;

    await adapter().syncAgentVersion?.({ ...old, version: 2, prompt: 'New.' });
    expectAllSchemaValid();
    expect(retell.requests.map((request) => `${request.method} ${request.path}`)).toEqual([
      `GET /get-agent/${agent.agent_id}`,
      `POST /publish-agent/${agent.agent_id}`,
      `PATCH /update-retell-llm/${llm.llm_id}`,
      `PATCH /update-agent/${agent.agent_id}`,
      `POST /publish-agent/${agent.agent_id}`,
    ]);
    // Version 1's calls still get its own prompt; version 2 is the next published version.
    expect(retell.llmVersions(llm.llm_id).map((v) => [v.version, v.general_prompt, v.is_published])).toEqual([
      [0, 'Old.', true],
      [1, 'New.', true],
    ]);
    const rows = await database.db
      .selectFrom('retell_agent_versions')
      .select(['version', 'retell_agent_version'])
      .where('agent_id', '=', old.agentId)
      .orderBy('version')
      .execute();
    expect(rows).toEqual([
      { version: 1, retell_agent_version: 0 },
      { version: 2, retell_agent_version: 1 },
    ]);
  });
});

describe('what Retell refuses', () => {
  it('names each field: its model list, temperature above 1, calls shorter than a minute, regional tags, built-in tool names', () => {
    expect(retellConfigProblems(EVERY_FIELD)).toEqual([]);
    const [tool] = EVERY_FIELD.tools;
    const problems = retellConfigProblems({
      ...BASE,
      language: 'es',
      model: { provider: 'openai', name: 'gpt-4o-mini', temperature: 1.5 },
      max_duration_seconds: 30,
      tools: [
        { ...tool, name: 'end_call' },
        { ...tool, name: 'lookup' },
        { ...tool, name: 'transfer_2' },
      ],
    });
    expect(problems.map((problem) => problem.field)).toEqual([
      'model.name',
      'model.temperature',
      'max_duration_seconds',
      'language',
      'tools.0.name',
      'tools.2.name',
    ]);
    expect(problems[3].issue).toMatch(/es-ES, not es/);
    expect(retellConfigProblems({ ...BASE, language: 'es-ES', max_duration_seconds: 60 })).toEqual([]);
  });
});
