/** Tools (docs/tools.md): the tools secret's answer and the request partners' tool endpoints receive. */
import { type Static, Type } from '@sinclair/typebox';
import { Timestamp } from '../core/http/schemas.js';

export const ToolsSecret = Type.Object(
  {
    secret: Type.String({
      description:
        'The secret tool requests are signed with (Standard Webhooks), shown only this once. Verify with it, or with the SDK’s verifyToolRequest.',
      examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
    }),
    previous_valid_until: Type.Union([Timestamp, Type.Null()], {
      description:
        'Until when the previous secret keeps signing beside this one (each request then carries both signatures); null when there was none.',
    }),
  },
  { additionalProperties: false, title: 'ToolsSecret' },
);
export type ToolsSecret = Static<typeof ToolsSecret>;

/** What we POST to a tool's url (signed with the tenant's tools secret). */
export const ToolRequest = Type.Object(
  {
    call_id: Type.String({
      description: 'The call the agent is on.',
      examples: ['call_4eC39HqLyjWDarjtT1zdp7dc'],
    }),
    agent_id: Type.String({
      description: 'The agent calling the tool.',
      examples: ['agt_4eC39HqLyjWDarjtT1zdp7dc'],
    }),
    tool: Type.String({
      description: 'The tool’s name, as configured on the agent.',
      examples: ['check_order'],
    }),
    arguments: Type.Record(Type.String(), Type.Unknown(), {
      description: 'What the model passed, shaped by the tool’s `parameters`.',
    }),
  },
  { additionalProperties: false, title: 'ToolRequest' },
);
export type ToolRequest = Static<typeof ToolRequest>;

/** How a tool call ended, as its timeline entry says. */
export type ToolCallOutcome = 'succeeded' | 'failed' | 'timed_out' | 'refused';
