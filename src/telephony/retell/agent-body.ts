/**
 * A published version as Retell's LLM and agent request bodies (RetellLlmRequest, AgentRequest),
 * field by field. docs/engines.md has the mapping table and Retell's own limits: temperature 0–1,
 * calls of at least 60 s, its fixed model list and regional language tags (`es-ES`, not `es`).
 * A version published before agents had a configuration comes with the defaults its calls used
 * (the operator's voice and model), so it is synced like any other.
 */
import { RETELL_LANGUAGES, RETELL_MODELS } from '../../core/config/agents.js';
import type { AgentConfig, AgentTool, ConfigProblem } from '../agent-config.js';
import type { PublishedAgentVersion } from '../port.js';
import { toolRouteUrl } from '../tool-paths.js';

/** The `{key}` placeholders of src/calls/template.ts, rewritten as Retell's `{{key}}`. */
export function toRetellTemplate(text: string): string {
  return text.replace(/\{(\w+)\}/g, '{{$1}}');
}

/** Retell's limits (its API document): what publish must refuse for this engine. */
export const RETELL_LIMITS = {
  maxTemperature: 1,
  minMaxCallDurationMs: 60_000,
  maxMaxCallDurationMs: 7_200_000,
  minSilenceMs: 10_000,
  minToolTimeoutMs: 1_000,
} as const;

export type RetellTool =
  | { type: 'end_call'; name: string; description: string }
  | {
      type: 'transfer_call';
      name: string;
      description: string;
      transfer_destination: { type: 'predefined'; number: string };
      transfer_option: { type: 'cold_transfer' };
    }
  | {
      type: 'custom';
      name: string;
      description: string;
      url: string;
      method: 'POST';
      parameters: { type: 'object'; properties: Record<string, unknown>; required?: string[] };
      speak_during_execution: boolean;
      speak_after_execution: boolean;
      timeout_ms: number;
    };

/** The fields of a Retell LLM the adapter sets (POST /create-retell-llm, PATCH /update-retell-llm). */
export interface RetellLlmBody {
  general_prompt: string;
  begin_message: string;
  model: string;
  model_temperature: number;
  general_tools: RetellTool[];
}

export type RetellAnalysisField =
  | { type: 'string' | 'boolean' | 'number'; name: string; description: string }
  | { type: 'enum'; name: string; description: string; choices: string[] };

/** The fields of a Retell agent the adapter sets, besides its response engine. */
export interface RetellAgentFields {
  voice_id: string;
  agent_name: string;
  webhook_url: string;
  language: string;
  max_call_duration_ms: number;
  end_call_after_silence_ms: number;
  voicemail_option: { action: { type: 'hangup' } | { type: 'static_text'; text: string } } | null;
  post_call_analysis_data: RetellAnalysisField[];
  analysis_successful_prompt: string | null;
}

/** Our tool route waits this long for the partner at most; Retell waits a little longer for us. */
const TOOL_ROUTE_MARGIN_MS = 5_000;
/** Transfer tools are named by their position: `transfer_1`, … (tool names must be unique). */
const transferName = (index: number) => `transfer_${index + 1}`;
/** The names of the built-in tools, which no configured tool may take. */
const RESERVED_TOOL_NAME = /^(end_call|transfer_\d+)$/;

function customTool(tool: AgentTool, url: string): RetellTool {
  const { properties, required } = tool.parameters as { properties?: unknown; required?: unknown };
  return {
    type: 'custom',
    name: tool.name,
    description: tool.description,
    url,
    method: 'POST',
    parameters: {
      type: 'object',
      properties: typeof properties === 'object' && properties !== null ? { ...properties } : {},
      ...(Array.isArray(required) ? { required: required.map(String) } : {}),
    },
    speak_during_execution: false,
    speak_after_execution: true,
    timeout_ms: tool.timeout_seconds * 1000 + TOOL_ROUTE_MARGIN_MS,
  };
}

