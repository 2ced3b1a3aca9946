/**
 * What agents may use on the configured voice engine (docs/configuration.md, docs/agents.md): the
 * voice providers and models the operator allows, the operator's default voice and model, and the
 * limits the engine itself sets (Retell: temperature at most 1, calls of at least 60 s, its own
 * language list). Publishing a draft outside these is refused, naming every offending field.
 */
import { ConfigError, type Env } from './readers.js';

export type Engine = 'simulated' | 'vapi' | 'retell';

export interface CatalogVoice {
  provider: string;
  voice_id: string;
}

export interface CatalogModel {
  provider: string;
  name: string;
  temperature: number;
}

export interface AgentCatalog {
  engine: Engine;
  /** AGENT_VOICE_PROVIDERS. */
  voiceProviders: string[];
  /** AGENT_MODELS, as `provider/name`. */
  models: { provider: string; name: string }[];
  /** AGENT_DEFAULT_VOICE: an agent's voice when neither it nor its tenant names one. */
  defaultVoice: CatalogVoice;
  /** AGENT_DEFAULT_MODEL and AGENT_DEFAULT_TEMPERATURE. */
  defaultModel: CatalogModel;
  /** The engine's own limits (not configurable). */
  maxTemperature: number;
  minMaxDurationSeconds: number;
  /** The language tags the engine takes; undefined: any BCP 47 tag. */
  languages: readonly string[] | undefined;
}

/** Retell's `language` values, from its API document. */
export const RETELL_LANGUAGES = [
  'en-US', 'en-IN', 'en-GB', 'en-AU', 'en-NZ', 'de-DE', 'es-ES', 'es-419', 'hi-IN', 'fr-FR',
  'fr-CA', 'ja-JP', 'pt-PT', 'pt-BR', 'zh-CN', 'ru-RU', 'it-IT', 'ko-KR', 'nl-NL', 'nl-BE',
  'pl-PL', 'tr-TR', 'vi-VN', 'ro-RO', 'bg-BG', 'ca-ES', 'th-TH', 'da-DK', 'fi-FI', 'el-GR',
  'hu-HU', 'id-ID', 'no-NO', 'sk-SK', 'sv-SE', 'lt-LT', 'lv-LV', 'cs-CZ', 'ms-MY', 'af-ZA',
  'ar-SA', 'az-AZ', 'bs-BA', 'cy-GB', 'fa-IR', 'fil-PH', 'gl-ES', 'he-IL', 'hr-HR', 'hy-AM',
  'is-IS', 'kk-KZ', 'kn-IN', 'mk-MK', 'mr-IN', 'ne-NP', 'sl-SI', 'sr-RS', 'sw-KE', 'ta-IN',
  'ur-IN', 'yue-CN', 'uk-UA', 'multi',
] as const; // biome-ignore format: a list of tags

/** Retell's fixed model list (its LLM `model` values), with the provider of each. */
export const RETELL_MODELS = [
  'openai/gpt-4.1',
  'openai/gpt-4.1-mini',
  'openai/gpt-4.1-nano',
  'openai/gpt-5',
  'openai/gpt-5-mini',
  'openai/gpt-5-nano',
  'openai/gpt-5.1',
  'openai/gpt-5.2',
  'openai/gpt-5.4',
  'openai/gpt-5.4-mini',
  'openai/gpt-5.4-nano',
  'anthropic/claude-4.5-sonnet',
  'anthropic/claude-4.6-sonnet',
  'anthropic/claude-4.5-haiku',
  'google/gemini-2.5-flash',
  'google/gemini-2.5-flash-lite',
  'google/gemini-3.0-flash',
];

const DEFAULTS: Record<Engine, { voiceProviders: string[]; models: string[]; voice: string; model: string }> =
  {
    simulated: {
      voiceProviders: ['11labs', 'cartesia', 'openai', 'deepgram', 'azure', 'playht'],
      models: [
        'openai/gpt-4o-mini',
        'openai/gpt-4o',
        'openai/gpt-4.1',
        'openai/gpt-4.1-mini',
        'anthropic/claude-4.5-haiku',
      ],
      voice: 'openai/alloy',
      model: 'openai/gpt-4o-mini',
    },
    vapi: {
      voiceProviders: ['11labs', 'cartesia', 'openai', 'deepgram', 'azure', 'playht'],
      models: [
        'openai/gpt-4o-mini',
        'openai/gpt-4o',
        'openai/gpt-4.1',
        'openai/gpt-4.1-mini',
        'openai/gpt-4.1-nano',
      ],
      voice: 'openai/alloy',
      model: 'openai/gpt-4o-mini',
    },
    retell: {
      voiceProviders: ['11labs', 'cartesia', 'openai', 'deepgram', 'minimax', 'retell'],
      models: RETELL_MODELS,
      voice: '11labs/11labs-Adrian',
      model: 'openai/gpt-4.1',
    },
  };

