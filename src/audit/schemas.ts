/** The audit log as the partner API, the operator API and the console read it (docs/audit.md). */
import { type Static, Type } from '@sinclair/typebox';
import { ACTOR_TYPES } from '../core/audit/context.js';
import { PageQuery } from '../core/db/pagination.js';
import { Nullable, Timestamp } from '../core/http/schemas.js';

export const ActorType = Type.Union(
  ACTOR_TYPES.map((type) => Type.Literal(type)),
  {
    description:
      'Who wrote: `operator_token` (the operator’s ADMIN_TOKEN), `operator_staff` (an operator staff member), `member` (a console member), `api_key` (a partner API key), `cli` (a command of the voiceplane CLI), `system`.',
    examples: ['api_key'],
  },
);

export const AuditEvent = Type.Object(
  {
    id: Type.String({ examples: ['aud_7XkQ2mN9pR4sT6vW8yZ1bC3d'] }),
    tenant_id: Nullable(
      Type.String({
        description: 'The tenant the changed object belongs to.',
        examples: ['ten_8sLk2PqR5tVw7XyZ0aBc1dEf'],
      }),
    ),
    actor: Type.Object(
      {
        type: ActorType,
        id: Type.String({
          description:
            'The API key’s id (never the key), the member’s or staff member’s id, the CLI’s operating-system user, or `admin_token`.',
          examples: ['key_4fGh8JkL2mNp6QrS0tUv9WxY'],
        }),
      },
      { additionalProperties: false },
    ),
    action: Type.String({
      description: '`<object>.<what happened>`, e.g. `user.created`, `plan.updated`, `agent.published`.',
      examples: ['user.created'],
    }),
    object: Type.Object(
      {
        type: Type.String({ examples: ['user'] }),
        id: Nullable(Type.String({ examples: ['usr_3kTmd8Qw1ZbXcV5nR7pL2yHs'] })),
      },
      { additionalProperties: false },
    ),
    fields: Type.Array(Type.String({ examples: ['email'] }), {
      description: 'Names of the fields the write set or changed; values are never recorded.',
      examples: [['email', 'name', 'password']],
    }),
    ip: Nullable(
      Type.String({ description: 'The client address the request came from.', examples: ['203.0.113.7'] }),
    ),
    user_agent: Nullable(Type.String({ examples: ['voiceplane-node/1.0.0'] })),
    request_id: Nullable(
      Type.String({
        description: 'The `X-Request-Id` of the request that wrote.',
        examples: ['req_5hJk8LmN2pQr4StV6wXy9zA1'],
      }),
    ),
    created_at: Timestamp,
  },
  { additionalProperties: false, title: 'AuditEvent' },
);
export type AuditEvent = Static<typeof AuditEvent>;

const Filter = (description: string, example: string) =>
  Type.Optional(Type.String({ minLength: 1, maxLength: 255, description, examples: [example] }));

/** The filters every reader of the log has (the operator's add the tenant). */
export const ListAuditEventsQuery = Type.Object({
  ...PageQuery,
  actor_type: Type.Optional(ActorType),
  actor_id: Filter(
    'Only what this actor did (an API key id, a member id, …).',
    'key_4fGh8JkL2mNp6QrS0tUv9WxY',
  ),
  action: Filter('Only this action.', 'user.created'),
  object_type: Filter('Only changes to objects of this type.', 'user'),
  object_id: Filter('Only changes to this object.', 'usr_3kTmd8Qw1ZbXcV5nR7pL2yHs'),
  created_after: Type.Optional({
    ...Timestamp,
    description: 'Only entries recorded strictly after this time.',
  }),
  created_before: Type.Optional({
    ...Timestamp,
    description: 'Only entries recorded strictly before this time.',
  }),
});
export type ListAuditEventsQuery = Static<typeof ListAuditEventsQuery>;

export const ListOperatorAuditEventsQuery = Type.Object({
  ...ListAuditEventsQuery.properties,
  tenant_id: Filter('Only entries of this tenant.', 'ten_8sLk2PqR5tVw7XyZ0aBc1dEf'),
});
export type ListOperatorAuditEventsQuery = Static<typeof ListOperatorAuditEventsQuery>;

export const AuditEventParams = Type.Object({
  id: Type.String({
    minLength: 1,
    maxLength: 100,
    description: 'The audit entry’s id.',
    examples: ['aud_7XkQ2mN9pR4sT6vW8yZ1bC3d'],
  }),
});
