/**
 * An agent's engine-neutral configuration, as a published version freezes it and the voice
 * engines receive it (PublishedAgentVersion): how it sounds (voice, language), which model thinks,
 * how long a call may last, what it may do during a call (end phrases, voicemail, transfer,
 * tools) and what is learnt afterwards (analysis). The agents feature edits it in the draft and
 * freezes it at publish (src/agents/config.ts); each engine adapter maps it onto its vendor's API.
 * What each engine accepts is the operator's configuration (src/core/config/agents.ts), checked
 * at publish. docs/agents.md has the field table.
 */
import { type Static, Type } from '@sinclair/typebox';
import { Nullable, Phone } from '../core/http/schemas.js';

/** Tool and analysis-field names: what every engine accepts as a function or field name. */
export const IDENTIFIER_PATTERN = '^[A-Za-z0-9_]{1,64}$';
/** A language tag (BCP 47): a language, then optional script, region or variant subtags. */
export const LANGUAGE_PATTERN = '^[A-Za-z]{2,3}(-[A-Za-z0-9]{2,8})*$';

export const CONFIG_LIMITS = {
  temperature: { min: 0, max: 2 },
  maxDurationSeconds: { min: 10, max: 7200 },
  silenceTimeoutSeconds: { min: 10, max: 600 },
  endCallPhrases: 10,
  transfer: 5,
  tools: 10,
  toolTimeoutSeconds: { min: 1, max: 20 },
  /** A tool's `parameters`, serialized as JSON (UTF-8 bytes). */
  toolParametersBytes: 8 * 1024,
  analysisData: 20,
  analysisValues: 50,
} as const;

const Provider = Type.String({ minLength: 1, maxLength: 64, pattern: '^[a-z0-9][a-z0-9._-]*$' });

export const AgentVoice = Type.Object(
  {
    provider: {
      ...Provider,
      description: 'The voice provider (`11labs`, `cartesia`, `openai`, …).',
      examples: ['11labs'],
    },
    voice_id: Type.String({
      minLength: 1,
      maxLength: 200,
      description: 'The provider’s voice id, as the engine names it.',
      examples: ['burt'],
    }),
  },
  { additionalProperties: false, title: 'AgentVoice', description: 'How the agent sounds.' },
);
export type AgentVoice = Static<typeof AgentVoice>;

const Temperature = Type.Number({
  minimum: CONFIG_LIMITS.temperature.min,
  maximum: CONFIG_LIMITS.temperature.max,
  description: 'Randomness of the model’s answers, 0–2 (some engines take at most 1).',
  examples: [0.7],
});

export const AgentModel = Type.Object(
  {
    provider: {
      ...Provider,
      description: 'The model provider (`openai`, `anthropic`, …).',
      examples: ['openai'],
    },
    name: Type.String({
      minLength: 1,
      maxLength: 100,
      description: 'The model’s name.',
      examples: ['gpt-4o-mini'],
    }),
    temperature: Temperature,
  },
  {
    additionalProperties: false,
    title: 'AgentModel',
    description: 'The language model that thinks for the agent.',
  },
);
export type AgentModel = Static<typeof AgentModel>;

const Language = Type.String({
  minLength: 2,
  maxLength: 35,
  pattern: LANGUAGE_PATTERN,
  description: 'The language spoken and transcribed, a BCP 47 tag (`en-US`, `es-ES`, `de-DE`).',
  examples: ['en-US'],
});

const MaxDurationSeconds = Type.Integer({
  minimum: CONFIG_LIMITS.maxDurationSeconds.min,
  maximum: CONFIG_LIMITS.maxDurationSeconds.max,
  description: 'The call is ended after this long.',
  examples: [600],
});

const SilenceTimeoutSeconds = Type.Integer({
  minimum: CONFIG_LIMITS.silenceTimeoutSeconds.min,
  maximum: CONFIG_LIMITS.silenceTimeoutSeconds.max,
  description: 'The call is ended after this long without speech.',
  examples: [30],
});

const EndCallPhrases = Type.Array(Type.String({ minLength: 1, maxLength: 200, examples: ['goodbye'] }), {
  maxItems: CONFIG_LIMITS.endCallPhrases,
  description: 'When the agent says one of these, it hangs up.',
  examples: [['goodbye', 'have a nice day']],
});

export const AgentVoicemail = Type.Object(
  {
    action: Type.Union([Type.Literal('hang_up'), Type.Literal('leave_message')], {
      description:
        '`hang_up`: the call ends `no_answer`; `leave_message`: the message is spoken and the call ends `completed`.',
    }),
    message: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 1000,
        description: 'What `leave_message` says; `{key}` placeholders are filled like the prompt’s.',
        examples: ['Hi {name}, this is Acme calling about your order. We will call back.'],
      }),
    ),
  },
  {
    additionalProperties: false,
    title: 'AgentVoicemail',
    description: 'What to do when voicemail answers; null turns voicemail detection off.',
  },
);
export type AgentVoicemail = Static<typeof AgentVoicemail>;

export const AgentTransferTarget = Type.Object(
  {
    phone_number: { ...Phone, description: 'Where to transfer the call (E.164).' },
    description: Type.String({
      minLength: 1,
      maxLength: 500,
      description: 'When the agent should transfer the call there.',
      examples: ['The caller asks for a human or for billing.'],
    }),
  },
  { additionalProperties: false, title: 'AgentTransferTarget' },
);
export type AgentTransferTarget = Static<typeof AgentTransferTarget>;

