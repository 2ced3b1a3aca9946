import { type Static, Type } from '@sinclair/typebox';
import { PageQuery, SortOrder } from '../core/db/pagination.js';
import { Nullable, Phone, Timestamp } from '../core/http/schemas.js';
import { AgentConfig, AgentConfigInput, AgentModel, AgentVoice } from './config.js';
import { AgentSettings } from './settings.js';

const AGENT_ID_EXAMPLE = 'agt_3kTmd8Qw1ZbXcV5nR7pL2yHs';
const USER_ID_EXAMPLE = 'usr_3kTmd8Qw1ZbXcV5nR7pL2yHs';

const Name = Type.String({ minLength: 1, maxLength: 200, examples: ['Reception'] });
const Prompt = Type.String({
  minLength: 1,
  maxLength: 20_000,
  description: 'What the agent is told; `{key}` placeholders are filled from the webhook request.',
  examples: ['You call {name} about their {product} order.'],
});
const WelcomeMessage = Type.String({ maxLength: 2_000, examples: ['Hello {name}, this is Acme.'] });

export const Agent = Type.Object(
  {
    id: Type.String({ examples: [AGENT_ID_EXAMPLE] }),
    user_id: Type.String({ description: 'The user who owns the agent.', examples: [USER_ID_EXAMPLE] }),
    name: Type.String({ examples: ['Reception'] }),
    phone_number: Type.String({
      description: 'Caller ID of the draft; calls use the published version’s.',
      examples: ['+14155550123'],
    }),
    webhook_id: Type.String({
      description: 'The credential part of `webhook_url`.',
      examples: ['webh_9sKq2LmV7xYb3NcR8pT1wZ4d'],
    }),
    webhook_url: Type.String({
      description:
        'POST here to place a call with the published version; rotating it retires the old URL at once.',
      examples: ['https://api.example.com/webhooks/agents/webh_9sKq2LmV7xYb3NcR8pT1wZ4d/trigger'],
    }),
    draft: Type.Object(
      {
        prompt: Type.String({ examples: ['You call {name} about their {product} order.'] }),
        welcome_message: Type.String({ examples: ['Hello {name}, this is Acme.'] }),
        config: AgentConfig,
      },
      {
        additionalProperties: false,
        description:
          'What the next publish freezes. `config` has every default filled: a voice or model the draft does not set follows the tenant’s default, else the operator’s.',
      },
    ),
    published_version: Nullable(
      Type.Integer({
        minimum: 1,
        description: 'The version calls use; null until the first publish.',
        examples: [3],
      }),
    ),
    settings: AgentSettings,
    created_at: Timestamp,
  },
  {
    additionalProperties: false,
    title: 'Agent',
    description: 'A voice agent: its draft, its published version, its settings.',
  },
);
export type Agent = Static<typeof Agent>;

export const AgentVersion = Type.Object(
  {
    version: Type.Integer({ minimum: 1, examples: [3] }),
    prompt: Type.String({ examples: ['You call {name} about their {product} order.'] }),
    welcome_message: Type.String({ examples: ['Hello {name}, this is Acme.'] }),
    phone_number: Type.String({
      description: 'Caller ID of this version’s calls.',
      examples: ['+14155550123'],
    }),
    config: AgentConfig,
    published_at: Timestamp,
  },
  { additionalProperties: false, title: 'AgentVersion', description: 'A published version; never changes.' },
);
export type AgentVersion = Static<typeof AgentVersion>;

export const DeletedAgent = Type.Object(
  { id: Type.String({ examples: [AGENT_ID_EXAMPLE] }), deleted_at: Timestamp },
  { additionalProperties: false, title: 'DeletedAgent', description: 'Tombstone of a soft-deleted agent.' },
);
export type DeletedAgent = Static<typeof DeletedAgent>;

export const CreateAgentBody = Type.Object(
  {
    user_id: Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'A user of your tenant (not deleted) who owns the agent.',
      examples: [USER_ID_EXAMPLE],
    }),
    name: Name,
    phone_number: Phone,
    prompt: Prompt,
    welcome_message: WelcomeMessage,
    settings: Type.Optional(AgentSettings),
    config: Type.Optional(AgentConfigInput),
  },
  { additionalProperties: false, title: 'CreateAgentRequest' },
);
export type CreateAgentBody = Static<typeof CreateAgentBody>;

