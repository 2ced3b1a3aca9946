import { type Static, type TSchema, Type } from '@sinclair/typebox';
import { PageQuery, SortOrder } from '../core/db/pagination.js';
import { Email, Nullable, PHONE_PATTERN, Timestamp } from '../core/http/schemas.js';

export const CALL_STATUSES = [
  'queued',
  'dialing',
  'in_progress',
  'completed',
  'no_answer',
  'failed',
] as const;
export type CallStatus = (typeof CALL_STATUSES)[number];
export const FINAL_STATUSES: readonly CallStatus[] = ['completed', 'no_answer', 'failed'];

export const CALL_DIRECTIONS = ['inbound', 'outbound'] as const;
export type CallDirection = (typeof CALL_DIRECTIONS)[number];
export const CallDirectionSchema = Type.Union(
  CALL_DIRECTIONS.map((d) => Type.Literal(d)),
  {
    description:
      'outbound: placed by the agent (trigger, API, campaign); inbound: a caller rang one of the tenant’s numbers.',
    examples: ['outbound'],
  },
);

export const CallStatusSchema = Type.Union(
  CALL_STATUSES.map((s) => Type.Literal(s)),
  { description: 'queued → dialing → in_progress → completed | no_answer | failed' },
);

export const WebhookParams = Type.Object({
  agentWebhookId: Type.String({
    description: 'The agent’s webhook id (`webh_…`), also the credential: treat the whole URL as a secret.',
    examples: ['webh_4Jx9QmT2vLr8NcZ0aKpE7sWbY3hU6dFg'],
  }),
});

const NAME_DOC = 'Callee’s name. One of `name`, `full_name`, `fullName` must be a non-empty string.';

/**
 * The trigger body as documented. The handler checks it itself (see ./input.ts) so that every
 * problem answers 400 with the message partners rely on, and unknown keys become the context.
 */
export const TriggerCallBody = Type.Object(
  {
    phone: Type.String({
      pattern: PHONE_PATTERN,
      description: 'Number to call, E.164 with country code.',
      examples: ['+14155550123'],
    }),
    name: Type.Optional(Type.String({ description: NAME_DOC, examples: ['Ada Lovelace'] })),
    full_name: Type.Optional(Type.String({ description: 'Alias of `name`.', examples: ['Ada Lovelace'] })),
    fullName: Type.Optional(Type.String({ description: 'Alias of `name`.', examples: ['Ada Lovelace'] })),
    email: Type.Optional(Email),
  },
  {
    title: 'TriggerCallRequest',
    additionalProperties: true,
    description:
      'Any other key is stored with the call as its context and fills `{key}` placeholders (single braces, word characters) in the agent’s published prompt and welcome message; `{name}` is always available. At most 200 extra keys, nested at most 8 levels; the whole body at most 64 KiB.',
    examples: [
      { phone: '+14155550123', name: 'Ada Lovelace', email: 'ada@example.com', product: 'solar panels' },
    ],
  },
);

export const QueuedCall = Type.Object(
  {
    id: Type.String({ examples: ['call_7Yh2kLm9Qw3ZbXcV5nR8pT1s'] }),
    status: Type.Literal('queued'),
    agent_id: Type.String({ examples: ['agt_5Gh8jKl2Mn4Pq6Rs8Tv0Wx2Y'] }),
    from: Type.String({ description: 'Caller ID: the agent’s number.', examples: ['+14155550100'] }),
    to: Type.String({ description: 'The number called.', examples: ['+14155550123'] }),
    created_at: Timestamp,
  },
  { additionalProperties: false, title: 'QueuedCall' },
);
export type QueuedCall = Static<typeof QueuedCall>;