const NAME = /^[a-z0-9][a-z0-9._-]{0,63}$/;

function list(env: Env, name: string, fallback: string[]): string[] {
  const raw = env[name]?.trim();
  if (!raw) return fallback;
  const entries = raw
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean);
  if (entries.length === 0) throw new ConfigError(name, 'must list at least one entry');
  return entries;
}

/** `provider/rest`: the provider a lowercase name, the rest anything non-empty. */
function pair(name: string, raw: string): [string, string] {
  const slash = raw.indexOf('/');
  const provider = raw.slice(0, slash);
  const rest = raw.slice(slash + 1);
  if (slash < 1 || !NAME.test(provider) || rest.length === 0 || rest.length > 200) {
    throw new ConfigError(name, `entries must be provider/name (a lowercase provider), got "${raw}"`);
  }
  return [provider, rest];
}

function readTemperature(env: Env, max: number): number {
  const raw = env.AGENT_DEFAULT_TEMPERATURE?.trim();
  if (!raw) return 0.7;
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || value > max) {
    throw new ConfigError('AGENT_DEFAULT_TEMPERATURE', `must be a number from 0 to ${max}, got "${raw}"`);
  }
  return value;
}

/**
 * The catalog of the configured engine. `retellVoiceId` (RETELL_VOICE_ID, the engine's former
 * single voice) is the default voice under Retell when AGENT_DEFAULT_VOICE is unset.
 */
export function readAgentCatalog(env: Env, engine: Engine, retellVoiceId?: string): AgentCatalog {
  const defaults = DEFAULTS[engine];
  const voiceProviders = list(env, 'AGENT_VOICE_PROVIDERS', defaults.voiceProviders);
  for (const provider of voiceProviders) {
    if (!NAME.test(provider)) {
      throw new ConfigError(
        'AGENT_VOICE_PROVIDERS',
        `entries must be lowercase provider names, got "${provider}"`,
      );
    }
  }
  const models = list(env, 'AGENT_MODELS', defaults.models).map((entry) => {
    const [provider, name] = pair('AGENT_MODELS', entry);
    return { provider, name };
  });
  const retellVoice =
    engine === 'retell' && retellVoiceId ? `${retellVoiceId.split('-')[0]}/${retellVoiceId}` : undefined;
  const [voiceProvider, voiceId] = pair(
    'AGENT_DEFAULT_VOICE',
    env.AGENT_DEFAULT_VOICE?.trim() || retellVoice || defaults.voice,
  );
  if (!voiceProviders.includes(voiceProvider)) {
    throw new ConfigError(
      'AGENT_DEFAULT_VOICE',
      `names the provider "${voiceProvider}", which AGENT_VOICE_PROVIDERS does not allow`,
    );
  }
  const modelRaw =
    env.AGENT_DEFAULT_MODEL?.trim() ||
    (env.AGENT_MODELS?.trim() ? `${models[0].provider}/${models[0].name}` : defaults.model);
  const [modelProvider, modelName] = pair('AGENT_DEFAULT_MODEL', modelRaw);
  if (!models.some((model) => model.provider === modelProvider && model.name === modelName)) {
    throw new ConfigError('AGENT_DEFAULT_MODEL', `"${modelRaw}" is not one of AGENT_MODELS`);
  }
  const maxTemperature = engine === 'retell' ? 1 : 2;
  return {
    engine,
    voiceProviders,
    models,
    defaultVoice: { provider: voiceProvider, voice_id: voiceId },
    defaultModel: {
      provider: modelProvider,
      name: modelName,
      temperature: readTemperature(env, maxTemperature),
    },
    maxTemperature,
    minMaxDurationSeconds: engine === 'retell' ? 60 : 10,
    languages: engine === 'retell' ? RETELL_LANGUAGES : undefined,
  };
}
