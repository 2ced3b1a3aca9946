/**
 * Operator staff: the people who run the platform and sign in to the operator console
 * (/operator). Not tenant members: a staff session opens only the operator console.
 */
import { type Static, Type } from '@sinclair/typebox';
import { Email } from '../core/http/schemas.js';

export const STAFF_ROLES = ['owner', 'admin', 'support'] as const;
export const StaffRole = Type.Union(
  STAFF_ROLES.map((role) => Type.Literal(role)),
  { description: 'owner: everything, staff included; admin: everything but staff; support: read only.' },
);
export type StaffRole = Static<typeof StaffRole>;

const Password = Type.String({ minLength: 8, maxLength: 1024 });

export const CreateStaffBody = Type.Object(
  {
    email: Email,
    password: Password,
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    role: StaffRole,
  },
  { additionalProperties: false },
);
export type CreateStaffBody = Static<typeof CreateStaffBody>;

export const InviteStaffBody = Type.Object(
  { email: Email, role: StaffRole },
  { additionalProperties: false },
);
export type InviteStaffBody = Static<typeof InviteStaffBody>;

export const AcceptStaffInvitationBody = Type.Object(
  { password: Password, name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })) },
  { additionalProperties: false },
);
export type AcceptStaffInvitationBody = Static<typeof AcceptStaffInvitationBody>;

export interface Staff {
  id: string;
  email: string;
  name: string | null;
  role: StaffRole;
  created_at: string;
}

export interface StaffInvitation {
  id: string;
  email: string;
  role: StaffRole;
  expires_at: string;
  created_at: string;
}
