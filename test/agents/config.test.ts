/**
 * The agent's configuration: every field and its bounds (each offending field named in one 422),
 * partial updates merging into the draft, a version freezing its configuration, defaults for
 * agents and versions that predate configurations, the tenant's and the operator's default voice
 * and model, and publish refusing a draft identical to the published version.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { defaultAgentConfig } from '../../src/agents/config.js';
import { createTenant, createUser, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { expectError, expectInvalidFields } from '../support/expect.js';

let t: TestApp;
let a: TestTenant;
let ownerId: string;

const resolveHost = async (host: string) => {
  if (host === 'tools.example.com') return [{ address: '93.184.216.34', family: 4 }];
  if (host === 'internal.example.com') return [{ address: '10.0.0.7', family: 4 }];
  throw new Error(`ENOTFOUND ${host}`);
};

const OPERATOR = {
  voice: { provider: 'openai', voice_id: 'alloy' },
  model: { provider: 'openai', name: 'gpt-4o-mini', temperature: 0.7 },
};

const FULL_CONFIG = {
  voice: { provider: '11labs', voice_id: 'burt' },
  language: 'es-ES',
  model: { provider: 'openai', name: 'gpt-4o', temperature: 0.3 },
  max_duration_seconds: 900,
  silence_timeout_seconds: 45,
  end_call_phrases: ['adiós', 'hasta luego'],
  voicemail: { action: 'leave_message', message: 'Hola {name}, le llamaremos.' },
  transfer: [{ phone_number: '+14155550111', description: 'The caller asks for a human.' }],
  tools: [
    {
      name: 'book_appointment',
      description: 'Books an appointment.',
      parameters: { type: 'object', properties: { date: { type: 'string' } }, required: ['date'] },
      url: 'https://tools.example.com/book',
      timeout_seconds: 10,
    },
  ],
  analysis: {
    summary: false,
    success_criteria: 'An appointment was booked.',
    data: [
      { name: 'booked', type: 'boolean', description: 'Whether it was booked.' },
      {
        name: 'mood',
        type: 'enum',
        description: 'The caller’s mood.',
        values: ['happy', 'neutral', 'upset'],
      },
    ],
  },
};

const input = (config?: unknown) => ({
  user_id: ownerId,
  name: 'Sales',
  phone_number: '+14155550199',
  prompt: 'Call {name}.',
  welcome_message: 'Hello {name}.',
  ...(config === undefined ? {} : { config }),
});

async function newAgent(config?: unknown, tenant = a) {
  const response = await tenant.request('POST', '/api/v1/agents', input(config));
  expect(response.status, response.raw).toBe(201);
  return response.body.data;
}

const tool = (overrides: Record<string, unknown> = {}) => ({ ...FULL_CONFIG.tools[0], ...overrides });

beforeAll(async () => {
  t = await startTestApp({ adapters: () => ({ resolveHost }) });
  a = await createTenant(t, { name: 'A' });
  ownerId = (await createUser(a)).id;
});
afterAll(() => t.close());

describe('the draft’s configuration', () => {
  it('an agent that sets nothing gets every default; publish freezes them', async () => {
    const agent = await newAgent();
    expect(agent.draft.config).toEqual(defaultAgentConfig(OPERATOR));
    expect(agent.draft.config).toMatchObject({
      language: 'en-US',
      max_duration_seconds: 600,
      silence_timeout_seconds: 30,
      end_call_phrases: [],
      voicemail: null,
      transfer: [],
      tools: [],
      analysis: { summary: true, data: [] },
    });
    await a.request('POST', `/api/v1/agents/${agent.id}/publish`);
    const versions = await a.request('GET', `/api/v1/agents/${agent.id}/versions`);
    expect(versions.body.data[0].config).toEqual(defaultAgentConfig(OPERATOR));
  });

  it('takes every field, answers it on GET and freezes it at publish', async () => {
    const agent = await newAgent(FULL_CONFIG);
    expect(agent.draft.config).toEqual(FULL_CONFIG);
    expect((await a.request('GET', `/api/v1/agents/${agent.id}`)).body.data.draft.config).toEqual(
      FULL_CONFIG,
    );
    const published = await a.request('POST', `/api/v1/agents/${agent.id}/publish`);
    expect(published.status, published.raw).toBe(200);
    const versions = await a.request('GET', `/api/v1/agents/${agent.id}/versions`);
    expect(versions.body.data[0].config).toEqual(FULL_CONFIG);
    // The operator API answers the same.
    expect((await t.admin('GET', `/admin/v1/agents/${agent.id}`)).body.data.draft.config).toEqual(
      FULL_CONFIG,
    );
  });

  it('422 naming every field out of bounds, schema and rules together; nothing stored', async () => {
    const before = (await a.request('GET', '/api/v1/agents')).body.pagination.total;
    const response = await a.request(
      'POST',
      '/api/v1/agents',
      input({
        language: 'english!',
        model: { temperature: 2.5 },
        max_duration_seconds: 5,
        silence_timeout_seconds: 601,
        end_call_phrases: Array.from({ length: 11 }, (_, i) => `bye ${i}`),
        transfer: [{ phone_number: '555-0100', description: 'x' }],
        tools: [
          tool({ name: 'bad name', timeout_seconds: 21 }),
          tool({ name: 'second', url: 'http://tools.example.com/x', parameters: { type: 'string' } }),
          tool({ name: 'second' }),
          tool({ name: 'private', url: 'https://127.0.0.1/hook' }),
          tool({ name: 'internal', url: 'https://internal.example.com/hook' }),
          tool({ name: 'huge', parameters: { type: 'object', description: 'x'.repeat(8200) } }),
        ],
        analysis: {
          data: [
            { name: 'mood', type: 'enum', description: 'Mood.' },
            { name: 'score', type: 'number', description: 'Score.', values: ['1'] },
            { name: 'mood', type: 'string', description: 'Again.' },
          ],
        },
      }),
    );
    expectInvalidFields(response, [
      'config.language',
      'config.model.temperature',
      'config.max_duration_seconds',
      'config.silence_timeout_seconds',
      'config.end_call_phrases',
      'config.transfer.0.phone_number',
      'config.tools.0.name',
      'config.tools.0.timeout_seconds',
      'config.tools.1.url',
      'config.tools.1.parameters',
      'config.tools.2.name',
      'config.tools.3.url',
      'config.tools.4.url',
      'config.tools.5.parameters',
      'config.analysis.data.0.values',
      'config.analysis.data.1.values',
      'config.analysis.data.2.name',
    ]);
    expect((await a.request('GET', '/api/v1/agents')).body.pagination.total).toBe(before);
  });

  it('422 for the remaining limits: counts, tool names and timeouts, voicemail, unknown keys', async () => {
    const many = (n: number, make: (i: number) => unknown) => Array.from({ length: n }, (_, i) => make(i));
    const response = await a.request(
      'POST',
      '/api/v1/agents',
      input({
        voice: { provider: '11labs' },
        max_duration_seconds: 7201,
        silence_timeout_seconds: 9,
        voicemail: { action: 'leave_message' },
        transfer: many(6, (i) => ({ phone_number: `+1415555010${i}`, description: 'x' })),
        tools: many(11, (i) => tool({ name: `t${i}` })),
        analysis: { data: many(21, (i) => ({ name: `f${i}`, type: 'string', description: 'x' })), extra: 1 },
      }),
    );
    expectInvalidFields(response, [
      'config.voice.voice_id',
      'config.max_duration_seconds',
      'config.silence_timeout_seconds',
      'config.transfer',
      'config.tools',
      'config.analysis.data',
      'config.analysis.extra',
      'config.voicemail.message',
    ]);
    // A body the schema accepts with only rule issues reaches the service's own check.
    const agent = await newAgent();
    expectInvalidFields(
      await a.request('PATCH', `/api/v1/agents/${agent.id}`, {
        config: {
          tools: [tool(), tool({ url: 'https://10.1.2.3/x' })],
          voicemail: { action: 'leave_message' },
        },
      }),
      ['config.tools.1.name', 'config.tools.1.url', 'config.voicemail.message'],
    );
    expectInvalidFields(
      await t.admin('PATCH', `/admin/v1/agents/${agent.id}`, {
        config: { tools: [tool({ parameters: { type: 'array' } })] },
      }),
      ['config.tools.0.parameters'],
    );
  });

  it('PATCH merges field by field; null sends voice and model back to the default', async () => {
    const agent = await newAgent(FULL_CONFIG);
    const patch = (config: unknown) => a.request('PATCH', `/api/v1/agents/${agent.id}`, { config });
    let draft = (await patch({ model: { temperature: 1.1 }, language: 'de-DE' })).body.data.draft.config;
    expect(draft).toEqual({
      ...FULL_CONFIG,
      language: 'de-DE',
      model: { ...FULL_CONFIG.model, temperature: 1.1 },
    });
    draft = (await patch({ analysis: { success_criteria: null }, voicemail: null, tools: [] })).body.data
      .draft.config;
    expect(draft.analysis).toEqual({ summary: false, data: FULL_CONFIG.analysis.data });
    expect(draft.voicemail).toBeNull();
    expect(draft.tools).toEqual([]);
    expect(draft.transfer).toEqual(FULL_CONFIG.transfer);
    draft = (await patch({ voice: null, model: null })).body.data.draft.config;
    expect(draft.voice).toEqual(OPERATOR.voice);
    expect(draft.model).toEqual(OPERATOR.model);
    // A partial model on a draft without one merges onto the default.
    draft = (await patch({ model: { name: 'gpt-4o' } })).body.data.draft.config;
    expect(draft.model).toEqual({ ...OPERATOR.model, name: 'gpt-4o' });
  });
});

describe('versions', () => {
  it('a version freezes its configuration; later draft edits never change it', async () => {
    const agent = await newAgent(FULL_CONFIG);
    await a.request('POST', `/api/v1/agents/${agent.id}/publish`);
    await a.request('PATCH', `/api/v1/agents/${agent.id}`, {
      config: { max_duration_seconds: 120, tools: [] },
    });
    await a.request('PUT', '/api/v1/agent-defaults', {
      voice: { provider: 'cartesia', voice_id: 'c1' },
      model: null,
    });
    let versions = (await a.request('GET', `/api/v1/agents/${agent.id}/versions`)).body.data;
    expect(versions).toHaveLength(1);
    expect(versions[0].config).toEqual(FULL_CONFIG);
    const v2 = await a.request('POST', `/api/v1/agents/${agent.id}/publish`);
    expect(v2.body.data.published_version).toBe(2);
    versions = (await a.request('GET', `/api/v1/agents/${agent.id}/versions`)).body.data;
    expect(versions[0].config).toEqual({ ...FULL_CONFIG, max_duration_seconds: 120, tools: [] });
    expect(versions[1].config).toEqual(FULL_CONFIG);
    // The engines receive the frozen configuration.
    const published = await t.services.agents.publishedVersion(a.id, agent.id, 1);
    expect(published?.config).toEqual(FULL_CONFIG);
    await a.request('PUT', '/api/v1/agent-defaults', { voice: null, model: null });
  });

  it('agents and versions from before configurations read with the defaults', async () => {
    const agent = await newAgent(FULL_CONFIG);
    await a.request('POST', `/api/v1/agents/${agent.id}/publish`);
    const db = t.services.database.db;
    await sql`UPDATE agents SET config = DEFAULT WHERE id = ${agent.id}`.execute(db);
    await sql`UPDATE agent_versions SET config = DEFAULT WHERE agent_id = ${agent.id}`.execute(db);
    expect((await a.request('GET', `/api/v1/agents/${agent.id}`)).body.data.draft.config).toEqual(
      defaultAgentConfig(OPERATOR),
    );
    const versions = (await a.request('GET', `/api/v1/agents/${agent.id}/versions`)).body.data;
    expect(versions[0].config).toEqual(defaultAgentConfig(OPERATOR));
  });

  it('publishing a draft identical to the published version is 409 conflict; any change publishes', async () => {
    const agent = await newAgent(FULL_CONFIG);
    const publish = () => a.request('POST', `/api/v1/agents/${agent.id}/publish`);
    expect((await publish()).status).toBe(200);
    expectError(await publish(), 409, 'conflict');
    // The same values sent again are no change.
    await a.request('PATCH', `/api/v1/agents/${agent.id}`, { prompt: 'Call {name}.', config: FULL_CONFIG });
    expectError(await publish(), 409, 'conflict');
    await a.request('PATCH', `/api/v1/agents/${agent.id}`, { config: { end_call_phrases: [] } });
    expect((await publish()).body.data.published_version).toBe(2);
    await a.request('PATCH', `/api/v1/agents/${agent.id}`, { phone_number: '+14155550123' });
    expect((await publish()).body.data.published_version).toBe(3);
    expect((await a.request('GET', `/api/v1/agents/${agent.id}/versions`)).body.pagination.total).toBe(3);
  });
});

describe('default voice and model', () => {
  it('the tenant’s default, else the operator’s; an agent’s own choice wins', async () => {
    const b = await createTenant(t, { name: 'B' });
    const bOwner = (await createUser(b)).id;
    const initial = await b.request('GET', '/api/v1/agent-defaults');
    expect(initial.status).toBe(200);
    expect(initial.body.data).toMatchObject({ voice: null, model: null, effective: OPERATOR });
    expect(initial.body.data.allowed).toMatchObject({
      engine: 'simulated',
      max_temperature: 2,
      languages: null,
    });

    const ownVoice = (
      await b.request('POST', '/api/v1/agents', { ...input({ voice: FULL_CONFIG.voice }), user_id: bOwner })
    ).body.data;
    const follower = (await b.request('POST', '/api/v1/agents', { ...input(), user_id: bOwner })).body.data;
    const tenantVoice = { provider: 'deepgram', voice_id: 'aura-asteria-en' };
    const tenantModel = { provider: 'openai', name: 'gpt-4.1', temperature: 0.2 };
    const set = await b.request('PUT', '/api/v1/agent-defaults', { voice: tenantVoice, model: tenantModel });
    expect(set.status, set.raw).toBe(200);
    expect(set.body.data).toMatchObject({
      voice: tenantVoice,
      model: tenantModel,
      effective: { voice: tenantVoice },
    });

    const get = (id: string) => b.request('GET', `/api/v1/agents/${id}`);
    expect((await get(follower.id)).body.data.draft.config).toMatchObject({
      voice: tenantVoice,
      model: tenantModel,
    });
    expect((await get(ownVoice.id)).body.data.draft.config).toMatchObject({
      voice: FULL_CONFIG.voice,
      model: tenantModel,
    });
    // Another tenant is untouched.
    expect((await a.request('GET', '/api/v1/agent-defaults')).body.data.voice).toBeNull();

    // The operator API reads and sets the same.
    const admin = await t.admin('GET', `/admin/v1/tenants/${b.id}/agent-defaults`);
    expect(admin.body.data.voice).toEqual(tenantVoice);
    const reset = await t.admin('PUT', `/admin/v1/tenants/${b.id}/agent-defaults`, {
      voice: null,
      model: tenantModel,
    });
    expect(reset.body.data.effective.voice).toEqual(OPERATOR.voice);
    expect((await get(follower.id)).body.data.draft.config.voice).toEqual(OPERATOR.voice);
    expectError(await t.admin('GET', '/admin/v1/tenants/ten_unknown/agent-defaults'), 404, 'not_found');
  });

  it('refuses defaults the engine does not allow, naming each field; scopes', async () => {
    expectInvalidFields(
      await a.request('PUT', '/api/v1/agent-defaults', {
        voice: { provider: 'acme', voice_id: 'x' },
        model: { provider: 'openai', name: 'gpt-9', temperature: 0.5 },
      }),
      ['voice.provider', 'model.name'],
    );
    expectInvalidFields(
      await a.request('PUT', '/api/v1/agent-defaults', { voice: null, model: { provider: 'openai' } }),
      ['model.name', 'model.temperature'],
    );
    const reader = await createTenant(t, { name: 'Reader', scopes: ['agents:read'] });
    expect((await reader.request('GET', '/api/v1/agent-defaults')).status).toBe(200);
    expectError(
      await reader.request('PUT', '/api/v1/agent-defaults', { voice: null, model: null }),
      403,
      'permission_denied',
    );
  });
});

describe('publish on the simulator', () => {
  it('refuses a voice provider or model the operator does not allow, naming each; nothing saved', async () => {
    const agent = await newAgent({
      voice: { provider: 'acme', voice_id: 'v' },
      model: { provider: 'mistral', name: 'large', temperature: 2 },
    });
    const response = await a.request('POST', `/api/v1/agents/${agent.id}/publish`);
    expectInvalidFields(response, ['config.voice.provider', 'config.model.provider']);
    const after = (await a.request('GET', `/api/v1/agents/${agent.id}`)).body.data;
    expect(after.published_version).toBeNull();
    expect((await a.request('GET', `/api/v1/agents/${agent.id}/versions`)).body.pagination.total).toBe(0);
    await a.request('PATCH', `/api/v1/agents/${agent.id}`, {
      config: { voice: null, model: { provider: 'openai' } },
    });
    expectInvalidFields(await a.request('POST', `/api/v1/agents/${agent.id}/publish`), ['config.model.name']);
  });
});
