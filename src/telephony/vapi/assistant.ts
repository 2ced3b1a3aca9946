/**
 * An agent's configuration as Vapi's transient assistant (CreateAssistantDTO), field by field; the
 * adapter adds the prompt, the welcome message, the metadata and the server (./adapter.ts).
 * docs/engines.md has the mapping table and what Vapi's published document leaves to us:
 *
 * - the transcriber is Deepgram's, whose languages are its own list (`es`, not `es-ES`): a tag is
 *   sent as is when Deepgram lists it, else as its language alone (`es-ES` → `es`);
 * - the document no longer has `silenceTimeoutSeconds` on an assistant: the silence limit is a
 *   `customer.speech.timeout` hook that ends the call;
 * - analysis is `analysisPlan` (marked deprecated, still accepted on a transient assistant; its
 *   successor, saved structured outputs, needs objects created beforehand).
 */
import type { AgentAnalysis, AgentConfig, AgentTool, ConfigProblem } from '../agent-config.js';
import { toolRouteUrl } from '../tool-paths.js';

/** Deepgram's `language` values in Vapi's document (DeepgramTranscriber). */
export const DEEPGRAM_LANGUAGES: readonly string[] = [
  'ar', 'az', 'ba', 'be', 'bg', 'bn', 'br', 'bs', 'ca', 'cs', 'da', 'da-DK', 'de', 'de-CH', 'el', 'en',
  'en-AU', 'en-CA', 'en-GB', 'en-IE', 'en-IN', 'en-NZ', 'en-US', 'es', 'es-419', 'es-LATAM', 'et', 'eu',
  'fa', 'fi', 'fr', 'fr-CA', 'ha', 'haw', 'he', 'hi', 'hi-Latn', 'hr', 'hu', 'id', 'is', 'it', 'ja', 'jw',
  'kn', 'ko', 'ko-KR', 'ln', 'lt', 'lv', 'mk', 'mr', 'ms', 'multi', 'nl', 'nl-BE', 'no', 'pl', 'pt',
  'pt-BR', 'pt-PT', 'ro', 'ru', 'sk', 'sl', 'sn', 'so', 'sr', 'su', 'sv', 'sv-SE', 'ta', 'taq', 'te',
  'th', 'th-TH', 'tl', 'tr', 'tt', 'uk', 'ur', 'vi', 'yo', 'zh', 'zh-CN', 'zh-HK', 'zh-Hans', 'zh-Hant',
  'zh-TW',
]; // biome-ignore format: a list of tags

/** The voice providers the adapter sends (each a branch of Vapi's voice union). */
export const VAPI_VOICE_PROVIDERS = ['11labs', 'cartesia', 'openai', 'deepgram', 'azure', 'playht'] as const;
/** The model providers the adapter sends (each a branch of Vapi's model union). */
export const VAPI_MODEL_PROVIDERS = ['openai', 'anthropic'] as const;
/** The functions Vapi's built-in tools are called by, which no configured tool may take. */
export const VAPI_RESERVED_TOOL_NAMES: readonly string[] = ['endCall', 'transferCall'];
/** Vapi's `endCallPhrases` items: 2 to 140 characters. */
export const VAPI_END_CALL_PHRASE_LENGTH = { min: 2, max: 140 } as const;

/** Deepgram's model: nova-2 transcribes the most languages of Deepgram's models Vapi lists. */
const TRANSCRIBER_MODEL = 'nova-2';

/** Our language tag as Deepgram names it, or undefined when Deepgram has no such language. */
export function deepgramLanguage(tag: string): string | undefined {
  const exact = DEEPGRAM_LANGUAGES.find((language) => language.toLowerCase() === tag.toLowerCase());
  if (exact) return exact;
  const primary = tag.split('-')[0].toLowerCase();
  return DEEPGRAM_LANGUAGES.includes(primary) ? primary : undefined;
}

/**
 * What this configuration asks of Vapi that the adapter cannot send, each naming its field;
 * empty when Vapi can run it. Publish refuses a draft that has any (src/agents/config-rules.ts).
 */
export function vapiConfigProblems(config: AgentConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (!(VAPI_VOICE_PROVIDERS as readonly string[]).includes(config.voice.provider)) {
    problems.push({
      field: 'voice.provider',
      issue: `is not one Vapi is sent with; Vapi takes ${VAPI_VOICE_PROVIDERS.join(', ')}.`,
    });
  }
  if (!(VAPI_MODEL_PROVIDERS as readonly string[]).includes(config.model.provider)) {
    problems.push({
      field: 'model.provider',
      issue: `is not one Vapi is sent with; Vapi takes ${VAPI_MODEL_PROVIDERS.join(', ')}.`,
    });
  }
  if (deepgramLanguage(config.language) === undefined) {
    problems.push({
      field: 'language',
      issue:
        "is not a language Vapi's transcriber (Deepgram) knows, even as its language alone (es-ES is sent as es).",
    });
  }
  for (const [index, tool] of config.tools.entries()) {
    if (VAPI_RESERVED_TOOL_NAMES.includes(tool.name)) {
      problems.push({
        field: `tools.${index}.name`,
        issue: `is the name of a built-in tool of Vapi's (${VAPI_RESERVED_TOOL_NAMES.join(', ')}).`,
      });
    }
  }
  const { min, max } = VAPI_END_CALL_PHRASE_LENGTH;
  for (const [index, phrase] of config.end_call_phrases.entries()) {
    if (phrase.length < min || phrase.length > max) {
      problems.push({
        field: `end_call_phrases.${index}`,
        issue: `must be ${min} to ${max} characters for Vapi.`,
      });
    }
  }
  return problems;
}

