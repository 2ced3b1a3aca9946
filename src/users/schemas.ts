import { type Static, Type } from '@sinclair/typebox';
import { PageQuery, SortOrder } from '../core/db/pagination.js';
import { Email, Nullable, Phone, Timestamp } from '../core/http/schemas.js';

export const UserStatus = Type.Union(
  [Type.Literal('active'), Type.Literal('pending'), Type.Literal('blocked')],
  {
    title: 'UserStatus',
    description: 'active = approved; pending = mid-onboarding; blocked = blocked by the tenant.',
  },
);
export type UserStatus = Static<typeof UserStatus>;

export const UserListItem = Type.Object(
  {
    id: Type.String({ examples: ['usr_3kTmd8Qw1ZbXcV5nR7pL2yHs'] }),
    name: Nullable(Type.String({ examples: ['Ada Lovelace'] })),
    email: Type.String({ examples: ['ada@example.com'] }),
    phone: Nullable(Type.String({ description: 'E.164.', examples: ['+14155550123'] })),
    status: UserStatus,
    created_at: Timestamp,
    plan_id: Nullable(
      Type.String({
        description: 'Plan of the current active or trialing subscription.',
        examples: ['plan_7Yt2mQ9vX1cB4nK8pL0sD3fH'],
      }),
    ),
    plan_name: Nullable(Type.String({ examples: ['Starter'] })),
  },
  { additionalProperties: false, title: 'User', description: 'A user as lists and reads show it.' },
);
export type UserListItem = Static<typeof UserListItem>;

export const CreatedUser = Type.Object(
  {
    id: Type.String({ examples: ['usr_3kTmd8Qw1ZbXcV5nR7pL2yHs'] }),
    email: Type.String({ examples: ['ada@example.com'] }),
    name: Type.String({ examples: ['Ada Lovelace'] }),
    created_at: Timestamp,
  },
  { additionalProperties: false, title: 'CreatedUser', description: 'The user just created.' },
);
export type CreatedUser = Static<typeof CreatedUser>;

export const DeletedUser = Type.Object(
  { id: Type.String({ examples: ['usr_3kTmd8Qw1ZbXcV5nR7pL2yHs'] }), deleted_at: Timestamp },
  { additionalProperties: false, title: 'DeletedUser', description: 'Tombstone of a soft-deleted user.' },
);
export type DeletedUser = Static<typeof DeletedUser>;

/** A user's password, when it is set: at creation and by a password reset. */
export const Password = Type.String({
  minLength: 8,
  maxLength: 1024,
  description: 'At least 8 characters; stored only as an Argon2id hash.',
  examples: ['correct horse battery'],
});

export const CreateUserBody = Type.Object(
  {
    email: Email,
    name: Type.String({ minLength: 1, maxLength: 200, examples: ['Ada Lovelace'] }),
    password: Password,
    phone: Type.Optional(Phone),
  },
  { additionalProperties: false, title: 'CreateUserRequest' },
);
export type CreateUserBody = Static<typeof CreateUserBody>;

export const UpdateUserBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200, examples: ['Ada King'] })),
    email: Type.Optional(Email),
    phone: Type.Optional(Nullable({ ...Phone, description: 'E.164; null removes the number.' })),
  },
  {
    additionalProperties: false,
    minProperties: 1,
    title: 'UpdateUserRequest',
    description: 'The fields to change; the others keep their value.',
  },
);
export type UpdateUserBody = Static<typeof UpdateUserBody>;

export const ListUsersQuery = Type.Object({
  ...PageQuery,
  status: Type.Optional(
    Type.Union([Type.Literal('active'), Type.Literal('blocked')], {
      description: 'active (approved) or blocked; pending users appear only when the filter is omitted.',
    }),
  ),
  search: Type.Optional(
    Type.String({
      maxLength: 200,
      description: 'Case-insensitive substring of name or email; % _ \\ are literal.',
      examples: ['ada'],
    }),
  ),
  sort_by: Type.Union([Type.Literal('created_at'), Type.Literal('name')], {
    default: 'created_at',
    description: 'Sort key: creation time or name.',
  }),
  sort_order: SortOrder,
});
export type ListUsersQuery = Static<typeof ListUsersQuery>;

export const UpdateUserStatusBody = Type.Object({ status: UserStatus }, { additionalProperties: false });
