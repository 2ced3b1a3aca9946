/** Shapes of a tenant's members (the agency's staff who sign in to the console). */
import { type Static, Type } from '@sinclair/typebox';
import { Email, Nullable, Timestamp } from '../core/http/schemas.js';
import { Password } from '../users/schemas.js';

export const ROLES = ['owner', 'admin', 'viewer'] as const;
export type Role = (typeof ROLES)[number];

export const Role = Type.Union(
  ROLES.map((role) => Type.Literal(role)),
  {
    description:
      'owner: everything, members and billing settings; admin: everything but those; viewer: read only.',
  },
);

export const Member = Type.Object(
  {
    id: Type.String({ examples: ['mem_3kTmd8Qw1ZbXcV5nR7pL2yHs'] }),
    tenant_id: Type.String(),
    email: Email,
    name: Nullable(Type.String()),
    role: Role,
    totp_enabled: Type.Boolean({ description: 'Whether sign-in asks for a second factor.' }),
    created_at: Timestamp,
  },
  { additionalProperties: false, title: 'Member' },
);
export type Member = Static<typeof Member>;

export const CreateMemberBody = Type.Object(
  {
    email: Email,
    password: Password,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    role: Type.Optional(Role),
  },
  { additionalProperties: false },
);
export type CreateMemberBody = Static<typeof CreateMemberBody>;

/** A pending invitation to join the console (the link itself is only in the email and on creation). */
export const Invitation = Type.Object(
  {
    id: Type.String({ examples: ['minv_3kTmd8Qw1ZbXcV5nR7pL2yHs'] }),
    email: Email,
    role: Role,
    invited_by: Nullable(Type.String({ description: 'The inviting member’s id.' })),
    expires_at: Timestamp,
    created_at: Timestamp,
  },
  { additionalProperties: false, title: 'MemberInvitation' },
);
export type Invitation = Static<typeof Invitation>;

export const InviteMemberBody = Type.Object({ email: Email, role: Role }, { additionalProperties: false });
export type InviteMemberBody = Static<typeof InviteMemberBody>;

export const AcceptInvitationBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }), password: Password },
  { additionalProperties: false },
);
export type AcceptInvitationBody = Static<typeof AcceptInvitationBody>;

export const ChangeRoleBody = Type.Object({ role: Role }, { additionalProperties: false });

export const ChangePasswordBody = Type.Object(
  { current_password: Type.String({ minLength: 1, maxLength: 1024 }), new_password: Password },
  { additionalProperties: false },
);
export type ChangePasswordBody = Static<typeof ChangePasswordBody>;
