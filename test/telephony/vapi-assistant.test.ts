/**
 * Every field of an agent's configuration as Vapi's transient assistant (src/telephony/vapi/assistant.ts),
 * dialled through the local Vapi server, which checks each body against Vapi's published CreateCallDTO.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { defaultAgentConfig } from '../../src/agents/config.js';
import type { AgentConfig } from '../../src/telephony/agent-config.js';
import type { DialRequest, PublishedAgentVersion } from '../../src/telephony/port.js';
import { toolRouteUrl } from '../../src/telephony/tool-paths.js';
import { AGENT_VERSION_UNUSABLE, createVapiTelephony } from '../../src/telephony/vapi/adapter.js';
import { deepgramLanguage, vapiConfigProblems } from '../../src/telephony/vapi/assistant.js';
import { type FakeVapi, startFakeVapi } from '../support/fake-vapi.js';

const AGENT_NUMBER = '+14155550100';
const PUBLIC_BASE_URL = 'https://vp.example.com';

let vapi: FakeVapi;
beforeAll(async () => {
  vapi = await startFakeVapi({ phoneNumbers: [AGENT_NUMBER], serverSecret: 'vapi-server-secret-0123456789' });
});
afterAll(() => vapi.close());
beforeEach(() => {
  vapi.requests.length = 0;
});

const BASE = defaultAgentConfig({
  voice: { provider: 'openai', voice_id: 'alloy' },
  model: { provider: 'openai', name: 'gpt-4o-mini', temperature: 0.7 },
});

const EVERY_FIELD: AgentConfig = {
  voice: { provider: '11labs', voice_id: 'burt' },
  language: 'es-ES',
  model: { provider: 'anthropic', name: 'claude-3-5-haiku-20241022', temperature: 1.4 },
  max_duration_seconds: 1200,
  silence_timeout_seconds: 20,
  end_call_phrases: ['adiós', 'hasta luego'],
  voicemail: { action: 'leave_message', message: 'Hola {name}, le llamaremos sobre {product}.' },
  transfer: [{ phone_number: '+34910000001', description: 'The caller asks for a human.' }],
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
      timeout_seconds: 2,
    },
  ],
  analysis: {
    summary: false,
    success_criteria: 'An appointment was booked.',
    data: [
      { name: 'appointment_date', type: 'string', description: 'The date booked.' },
      { name: 'people', type: 'number', description: 'How many people.' },
      { name: 'booked', type: 'boolean', description: 'Whether it was booked.' },
      { name: 'mood', type: 'enum', description: 'The caller’s mood.', values: ['happy', 'angry'] },
    ],
  },
};

const dialRequest = (overrides: Partial<DialRequest> = {}): DialRequest => ({
  callId: 'call_cfg_1',
  attempt: 1,
  tenantId: 'ten_cfg',
  agentId: 'agt_cfg',
  agentVersion: 2,
  from: AGENT_NUMBER,
  to: '+14155550123',
  name: 'Ada',
  email: null,
  prompt: 'You are Ada.',
  welcomeMessage: 'Hola Ada.',
  context: { product: 'solar' },
  ...overrides,
});

function adapterWith(config: AgentConfig | undefined) {
  const version = (agentVersion: number): PublishedAgentVersion | undefined =>
    config && {
      tenantId: 'ten_cfg',
      agentId: 'agt_cfg',
      version: agentVersion,
      prompt: 'You are {name}.',
      welcomeMessage: 'Hola {name}.',
      phoneNumber: AGENT_NUMBER,
      config,
    };
  return createVapiTelephony({
    config: {
      apiKey: vapi.apiKey,
      apiBase: vapi.url,
      serverCredentialId: 'cred-7a1f',
      serverSecret: 'vapi-server-secret-0123456789',
    },
    publicBaseUrl: PUBLIC_BASE_URL,
    findAgentVersion: async (_tenantId, _agentId, agentVersion) => version(agentVersion),
  });
}

async function dialledAssistant(config: AgentConfig): Promise<Record<string, any>> {
  const result = await adapterWith(config).dial(dialRequest());
  expect(result).toEqual({ outcome: 'placed', engineCallId: expect.any(String) });
  const [create] = vapi.requests.filter((request) => request.method === 'POST' && request.path === '/call');
  expect(create.schemaErrors).toEqual([]);
  expect(create.status).toBe(201);
  return (create.body as { assistant: Record<string, any> }).assistant;
}

describe('a configuration that sets every field', () => {
  it('becomes the transient assistant, valid against CreateCallDTO', async () => {
    const assistant = await dialledAssistant(EVERY_FIELD);
    expect(assistant.voice).toEqual({ provider: '11labs', voiceId: 'burt' });
    // Deepgram takes the language alone where it has no regional variant.
    expect(assistant.transcriber).toEqual({ provider: 'deepgram', model: 'nova-2', language: 'es' });
    expect(assistant.model).toEqual({
      provider: 'anthropic',
      model: 'claude-3-5-haiku-20241022',
      temperature: 1.4,
      messages: [{ role: 'system', content: 'You are Ada.' }],
      tools: [
        { type: 'endCall' },
        {
          type: 'transferCall',
          destinations: [
            { type: 'number', number: '+34910000001', description: 'The caller asks for a human.' },
          ],
        },
        {
          type: 'function',
          async: false,
          function: {
            name: 'book_appointment',
            description: 'Books an appointment on the given date.',
            parameters: { type: 'object', properties: { date: { type: 'string' } }, required: ['date'] },
          },
          server: {
            url: toolRouteUrl(PUBLIC_BASE_URL, 'vapi'),
            credentialId: 'cred-7a1f',
            timeoutSeconds: 15,
          },
        },
        {
          type: 'function',
          async: false,
          function: {
            name: 'no_arguments',
            description: 'Takes nothing.',
            parameters: { type: 'object', properties: {} },
          },
          server: {
            url: toolRouteUrl(PUBLIC_BASE_URL, 'vapi'),
            credentialId: 'cred-7a1f',
            timeoutSeconds: 7,
          },
        },
      ],
    });
    expect(assistant.maxDurationSeconds).toBe(1200);
    expect(assistant.hooks).toEqual([
      {
        on: 'customer.speech.timeout',
        options: { timeoutSeconds: 20, triggerMaxCount: 1, triggerResetMode: 'onUserSpeech' },
        do: [{ type: 'tool', tool: { type: 'endCall' } }],
      },
    ]);
    expect(assistant.endCallPhrases).toEqual(['adiós', 'hasta luego']);
    expect(assistant.voicemailDetection).toEqual({ provider: 'vapi' });
    // The message's placeholders are filled with the call's values.
    expect(assistant.voicemailMessage).toBe('Hola Ada, le llamaremos sobre solar.');
    expect(assistant.analysisPlan).toEqual({
      summaryPlan: { enabled: false },
      successEvaluationPlan: {
        enabled: true,
        rubric: 'PassFail',
        messages: [
          { role: 'system', content: expect.stringContaining('An appointment was booked.') },
          { role: 'user', content: expect.stringContaining('{{transcript}}') },
        ],
      },
      structuredDataPlan: {
        enabled: true,
        schema: {
          type: 'object',
          properties: {
            appointment_date: { type: 'string', description: 'The date booked.' },
            people: { type: 'number', description: 'How many people.' },
            booked: { type: 'boolean', description: 'Whether it was booked.' },
            mood: { type: 'string', description: 'The caller’s mood.', enum: ['happy', 'angry'] },
          },
        },
      },
    });
    expect(assistant).not.toHaveProperty('silenceTimeoutSeconds');
  });
});

describe('a configuration with nulls and empties', () => {
  it('turns voicemail detection off and sends only the end-call tool, no phrases and no structured data', async () => {
    const assistant = await dialledAssistant({ ...BASE, voicemail: null });
    expect(assistant.voice).toEqual({ provider: 'openai', voiceId: 'alloy' });
    expect(assistant.transcriber.language).toBe('en-US');
    expect(assistant.model).toMatchObject({
      provider: 'openai',
      model: 'gpt-4o-mini',
      tools: [{ type: 'endCall' }],
    });
    expect(assistant.maxDurationSeconds).toBe(600);
    expect(assistant.hooks[0].options.timeoutSeconds).toBe(30);
    expect(assistant.voicemailDetection).toBe('off');
    expect(assistant).not.toHaveProperty('voicemailMessage');
    expect(assistant).not.toHaveProperty('endCallPhrases');
    expect(assistant.analysisPlan).toEqual({
      summaryPlan: { enabled: true },
      successEvaluationPlan: { enabled: false },
      structuredDataPlan: { enabled: false },
    });
  });

  it('detects voicemail and hangs up (no message), or leaves the welcome message when none is set', async () => {
    const hangUp = await dialledAssistant({ ...BASE, voicemail: { action: 'hang_up' } });
    expect(hangUp.voicemailDetection).toEqual({ provider: 'vapi' });
    expect(hangUp).not.toHaveProperty('voicemailMessage');
    vapi.requests.length = 0;
    const leave = await dialledAssistant({ ...BASE, voicemail: { action: 'leave_message' } });
    expect(leave.voicemailMessage).toBe('Hola Ada.');
  });
});

describe('what Vapi cannot run', () => {
  it('fails the call, naming the field, without asking Vapi', async () => {
    const result = await adapterWith({
      ...BASE,
      language: 'xx-YY',
      model: { ...BASE.model, provider: 'mistral' },
    }).dial(dialRequest());
    expect(result).toEqual({
      outcome: 'failed',
      reason: expect.stringMatching(/model\.provider is not .*language is not /),
      endedReason: AGENT_VERSION_UNUSABLE,
    });
    expect(vapi.requests.filter((request) => request.path === '/call')).toEqual([]);
  });

  it('fails the call when its version is not found', async () => {
    const result = await adapterWith(undefined).dial(dialRequest());
    expect(result).toMatchObject({ outcome: 'failed', endedReason: AGENT_VERSION_UNUSABLE });
  });

  it('maps languages onto Deepgram’s list, and names phrases Vapi refuses', () => {
    expect(deepgramLanguage('en-US')).toBe('en-US');
    expect(deepgramLanguage('es-ES')).toBe('es');
    expect(deepgramLanguage('de-DE')).toBe('de');
    expect(deepgramLanguage('pt-BR')).toBe('pt-BR');
    expect(deepgramLanguage('xx-YY')).toBeUndefined();
    const fields = (config: AgentConfig) => vapiConfigProblems(config).map((problem) => problem.field);
    expect(fields({ ...BASE, end_call_phrases: ['bye', 'x', 'y'.repeat(141)] })).toEqual([
      'end_call_phrases.1',
      'end_call_phrases.2',
    ]);
    expect(vapiConfigProblems(EVERY_FIELD)).toEqual([]);
    const [tool] = EVERY_FIELD.tools;
    const reserved = [{ ...tool, name: 'endCall' }, tool, { ...tool, name: 'transferCall' }];
    expect(fields({ ...BASE, tools: reserved })).toEqual(['tools.0.name', 'tools.2.name']);
    expect(fields({ ...BASE, language: 'es-ES' })).toEqual([]);
    expect(fields({ ...BASE, language: 'xx-YY' })).toEqual(['language']);
    expect(
      fields({
        ...BASE,
        voice: { provider: 'minimax', voice_id: 'v' },
        model: { ...BASE.model, provider: 'google' },
      }),
    ).toEqual(['voice.provider', 'model.provider']);
  });
});