export const Call = Type.Object(
  {
    id: Type.String({ examples: ['call_7Yh2kLm9Qw3ZbXcV5nR8pT1s'] }),
    agent_id: Nullable(
      Type.String({
        description:
          'The agent; null only for an inbound call declined before an agent could take it (the number has no inbound agent).',
        examples: ['agt_5Gh8jKl2Mn4Pq6Rs8Tv0Wx2Y'],
      }),
    ),
    agent_version: Nullable(
      Type.Integer({
        description: 'The published version the call uses (null with `agent_id`).',
        examples: [3],
      }),
    ),
    user_id: Nullable(
      Type.String({
        description: 'The agent’s owner, whose credits pay (null with `agent_id`).',
        examples: ['usr_3kTmd8Qw1ZbXcV5nR7pL2yHs'],
      }),
    ),
    direction: CallDirectionSchema,
    from: Type.String({
      description: 'Who called: the agent’s number (outbound) or the caller (inbound).',
      examples: ['+14155550100'],
    }),
    to: Type.String({
      description: 'The number called: the callee (outbound) or the tenant’s number (inbound).',
      examples: ['+14155550123'],
    }),
    name: Type.String({
      description: 'Callee’s name (empty when none was given).',
      examples: ['Ada Lovelace'],
    }),
    email: Nullable(Type.String({ examples: ['ada@example.com'] })),
    context: Type.Object({}, { additionalProperties: true, examples: [{ product: 'solar panels' }] }),
    prompt: Type.String({
      description: 'The rendered prompt.',
      examples: ['Call Ada Lovelace about solar panels.'],
    }),
    welcome_message: Type.String({
      description: 'The rendered welcome message.',
      examples: ['Hello Ada Lovelace!'],
    }),
    status: CallStatusSchema,
    created_at: Timestamp,
    started_at: Nullable(Timestamp),
    ended_at: Nullable(Timestamp),
    duration_seconds: Nullable(Type.Integer({ minimum: 0, examples: [61] })),
    failure_reason: Nullable(
      Type.String({ examples: ['simulated carrier failure: the number could not be reached'] }),
    ),
  },
  { additionalProperties: false },
);
export type Call = Static<typeof Call>;

export const ListCallsQuery = Type.Object({
  ...PageQuery,
  agent_id: Type.Optional(Type.String({ maxLength: 255 })),
  tenant_id: Type.Optional(Type.String({ maxLength: 255 })),
  status: Type.Optional(CallStatusSchema),
  direction: Type.Optional(CallDirectionSchema),
});
export type ListCallsQuery = Static<typeof ListCallsQuery>;

/** POST /api/v1/calls: the API's own strict body (the webhook's loose one is TriggerCallBody). */
export const CreateCallBody = Type.Object(
  {
    agent_id: Type.String({ minLength: 1, maxLength: 255, examples: ['agt_5Gh8jKl2Mn4Pq6Rs8Tv0Wx2Y'] }),
    phone: Type.String({
      pattern: PHONE_PATTERN,
      description: 'Number to call, E.164 with country code.',
      examples: ['+14155550123'],
    }),
    name: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 200,
        description: 'Callee’s name; `{name}` in the prompt.',
        examples: ['Ada Lovelace'],
      }),
    ),
    email: Type.Optional(Email),
    context: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            'Stored with the call; each key fills `{key}` placeholders in the agent’s published prompt and welcome message. At most 200 keys, nested at most 8 levels.',
          examples: [{ product: 'solar panels' }],
        },
      ),
    ),
  },
  {
    title: 'CreateCallRequest',
    additionalProperties: false,
    examples: [{ agent_id: 'agt_5Gh8jKl2Mn4Pq6Rs8Tv0Wx2Y', phone: '+14155550123', name: 'Ada Lovelace' }],
  },
);
export type CreateCallBody = Static<typeof CreateCallBody>;

export const CallEvent = Type.Object(
  {
    status: Type.String({
      examples: ['dialing'],
      description:
        'The status the call entered: queued (also each retry), dialing, in_progress, or its final status.',
    }),
    at: Timestamp,
    detail: Type.Object(
      {},
      {
        additionalProperties: true,
        description: 'e.g. `{ "attempt": 2 }`, `{ "reason": "no_answer", "scheduled_for": "…" }`.',
      },
    ),
  },
  { additionalProperties: false, title: 'CallEvent' },
);

const described = <T extends TSchema>(schema: T, options: { description: string; examples?: unknown[] }) =>
  Type.Union([schema, Type.Null()], options);

/** What the call's end teaches beyond its status (docs/calls.md, "Outcomes"). */
export const CallAnalysis = Type.Object(
  {
    summary: Nullable(Type.String({ examples: ['Ada agreed to a visit on Tuesday at 10:00.'] })),
    successful: Nullable(
      Type.Boolean({ description: 'Whether the call met the agent’s success criteria.', examples: [true] }),
    ),
    data: Nullable(
      Type.Record(
        Type.String(),
        Nullable(
          Type.Union([
            Type.String({ examples: ['Tuesday 10:00'] }),
            Type.Number({ examples: [12000] }),
            Type.Boolean({ examples: [true] }),
          ]),
        ),
        {
          description:
            'One value per field the agent’s `analysis.data` configures, of its type (null when the engine found none).',
          examples: [{ appointment_booked: true, budget: 12000 }],
        },
      ),
    ),
  },
  {
    additionalProperties: false,
    title: 'CallAnalysis',
    description:
      'The engine’s analysis of the call; every member null until it is reported (`call.analyzed`).',
  },
);

