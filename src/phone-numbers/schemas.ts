import { type Static, Type } from '@sinclair/typebox';
import { PageQuery } from '../core/db/pagination.js';
import { Nullable, Phone, Timestamp } from '../core/http/schemas.js';

const InboundAgentId = Nullable(
  Type.String({
    description: 'The agent whose published version answers the number’s calls; null: calls are declined.',
    examples: ['agt_5Gh8jKl2Mn4Pq6Rs8Tv0Wx2Y'],
  }),
);

const Label = Nullable(
  Type.String({ description: 'The tenant’s own name for the number.', examples: ['Front desk'] }),
);

const PhoneNumberFields = {
  phone_number: Type.String({ description: 'E.164.', examples: ['+14155550100'] }),
  inbound_agent_id: InboundAgentId,
  label: Label,
  created_at: Timestamp,
  updated_at: Timestamp,
};

export const PhoneNumber = Type.Object(PhoneNumberFields, {
  additionalProperties: false,
  title: 'PhoneNumber',
  description:
    'A number the platform holds for the tenant: its agents call from it, and its inbound agent answers it.',
});
export type PhoneNumber = Static<typeof PhoneNumber>;

export const OperatorPhoneNumber = Type.Object(
  {
    ...PhoneNumberFields,
    tenant_id: Type.String({ examples: ['ten_2fL8mQ4wZ9xB7cV1nR5pT3sY'] }),
    engine: Type.String({ description: 'The voice engine that holds the number.', examples: ['vapi'] }),
    engine_number_id: Type.String({
      description: 'The engine’s id for the number.',
      examples: ['3f2a9c1e-7b4d-4e8a-9c2f-1a6b5d3e8f70'],
    }),
  },
  { additionalProperties: false, title: 'OperatorPhoneNumber' },
);
export type OperatorPhoneNumber = Static<typeof OperatorPhoneNumber>;

export const ImportPhoneNumberBody = Type.Object(
  {
    phone_number: Phone,
    tenant_id: Type.String({ minLength: 1, maxLength: 255, examples: ['ten_2fL8mQ4wZ9xB7cV1nR5pT3sY'] }),
  },
  { additionalProperties: false, title: 'ImportPhoneNumberRequest' },
);
export type ImportPhoneNumberBody = Static<typeof ImportPhoneNumberBody>;

export const ReassignPhoneNumberBody = Type.Object(
  { tenant_id: Type.String({ minLength: 1, maxLength: 255, examples: ['ten_2fL8mQ4wZ9xB7cV1nR5pT3sY'] }) },
  { additionalProperties: false, title: 'ReassignPhoneNumberRequest' },
);
export type ReassignPhoneNumberBody = Static<typeof ReassignPhoneNumberBody>;

export const UpdatePhoneNumberBody = Type.Object(
  {
    inbound_agent_id: Nullable(
      Type.String({
        minLength: 1,
        maxLength: 255,
        description: 'An agent of the tenant (not deleted) to answer the number; null to decline its calls.',
        examples: ['agt_5Gh8jKl2Mn4Pq6Rs8Tv0Wx2Y'],
      }),
    ),
    label: Type.Optional(
      Type.String({ maxLength: 100, description: 'An empty string clears it.', examples: ['Front desk'] }),
    ),
  },
  {
    additionalProperties: false,
    title: 'UpdatePhoneNumberRequest',
    examples: [{ inbound_agent_id: 'agt_5Gh8jKl2Mn4Pq6Rs8Tv0Wx2Y', label: 'Front desk' }],
  },
);
export type UpdatePhoneNumberBody = Static<typeof UpdatePhoneNumberBody>;

export const ListPhoneNumbersQuery = Type.Object({
  ...PageQuery,
  inbound_agent_id: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'Only the numbers this agent answers.',
      examples: ['agt_5Gh8jKl2Mn4Pq6Rs8Tv0Wx2Y'],
    }),
  ),
});
export type ListPhoneNumbersQuery = Static<typeof ListPhoneNumbersQuery>;

export const ListOperatorPhoneNumbersQuery = Type.Object({
  ...ListPhoneNumbersQuery.properties,
  tenant_id: Type.Optional(Type.String({ minLength: 1, maxLength: 255 })),
  engine: Type.Optional(
    Type.String({ minLength: 1, maxLength: 40, description: 'Only the numbers this voice engine holds.' }),
  ),
});
export type ListOperatorPhoneNumbersQuery = Static<typeof ListOperatorPhoneNumbersQuery>;

export const PhoneNumberParam = Type.Object({
  phone_number: Type.String({
    minLength: 1,
    maxLength: 255,
    description: 'The number, URL-encoded (`+` as `%2B`).',
    examples: ['+14155550100'],
  }),
});

export const SimulateInboundCallBody = Type.Object(
  {
    to: { ...Phone, description: 'The imported number that rings.' },
    from: { ...Phone, description: 'The caller.' },
  },
  { additionalProperties: false, title: 'SimulateInboundCallRequest' },
);
export type SimulateInboundCallBody = Static<typeof SimulateInboundCallBody>;
