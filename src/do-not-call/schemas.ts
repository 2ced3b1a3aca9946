import { type Static, Type } from '@sinclair/typebox';
import { PageQuery } from '../core/db/pagination.js';
import { Nullable, Phone, Timestamp } from '../core/http/schemas.js';

export const DoNotCallEntry = Type.Object(
  {
    phone_number: Type.String({ description: 'E.164.', examples: ['+14155550123'] }),
    reason: Nullable(Type.String({ examples: ['Asked not to be called again'] })),
    created_at: Timestamp,
  },
  {
    additionalProperties: false,
    title: 'DoNotCallEntry',
    description: 'A number of the tenant’s do-not-call list: no call is placed to it.',
  },
);
export type DoNotCallEntry = Static<typeof DoNotCallEntry>;

export const AddDoNotCallBody = Type.Object(
  {
    phone_number: Phone,
    reason: Type.Optional(
      Type.String({ minLength: 1, maxLength: 500, examples: ['Asked not to be called again'] }),
    ),
  },
  { additionalProperties: false, title: 'AddDoNotCallRequest' },
);
export type AddDoNotCallBody = Static<typeof AddDoNotCallBody>;

export const ListDoNotCallQuery = Type.Object({
  ...PageQuery,
  phone_number: Type.Optional(
    Type.String({
      minLength: 1,
      maxLength: 32,
      description: 'Only this number (exact match): an empty page when it is not listed.',
      examples: ['+14155550123'],
    }),
  ),
});
export type ListDoNotCallQuery = Static<typeof ListDoNotCallQuery>;

export const PhoneNumberParam = Type.Object({
  phone_number: Type.String({
    minLength: 1,
    maxLength: 255,
    description: 'The listed number, URL-encoded (`+` as `%2B`). A number not on the list answers 404.',
    examples: ['+14155550123'],
  }),
});
