/**
 * What each voice engine can run: publish refuses a draft outside the operator's lists or the
 * engine's own limits (Retell: temperature ≤ 1, at least 60 s, regional language tags, its model
 * list), naming every offending field and saving nothing; the AGENT_* settings are validated at boot.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ConfigError, loadConfig } from '../../src/core/config/config.js';
import { createTenant, createUser, startTestApp, type TestApp, type TestTenant } from '../support/app.js';
import { expectInvalidFields } from '../support/expect.js';

const RETELL_ENV = {
  TELEPHONY: 'retell',
  RETELL_API_KEY: 'key_test_retell',
  RETELL_API_BASE: 'http://127.0.0.1:9',
};
const VAPI_ENV = {
  TELEPHONY: 'vapi',
  VAPI_API_KEY: 'vapi-test-key',
  VAPI_API_BASE: 'http://127.0.0.1:9',
  VAPI_SERVER_CREDENTIAL_ID: 'cred_test',
  VAPI_SERVER_SECRET: 'vapi-server-secret-0123456789',
};

async function engineApp(env: Record<string, string>) {
  const t = await startTestApp({ env: { ...env, WORKERS: '0' } });
  const tenant = await createTenant(t, { name: env.TELEPHONY });
  const ownerId = (await createUser(tenant)).id;
  const create = async (config: unknown) => {
    const response = await tenant.request('POST', '/api/v1/agents', {
      user_id: ownerId,
      name: 'Agent',
      phone_number: '+14155550199',
      prompt: 'Call {name}.',
      welcome_message: 'Hello.',
      config,
    });
    expect(response.status, response.raw).toBe(201);
    return response.body.data.id as string;
  };
  return { t, tenant, create };
}

const MANY_ISSUES = {
  voice: { provider: 'playht', voice_id: 'v' },
  language: 'es',
  model: { provider: 'openai', name: 'gpt-4o-mini', temperature: 1.5 },
  max_duration_seconds: 30,
};

describe('Retell', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let create: (config: unknown) => Promise<string>;
  beforeAll(async () => {
    ({ t, tenant, create } = await engineApp(RETELL_ENV));
  });
  afterAll(() => t.close());

  it('refuses every field Retell cannot run, in one 422; nothing is published', async () => {
    const id = await create(MANY_ISSUES);
    const response = await tenant.request('POST', `/api/v1/agents/${id}/publish`);
    expectInvalidFields(response, [
      'config.voice.provider',
      'config.language',
      'config.model.name',
      'config.model.temperature',
      'config.max_duration_seconds',
    ]);
    expect((await tenant.request('GET', `/api/v1/agents/${id}`)).body.data.published_version).toBeNull();
    expect((await tenant.request('GET', `/api/v1/agents/${id}/versions`)).body.pagination.total).toBe(0);
  });

  it('publishes a draft within its limits; the defaults are Retell’s', async () => {
    const defaults = (await tenant.request('GET', '/api/v1/agent-defaults')).body.data;
    expect(defaults.effective.model).toEqual({ provider: 'openai', name: 'gpt-4.1', temperature: 0.7 });
    expect(defaults.allowed).toMatchObject({
      engine: 'retell',
      max_temperature: 1,
      min_max_duration_seconds: 60,
    });
    expect(defaults.allowed.languages).toContain('es-ES');
    const id = await create({
      language: 'es-ES',
      model: { provider: 'anthropic', name: 'claude-4.5-haiku', temperature: 1 },
      max_duration_seconds: 60,
    });
    const response = await tenant.request('POST', `/api/v1/agents/${id}/publish`);
    expect(response.status, response.raw).toBe(200);
  });
  it('refuses what only Retell refuses: built-in tool names, a model the operator allows but Retell lacks', async () => {
    const tool = {
      description: 'A tool.',
      parameters: { type: 'object', properties: {} },
      url: 'https://tools.example.com/t',
      timeout_seconds: 5,
    };
    const id = await create({
      tools: [
        { ...tool, name: 'end_call' },
        { ...tool, name: 'lookup' },
        { ...tool, name: 'transfer_1' },
      ],
      language: 'es',
    });
    const response = await tenant.request('POST', `/api/v1/agents/${id}/publish`);
    expectInvalidFields(response, ['config.tools.0.name', 'config.tools.2.name', 'config.language']);
    const language = response.body.error.details.find(
      (d: { field: string }) => d.field === 'config.language',
    );
    expect(language.issue).toMatch(/es-ES/);
  });
});

describe('Retell, with models the operator lists that Retell does not have', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let create: (config: unknown) => Promise<string>;
  beforeAll(async () => {
    ({ t, tenant, create } = await engineApp({
      ...RETELL_ENV,
      AGENT_MODELS: 'openai/gpt-4.1,openai/gpt-4o-mini',
    }));
  });
  afterAll(() => t.close());

  it('names the model, once', async () => {
    const id = await create({ model: { provider: 'openai', name: 'gpt-4o-mini', temperature: 0.5 } });
    expectInvalidFields(await tenant.request('POST', `/api/v1/agents/${id}/publish`), ['config.model.name']);
    const good = await create({ model: { provider: 'openai', name: 'gpt-4.1', temperature: 0.5 } });
    expect((await tenant.request('POST', `/api/v1/agents/${good}/publish`)).status).toBe(200);
  });
});

describe('Vapi', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let create: (config: unknown) => Promise<string>;
  beforeAll(async () => {
    ({ t, tenant, create } = await engineApp({ ...VAPI_ENV, WEBHOOK_ALLOW_PRIVATE: 'true' }));
  });
  afterAll(() => t.close());

  it('takes any language tag, temperatures to 2 and durations from 10 s; refuses models it does not list', async () => {
    const id = await create({ ...MANY_ISSUES, max_duration_seconds: 10 });
    expect((await tenant.request('POST', `/api/v1/agents/${id}/publish`)).status).toBe(200);
    const other = await create({
      model: { provider: 'anthropic', name: 'claude-4.5-haiku', temperature: 0.5 },
    });
    expectInvalidFields(await tenant.request('POST', `/api/v1/agents/${other}/publish`), [
      'config.model.provider',
    ]);
  });

  it('refuses what only Vapi refuses, naming each field: built-in tool names, phrases Vapi cannot take, a language Deepgram lacks', async () => {
    const tool = {
      description: 'A tool.',
      parameters: { type: 'object', properties: {} },
      url: 'https://tools.example.com/t',
      timeout_seconds: 5,
    };
    const id = await create({
      tools: [
        { ...tool, name: 'lookup' },
        { ...tool, name: 'transferCall' },
        { ...tool, name: 'endCall' },
      ],
      end_call_phrases: ['goodbye', 'k', 'x'.repeat(141)],
      language: 'gn-PY',
    });
    expectInvalidFields(await tenant.request('POST', `/api/v1/agents/${id}/publish`), [
      'config.tools.1.name',
      'config.tools.2.name',
      'config.end_call_phrases.1',
      'config.end_call_phrases.2',
      'config.language',
    ]);
    expect((await tenant.request('GET', `/api/v1/agents/${id}/versions`)).body.pagination.total).toBe(0);
    // Deepgram's own tags: es-ES is sent as es, so both publish.
    for (const language of ['es', 'es-ES']) {
      const ok = await create({ language, end_call_phrases: ['goodbye'] });
      expect((await tenant.request('POST', `/api/v1/agents/${ok}/publish`)).status).toBe(200);
    }
  });

  it('with WEBHOOK_ALLOW_PRIVATE, tool URLs may be http and private', async () => {
    await create({
      tools: [
        {
          name: 'local',
          description: 'A local tool.',
          parameters: { type: 'object', properties: {} },
          url: 'http://127.0.0.1:8080/tool',
          timeout_seconds: 5,
        },
      ],
    });
  });
});

describe('Vapi, with providers the operator lists that Vapi is not sent with', () => {
  let t: TestApp;
  let tenant: TestTenant;
  let create: (config: unknown) => Promise<string>;
  beforeAll(async () => {
    ({ t, tenant, create } = await engineApp({
      ...VAPI_ENV,
      AGENT_VOICE_PROVIDERS: 'openai,minimax',
      AGENT_MODELS: 'openai/gpt-4o-mini,google/gemini-2.5-flash',
    }));
  });
  afterAll(() => t.close());

  it('names the voice provider and the model provider', async () => {
    const id = await create({
      voice: { provider: 'minimax', voice_id: 'v' },
      model: { provider: 'google', name: 'gemini-2.5-flash', temperature: 0.5 },
    });
    expectInvalidFields(await tenant.request('POST', `/api/v1/agents/${id}/publish`), [
      'config.voice.provider',
      'config.model.provider',
    ]);
  });
});

describe('AGENT_* settings', () => {
  const load = (env: Record<string, string>) => () => loadConfig({ ...env });

  it('defaults per engine, and lists the operator overrides', () => {
    expect(loadConfig({}).agents).toMatchObject({
      engine: 'simulated',
      defaultVoice: { provider: 'openai', voice_id: 'alloy' },
      defaultModel: { provider: 'openai', name: 'gpt-4o-mini', temperature: 0.7 },
    });
    expect(loadConfig({ ...RETELL_ENV, RETELL_VOICE_ID: 'cartesia-Cleo' }).agents.defaultVoice).toEqual({
      provider: 'cartesia',
      voice_id: 'cartesia-Cleo',
    });
    const custom = loadConfig({
      AGENT_VOICE_PROVIDERS: '11labs, cartesia',
      AGENT_MODELS: 'openai/gpt-4o,anthropic/claude-4.5-haiku',
      AGENT_DEFAULT_VOICE: 'cartesia/sonic-1',
      AGENT_DEFAULT_TEMPERATURE: '0.4',
    }).agents;
    expect(custom.voiceProviders).toEqual(['11labs', 'cartesia']);
    expect(custom.defaultModel).toEqual({ provider: 'openai', name: 'gpt-4o', temperature: 0.4 });
  });

  it('refuses settings that contradict each other or the engine', () => {
    expect(load({ AGENT_DEFAULT_VOICE: 'acme/x' })).toThrow(ConfigError);
    expect(load({ AGENT_DEFAULT_MODEL: 'openai/gpt-9' })).toThrow(/AGENT_DEFAULT_MODEL/);
    expect(load({ AGENT_MODELS: 'gpt-4o' })).toThrow(/AGENT_MODELS/);
    expect(load({ AGENT_VOICE_PROVIDERS: 'Eleven Labs' })).toThrow(/AGENT_VOICE_PROVIDERS/);
    expect(load({ ...RETELL_ENV, AGENT_DEFAULT_TEMPERATURE: '1.5' })).toThrow(/AGENT_DEFAULT_TEMPERATURE/);
  });
});
