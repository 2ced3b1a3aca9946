/**
 * The agent's configuration as partners send it. The shapes of the whole configuration live with
 * the telephony port, since the voice engines receive them (src/telephony/agent-config.ts), and
 * are re-exported here; this file adds what a create or update body may send and the defaults.
 * docs/agents.md has the field table.
 */
import { type Static, Type } from '@sinclair/typebox';
import { Nullable } from '../core/http/schemas.js';
import {
  type AgentConfig,
  type AgentModel,
  AgentVoice,
  AgentVoicemail,
  ConfigFields as F,
} from '../telephony/agent-config.js';

export * from '../telephony/agent-config.js';

export const AgentModelInput = Type.Object(
  {
    provider: Type.Optional({ ...F.Provider, description: 'The model provider.', examples: ['openai'] }),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 100, examples: ['gpt-4o-mini'] })),
    temperature: Type.Optional(F.Temperature),
  },
  {
    additionalProperties: false,
    title: 'AgentModelInput',
    description: 'The model; the given keys replace the draft’s (the default’s when the draft has none).',
  },
);

export const AgentAnalysisInput = Type.Object(
  {
    summary: Type.Optional(F.Summary),
    success_criteria: Type.Optional(Nullable(F.SuccessCriteria)),
    data: Type.Optional(F.AnalysisData),
  },
  {
    additionalProperties: false,
    title: 'AgentAnalysisInput',
    description: 'The analysis; the given keys replace the draft’s, `success_criteria: null` clears it.',
  },
);

/**
 * What a create or update body may send: every field optional, each bounded as in AgentConfig.
 * On update the given fields replace the draft's, the others stay; `model` and `analysis` merge
 * key by key. `null` for `voice` or `model` goes back to the default (the tenant's, else the
 * operator's); for `voicemail` it turns detection off.
 */
export const AgentConfigInput = Type.Object(
  {
    voice: Type.Optional(Nullable(AgentVoice)),
    language: Type.Optional(F.Language),
    model: Type.Optional(Nullable(AgentModelInput)),
    max_duration_seconds: Type.Optional(F.MaxDurationSeconds),
    silence_timeout_seconds: Type.Optional(F.SilenceTimeoutSeconds),
    end_call_phrases: Type.Optional(F.EndCallPhrases),
    voicemail: Type.Optional(Nullable(AgentVoicemail)),
    transfer: Type.Optional(F.Transfer),
    tools: Type.Optional(F.Tools),
    analysis: Type.Optional(AgentAnalysisInput),
  },
  {
    additionalProperties: false,
    title: 'AgentConfigInput',
    description:
      'Changes to the draft’s configuration: every field optional; the given ones replace the draft’s ' +
      '(`model` and `analysis` key by key). `null` sends `voice` or `model` back to the default ' +
      '(the tenant’s, else the operator’s) and turns `voicemail` off.',
  },
);
export type AgentConfigInput = Static<typeof AgentConfigInput>;

/** The voice and model an agent gets when it names none: the tenant's defaults, else the operator's. */
export interface ConfigDefaults {
  voice: AgentVoice;
  model: AgentModel;
}

/** The operator's defaults, from the configuration (AGENT_DEFAULT_VOICE, AGENT_DEFAULT_MODEL). */
export function operatorDefaults(catalog: {
  defaultVoice: AgentVoice;
  defaultModel: AgentModel;
}): ConfigDefaults {
  return { voice: { ...catalog.defaultVoice }, model: { ...catalog.defaultModel } };
}

export const DEFAULT_LANGUAGE = 'en-US';
export const DEFAULT_MAX_DURATION_SECONDS = 600;
export const DEFAULT_SILENCE_TIMEOUT_SECONDS = 30;

/**
 * What a draft stores: the fields it sets. A field absent takes its default when the draft is
 * read or published, so an agent that names no voice follows its tenant's default voice.
 */
export type DraftConfig = Partial<AgentConfig>;

/** The configuration of an agent that sets nothing. */
export function defaultAgentConfig(defaults: ConfigDefaults): AgentConfig {
  return {
    voice: { ...defaults.voice },
    language: DEFAULT_LANGUAGE,
    model: { ...defaults.model },
    max_duration_seconds: DEFAULT_MAX_DURATION_SECONDS,
    silence_timeout_seconds: DEFAULT_SILENCE_TIMEOUT_SECONDS,
    end_call_phrases: [],
    voicemail: null,
    transfer: [],
    tools: [],
    analysis: { summary: true, data: [] },
  };
}

/** A stored configuration (a draft's, or a version's from before configurations) with every field filled. */
export function completeConfig(stored: Partial<AgentConfig>, defaults: ConfigDefaults): AgentConfig {
  const config = defaultAgentConfig(defaults);
  for (const key of Object.keys(config) as (keyof AgentConfig)[]) {
    if (stored[key] !== undefined) Object.assign(config, { [key]: stored[key] });
  }
  return config;
}