export const UpdateAgentBody = Type.Object(
  {
    name: Type.Optional(Name),
    phone_number: Type.Optional(Phone),
    prompt: Type.Optional(Prompt),
    welcome_message: Type.Optional(WelcomeMessage),
    settings: Type.Optional(AgentSettings),
    config: Type.Optional(AgentConfigInput),
  },
  { additionalProperties: false, title: 'UpdateAgentRequest' },
);
export type UpdateAgentBody = Static<typeof UpdateAgentBody>;

export const ListAgentsQuery = Type.Object({
  ...PageQuery,
  user_id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'Only this user’s agents.',
      examples: [USER_ID_EXAMPLE],
    }),
  ),
  sort_by: Type.Union([Type.Literal('created_at'), Type.Literal('name')], {
    default: 'created_at',
    description: 'Sort key: creation time or name.',
  }),
  sort_order: SortOrder,
});
export type ListAgentsQuery = Static<typeof ListAgentsQuery>;

export const ListVersionsQuery = Type.Object({ ...PageQuery });
export type ListVersionsQuery = Static<typeof ListVersionsQuery>;

export const agentIdExample = AGENT_ID_EXAMPLE;

/** The `agents.engine_sync` job: one published version, to sync to the voice engine. */
export const EngineSyncPayload = Type.Object({
  tenantId: Type.String(),
  agentId: Type.String(),
  version: Type.Integer(),
});
export type EngineSyncPayload = Static<typeof EngineSyncPayload>;

/** What the configured voice engine lets agents use (the pickers of a configuration form). */
export const AgentEngineOptions = Type.Object(
  {
    engine: Type.Union([Type.Literal('simulated'), Type.Literal('vapi'), Type.Literal('retell')], {
      description: 'The voice engine calls run on.',
    }),
    voice_providers: Type.Array(Type.String({ examples: ['11labs'] }), {
      description: 'Allowed `voice.provider` values.',
      examples: [['11labs', 'openai']],
    }),
    models: Type.Array(
      Type.Object(
        { provider: Type.String({ examples: ['openai'] }), name: Type.String({ examples: ['gpt-4o-mini'] }) },
        { additionalProperties: false },
      ),
      {
        description: 'Allowed `model` provider and name pairs.',
        examples: [[{ provider: 'openai', name: 'gpt-4o-mini' }]],
      },
    ),
    max_temperature: Type.Number({
      description: 'The highest `model.temperature` the engine takes.',
      examples: [2],
    }),
    min_max_duration_seconds: Type.Integer({
      description: 'The lowest `max_duration_seconds` the engine takes.',
      examples: [10],
    }),
    languages: Nullable(
      Type.Array(Type.String({ examples: ['en-US'] }), {
        description: 'The language tags the engine takes; null: any BCP 47 tag.',
      }),
    ),
  },
  { additionalProperties: false, title: 'AgentEngineOptions' },
);
export type AgentEngineOptions = Static<typeof AgentEngineOptions>;

export const AgentDefaults = Type.Object(
  {
    voice: Nullable(AgentVoice),
    model: Nullable(AgentModel),
    effective: Type.Object(
      { voice: AgentVoice, model: AgentModel },
      {
        additionalProperties: false,
        description:
          'What an agent that sets no voice or model gets: the tenant’s default, else the operator’s.',
      },
    ),
    allowed: AgentEngineOptions,
  },
  {
    additionalProperties: false,
    title: 'AgentDefaults',
    description: 'The tenant’s default voice and model for its agents, and what the voice engine allows.',
  },
);
export type AgentDefaults = Static<typeof AgentDefaults>;

export const AgentDefaultsBody = Type.Object(
  {
    voice: Nullable(AgentVoice),
    model: Nullable(AgentModel),
  },
  { additionalProperties: false, title: 'AgentDefaultsRequest' },
);
export type AgentDefaultsBody = Static<typeof AgentDefaultsBody>;