function retellTools(config: AgentConfig, publicBaseUrl: string): RetellTool[] {
  const url = toolRouteUrl(publicBaseUrl, 'retell');
  return [
    { type: 'end_call', name: 'end_call', description: 'Hang up when the conversation is over.' },
    ...config.transfer.map(
      (target, index): RetellTool => ({
        type: 'transfer_call',
        name: transferName(index),
        description: target.description,
        transfer_destination: { type: 'predefined', number: target.phone_number },
        transfer_option: { type: 'cold_transfer' },
      }),
    ),
    ...config.tools.map((tool) => customTool(tool, url)),
  ];
}

/** The Retell LLM of a published version. */
export function retellLlmBody(published: PublishedAgentVersion, publicBaseUrl: string): RetellLlmBody {
  const { config } = published;
  return {
    general_prompt: toRetellTemplate(published.prompt),
    begin_message: toRetellTemplate(published.welcomeMessage),
    model: config.model.name,
    model_temperature: config.model.temperature,
    general_tools: retellTools(config, publicBaseUrl),
  };
}

function voicemailOption(config: AgentConfig, welcomeMessage: string): RetellAgentFields['voicemail_option'] {
  const { voicemail } = config;
  if (!voicemail) return null;
  if (voicemail.action === 'hang_up') return { action: { type: 'hangup' } };
  return { action: { type: 'static_text', text: toRetellTemplate(voicemail.message ?? welcomeMessage) } };
}

/** The Retell agent of a published version (its response engine is the adapter's). */
export function retellAgentFields(published: PublishedAgentVersion, webhookUrl: string): RetellAgentFields {
  const { config } = published;
  return {
    voice_id: config.voice.voice_id,
    agent_name: `voiceplane ${published.agentId} v${published.version}`,
    webhook_url: webhookUrl,
    language: config.language,
    max_call_duration_ms: config.max_duration_seconds * 1000,
    end_call_after_silence_ms: config.silence_timeout_seconds * 1000,
    voicemail_option: voicemailOption(config, published.welcomeMessage),
    post_call_analysis_data: config.analysis.data.map(
      (field): RetellAnalysisField =>
        field.type === 'enum'
          ? { type: 'enum', name: field.name, description: field.description, choices: field.values ?? [] }
          : { type: field.type, name: field.name, description: field.description },
    ),
    analysis_successful_prompt: config.analysis.success_criteria ?? null,
  };
}

/** Retell's LLM `model` values (its API document), without our provider prefix. */
const RETELL_MODEL_NAMES: readonly string[] = RETELL_MODELS.map((model) =>
  model.slice(model.indexOf('/') + 1),
);

/**
 * What this configuration asks of Retell that Retell refuses, each naming its field; empty when
 * Retell can run it. Publish refuses a draft that has any (src/agents/config-rules.ts).
 */
export function retellConfigProblems(config: AgentConfig): ConfigProblem[] {
  const problems: ConfigProblem[] = [];
  if (!RETELL_MODEL_NAMES.includes(config.model.name)) {
    problems.push({
      field: 'model.name',
      issue: `is not one of Retell's models (${RETELL_MODEL_NAMES.slice(0, 6).join(', ')}, …).`,
    });
  }
  if (config.model.temperature > RETELL_LIMITS.maxTemperature) {
    problems.push({
      field: 'model.temperature',
      issue: `must be at most ${RETELL_LIMITS.maxTemperature} for Retell.`,
    });
  }
  if (config.max_duration_seconds * 1000 < RETELL_LIMITS.minMaxCallDurationMs) {
    problems.push({
      field: 'max_duration_seconds',
      issue: `must be at least ${RETELL_LIMITS.minMaxCallDurationMs / 1000} for Retell.`,
    });
  }
  if (!(RETELL_LANGUAGES as readonly string[]).includes(config.language)) {
    problems.push({
      field: 'language',
      issue:
        "is not one of Retell's language tags, which are regional (es-ES, not es; en-US, pt-BR, …) or multi.",
    });
  }
  for (const [index, tool] of config.tools.entries()) {
    if (RESERVED_TOOL_NAME.test(tool.name)) {
      problems.push({
        field: `tools.${index}.name`,
        issue: "is the name of a built-in tool of Retell's (end_call, transfer_1, transfer_2, …).",
      });
    }
  }
  return problems;
}
