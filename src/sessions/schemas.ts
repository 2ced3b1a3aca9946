import { type Static, Type } from '@sinclair/typebox';
import { Email, Timestamp } from '../core/schemas.js';
import { Password } from '../users/schemas.js';

const TenantId = Type.String({ minLength: 1, maxLength: 255, examples: ['ten_5pXc2LmQ8wZr1VbN7kTy3HdA'] });

export const SignInBody = Type.Object(
  {
    tenant_id: TenantId,
    email: Email,
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);
export type SignInBody = Static<typeof SignInBody>;

export const SessionCreated = Type.Object(
  { token: Type.String(), user_id: Type.String(), expires_at: Timestamp },
  { additionalProperties: false },
);
export type SessionCreated = Static<typeof SessionCreated>;

export const PasswordResetRequestBody = Type.Object(
  { tenant_id: TenantId, email: Email },
  { additionalProperties: false },
);
export type PasswordResetRequestBody = Static<typeof PasswordResetRequestBody>;

export const PasswordResetRequested = Type.Object(
  {
    message: Type.String({
      examples: ['If this email belongs to an account, a reset link valid for one hour is on its way.'],
    }),
  },
  {
    additionalProperties: false,
    description: 'The same answer whether or not the email belongs to an account.',
  },
);
export type PasswordResetRequested = Static<typeof PasswordResetRequested>;

export const PasswordResetConfirmBody = Type.Object(
  {
    token: Type.String({
      minLength: 1,
      maxLength: 1024,
      description: 'The token of the reset link (the part after `#token=`).',
    }),
    password: Password,
  },
  { additionalProperties: false },
);
export type PasswordResetConfirmBody = Static<typeof PasswordResetConfirmBody>;

export const PasswordResetDone = Type.Object(
  { user_id: Type.String() },
  { additionalProperties: false, description: 'The new password is set; every session was signed out.' },
);
export type PasswordResetDone = Static<typeof PasswordResetDone>;