export type VapiTool =
  | { type: 'endCall' }
  | {
      type: 'transferCall';
      destinations: { type: 'number'; number: string; description: string }[];
    }
  | {
      type: 'function';
      async: false;
      function: { name: string; description: string; parameters: Record<string, unknown> };
      server: { url: string; credentialId?: string; timeoutSeconds: number };
    };

/** The parts of the transient assistant that come from the agent's configuration. */
export interface VapiAssistantConfig {
  voice: { provider: string; voiceId: string };
  transcriber: { provider: 'deepgram'; model: string; language: string };
  model: {
    provider: string;
    model: string;
    temperature: number;
    tools: VapiTool[];
  };
  maxDurationSeconds: number;
  hooks: {
    on: 'customer.speech.timeout';
    options: { timeoutSeconds: number; triggerMaxCount: 1; triggerResetMode: 'onUserSpeech' };
    do: { type: 'tool'; tool: { type: 'endCall' } }[];
  }[];
  endCallPhrases?: string[];
  voicemailDetection: 'off' | { provider: 'vapi' };
  voicemailMessage?: string;
  analysisPlan: VapiAnalysisPlan;
}

export interface VapiAnalysisPlan {
  summaryPlan: { enabled: boolean };
  successEvaluationPlan:
    | { enabled: false }
    | { enabled: true; rubric: 'PassFail'; messages: { role: string; content: string }[] };
  structuredDataPlan:
    | { enabled: false }
    | { enabled: true; schema: { type: 'object'; properties: Record<string, Record<string, unknown>> } };
}

/** Vapi waits this much longer for our tool route than the route waits for the partner's endpoint. */
const TOOL_ROUTE_MARGIN_SECONDS = 5;

function functionTool(tool: AgentTool, url: string, credentialId: string | undefined): VapiTool {
  // Vapi's function parameters require `properties`, even when there are none.
  const parameters = { properties: {}, ...tool.parameters, type: 'object' };
  return {
    type: 'function',
    async: false,
    function: { name: tool.name, description: tool.description, parameters },
    server: {
      url,
      ...(credentialId ? { credentialId } : {}),
      timeoutSeconds: tool.timeout_seconds + TOOL_ROUTE_MARGIN_SECONDS,
    },
  };
}

export function vapiAnalysisPlan(analysis: AgentAnalysis): VapiAnalysisPlan {
  const properties: Record<string, Record<string, unknown>> = {};
  for (const field of analysis.data) {
    properties[field.name] =
      field.type === 'enum'
        ? { type: 'string', description: field.description, enum: field.values ?? [] }
        : { type: field.type, description: field.description };
  }
  return {
    summaryPlan: { enabled: analysis.summary },
    successEvaluationPlan: analysis.success_criteria
      ? {
          enabled: true,
          rubric: 'PassFail',
          messages: [
            {
              role: 'system',
              content:
                'You judge whether a phone call succeeded. It succeeded when: ' +
                `${analysis.success_criteria}\nAnswer only true or false.`,
            },
            { role: 'user', content: 'Here is the transcript:\n\n{{transcript}}\n' },
          ],
        }
      : { enabled: false },
    structuredDataPlan:
      analysis.data.length > 0
        ? { enabled: true, schema: { type: 'object', properties } }
        : { enabled: false },
  };
}

export interface VapiAssistantOptions {
  /** PUBLIC_BASE_URL: where Vapi reaches our tool route. */
  publicBaseUrl: string;
  /** The Custom Credential Vapi authenticates to our routes with. */
  credentialId?: string;
  /** The voicemail message with its placeholders filled (`leave_message` only). */
  voicemailMessage?: string;
}

/** The assistant's fields from the configuration (the system message is added by the adapter). */
export function vapiAssistantConfig(config: AgentConfig, options: VapiAssistantOptions): VapiAssistantConfig {
  const toolUrl = toolRouteUrl(options.publicBaseUrl, 'vapi');
  const tools: VapiTool[] = [{ type: 'endCall' }];
  if (config.transfer.length > 0) {
    tools.push({
      type: 'transferCall',
      destinations: config.transfer.map((target) => ({
        type: 'number',
        number: target.phone_number,
        description: target.description,
      })),
    });
  }
  for (const tool of config.tools) tools.push(functionTool(tool, toolUrl, options.credentialId));
  const voicemail = config.voicemail;
  const message = voicemail?.action === 'leave_message' ? options.voicemailMessage : undefined;
  return {
    voice: { provider: config.voice.provider, voiceId: config.voice.voice_id },
    transcriber: {
      provider: 'deepgram',
      model: TRANSCRIBER_MODEL,
      language: deepgramLanguage(config.language) ?? config.language,
    },
    model: {
      provider: config.model.provider,
      model: config.model.name,
      temperature: config.model.temperature,
      tools,
    },
    maxDurationSeconds: config.max_duration_seconds,
    hooks: [
      {
        on: 'customer.speech.timeout',
        options: {
          timeoutSeconds: config.silence_timeout_seconds,
          triggerMaxCount: 1,
          triggerResetMode: 'onUserSpeech',
        },
        do: [{ type: 'tool', tool: { type: 'endCall' } }],
      },
    ],
    ...(config.end_call_phrases.length > 0 ? { endCallPhrases: config.end_call_phrases } : {}),
    voicemailDetection: voicemail ? { provider: 'vapi' } : 'off',
    ...(message ? { voicemailMessage: message } : {}),
    analysisPlan: vapiAnalysisPlan(config.analysis),
  };
}