export const AgentToolParameters = Type.Record(Type.String(), Type.Unknown(), {
  title: 'AgentToolParameters',
  description: 'A JSON Schema with `type: "object"` describing the arguments (at most 8 KB as JSON).',
  examples: [{ type: 'object', properties: { date: { type: 'string' } }, required: ['date'] }],
});
export type AgentToolParameters = Static<typeof AgentToolParameters>;

export const AgentTool = Type.Object(
  {
    name: Type.String({
      pattern: IDENTIFIER_PATTERN,
      description: 'Unique within the agent: letters, digits and `_`, at most 64.',
      examples: ['book_appointment'],
    }),
    description: Type.String({
      minLength: 1,
      maxLength: 1000,
      description: 'When and why the agent uses the tool.',
      examples: ['Books an appointment on the given date.'],
    }),
    parameters: AgentToolParameters,
    url: Type.String({
      minLength: 9,
      maxLength: 2048,
      format: 'uri',
      description: 'An https URL the platform POSTs `{ call_id, agent_id, tool, arguments }` to, signed.',
      examples: ['https://tools.example.com/book'],
    }),
    timeout_seconds: Type.Integer({
      minimum: CONFIG_LIMITS.toolTimeoutSeconds.min,
      maximum: CONFIG_LIMITS.toolTimeoutSeconds.max,
      description: 'How long the agent waits for the answer.',
      examples: [10],
    }),
  },
  {
    additionalProperties: false,
    title: 'AgentTool',
    description: 'A function the agent may call during a call.',
  },
);
export type AgentTool = Static<typeof AgentTool>;

export const AgentAnalysisField = Type.Object(
  {
    name: Type.String({
      pattern: IDENTIFIER_PATTERN,
      description: 'Unique within the analysis: letters, digits and `_`, at most 64.',
      examples: ['appointment_booked'],
    }),
    type: Type.Union(
      [Type.Literal('string'), Type.Literal('number'), Type.Literal('boolean'), Type.Literal('enum')],
      { description: 'The type of the value the analysis extracts.' },
    ),
    description: Type.String({
      minLength: 1,
      maxLength: 1000,
      description: 'What to extract.',
      examples: ['Whether an appointment was booked.'],
    }),
    values: Type.Optional(
      Type.Array(Type.String({ minLength: 1, maxLength: 200, examples: ['happy'] }), {
        minItems: 1,
        maxItems: CONFIG_LIMITS.analysisValues,
        uniqueItems: true,
        description: 'The allowed values; required for `enum`, refused for the other types.',
        examples: [['yes', 'no', 'maybe']],
      }),
    ),
  },
  { additionalProperties: false, title: 'AgentAnalysisField' },
);
export type AgentAnalysisField = Static<typeof AgentAnalysisField>;

const Summary = Type.Boolean({ description: 'Write a summary of each call.' });
const SuccessCriteria = Type.String({
  minLength: 1,
  maxLength: 2000,
  description: 'How to judge whether the call succeeded.',
  examples: ['The caller booked an appointment.'],
});
const AnalysisData = Type.Array(AgentAnalysisField, {
  maxItems: CONFIG_LIMITS.analysisData,
  description: 'The fields extracted from each call.',
});

export const AgentAnalysis = Type.Object(
  { summary: Summary, success_criteria: Type.Optional(SuccessCriteria), data: AnalysisData },
  {
    additionalProperties: false,
    title: 'AgentAnalysis',
    description: 'What is learnt from each call after it ends.',
  },
);
export type AgentAnalysis = Static<typeof AgentAnalysis>;

const Transfer = Type.Array(AgentTransferTarget, {
  maxItems: CONFIG_LIMITS.transfer,
  description: 'Numbers the agent may transfer the call to.',
});
const Tools = Type.Array(AgentTool, {
  maxItems: CONFIG_LIMITS.tools,
  description: 'Functions the agent may call.',
});

/** The bounded pieces, for the input shapes (src/agents/config.ts). */
export const ConfigFields = {
  Provider,
  Temperature,
  Language,
  MaxDurationSeconds,
  SilenceTimeoutSeconds,
  EndCallPhrases,
  Transfer,
  Tools,
  Summary,
  SuccessCriteria,
  AnalysisData,
};

/** The whole configuration, as a published version freezes it: every field present, defaults filled. */
export const AgentConfig = Type.Object(
  {
    voice: AgentVoice,
    language: Language,
    model: AgentModel,
    max_duration_seconds: MaxDurationSeconds,
    silence_timeout_seconds: SilenceTimeoutSeconds,
    end_call_phrases: EndCallPhrases,
    voicemail: Nullable(AgentVoicemail),
    transfer: Transfer,
    tools: Tools,
    analysis: AgentAnalysis,
  },
  {
    additionalProperties: false,
    title: 'AgentConfig',
    description: 'How the agent sounds, thinks and acts on a call, and what is learnt afterwards.',
  },
);
export type AgentConfig = Static<typeof AgentConfig>;

/**
 * What an engine cannot run in a configuration: the field, relative to the configuration
 * (`language`, `tools.1.name`), and the issue in words (`is not …`). Publish names the field as
 * `config.<field>`; a dial of a version that has one fails, saying so.
 */
export interface ConfigProblem {
  field: string;
  issue: string;
}

/** A configuration's problems as one sentence (a failed dial's reason). */
export const describeProblems = (problems: ConfigProblem[]) =>
  problems.map((problem) => `${problem.field} ${problem.issue}`).join(' ');