const OutcomeFields = {
  answered_by: Type.Union([Type.Literal('human'), Type.Literal('voicemail'), Type.Literal('unknown')], {
    description:
      'Who answered, as the engine detected it; `unknown` until it says (and for calls nobody answered).',
    examples: ['human'],
  }),
  analysis: CallAnalysis,
  transferred_to: described(Type.String({ examples: ['+14155550199'] }), {
    description: 'The number the agent transferred the call to (E.164); null when it was not transferred.',
  }),
};

/** A call as the operator API shows it: with the engine's own cost and duration, never shown to partners. */
export const OperatorCall = Type.Object(
  {
    ...Call.properties,
    ...OutcomeFields,
    ended_reason: Nullable(Type.String({ examples: ['completed'] })),
    engine_cost_usd: Nullable(
      Type.Number({ description: 'What the engine says the call cost (USD).', examples: [0.12] }),
    ),
    engine_duration_seconds: Nullable(
      Type.Number({ description: 'The call’s duration by the engine’s count.', examples: [61.4] }),
    ),
  },
  { additionalProperties: false },
);
export type OperatorCall = Static<typeof OperatorCall>;

/** The whole call, as GET /api/v1/calls/{id} shows it (the list shows it without `events`). */
const CallFields = {
  ...Call.properties,
  ...OutcomeFields,
  scheduled_for: described(Timestamp, {
    description: 'When a waiting call starts (calling hours, retry delay); null when it is not waiting.',
  }),
  attempts: Type.Integer({ minimum: 0, description: 'Dial attempts made so far.', examples: [1] }),
  billed_minutes: described(Type.Integer({ minimum: 0, examples: [2] }), {
    description: 'Minutes debited for this call (only answered time is billed); null until it ends.',
  }),
  ended_reason: described(Type.String({ examples: ['completed'] }), {
    description: 'Why the call ended: completed, no_answer, failed, canceled, or the engine’s own reason.',
    examples: ['completed'],
  }),
  engine: Type.String({ description: 'The telephony engine that places the call.', examples: ['simulated'] }),
  engine_call_id: described(Type.String({ examples: ['CA5f1b2c3d4e'] }), {
    description: 'The engine’s id for the call, when it gives one.',
  }),
  transcript: described(Type.String({ examples: ['Agent: Hello Ada…'] }), {
    description: 'What was said, when the engine provides it.',
  }),
  recording_url: described(Type.String({ examples: ['https://example.com/recordings/call.mp3'] }), {
    description: 'Where the recording is, when the engine provides one.',
  }),
};

export const CallListItem = Type.Object(CallFields, { additionalProperties: false, title: 'CallListItem' });
export type CallListItem = Static<typeof CallListItem>;

export const CallDetail = Type.Object(
  { ...CallFields, events: Type.Array(CallEvent, { description: 'Each status change, oldest first.' }) },
  { additionalProperties: false, title: 'CallDetail' },
);
export type CallDetail = Static<typeof CallDetail>;

export const ListPartnerCallsQuery = Type.Object({
  ...PageQuery,
  agent_id: Type.Optional(
    Type.String({
      maxLength: 255,
      description: 'Only this agent’s calls.',
      examples: ['agt_5Gh8jKl2Mn4Pq6Rs8Tv0Wx2Y'],
    }),
  ),
  user_id: Type.Optional(
    Type.String({
      maxLength: 255,
      description: 'Only the calls of this user’s agents.',
      examples: ['usr_3kTmd8Qw1ZbXcV5nR7pL2yHs'],
    }),
  ),
  status: Type.Optional({
    ...CallStatusSchema,
    description: 'Only calls in this status.',
    examples: ['completed'],
  }),
  direction: Type.Optional({ ...CallDirectionSchema, description: 'Only inbound or only outbound calls.' }),
  created_after: Type.Optional({ ...Timestamp, description: 'Only calls created strictly after this time.' }),
  created_before: Type.Optional({
    ...Timestamp,
    description: 'Only calls created strictly before this time.',
  }),
  sort_order: SortOrder,
});
export type ListPartnerCallsQuery = Static<typeof ListPartnerCallsQuery>;
