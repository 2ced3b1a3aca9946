import { type Static, Type } from '@sinclair/typebox';
import { PageQuery, SortOrder } from '../core/pagination.js';
import { Nullable, Phone, Timestamp } from '../core/schemas.js';

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
    id: Type.String({ examples: ['agt_3kTmd8Qw1ZbXcV5nR7pL2yHs'] }),
    user_id: Type.String(),
    name: Type.String(),
    phone_number: Type.String({ description: 'Caller ID of the draft; calls use the published version’s.' }),
    webhook_id: Type.String(),
    webhook_url: Type.String(),
    draft: Type.Object(
      { prompt: Type.String(), welcome_message: Type.String() },
      { additionalProperties: false },
    ),
    published_version: Nullable(Type.Integer()),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);
export type Agent = Static<typeof Agent>;

export const CreateAgentBody = Type.Object(
  {
    user_id: Type.String({ minLength: 1, maxLength: 255 }),
    name: Name,
    phone_number: Phone,
    prompt: Prompt,
    welcome_message: WelcomeMessage,
  },
  { additionalProperties: false },
);
export type CreateAgentBody = Static<typeof CreateAgentBody>;

export const UpdateAgentBody = Type.Object(
  {
    name: Type.Optional(Name),
    phone_number: Type.Optional(Phone),
    prompt: Type.Optional(Prompt),
    welcome_message: Type.Optional(WelcomeMessage),
  },
  { additionalProperties: false },
);
export type UpdateAgentBody = Static<typeof UpdateAgentBody>;

export const ListAgentsQuery = Type.Object({
  ...PageQuery,
  sort_by: Type.Union([Type.Literal('created_at'), Type.Literal('name')], { default: 'created_at' }),
  sort_order: SortOrder,
});
export type ListAgentsQuery = Static<typeof ListAgentsQuery>;
