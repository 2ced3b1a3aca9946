import { type Static, Type } from '@sinclair/typebox';
import { Email, Timestamp } from '../core/http/schemas.js';
import { Password } from '../users/schemas.js';

const TenantId = Type.String({ minLength: 1, maxLength: 255, examples: ['ten_5pXc2LmQ8wZr1VbN7kTy3HdA'] });

export const SignInBody = Type.Object(
  {
    tenant_id: TenantId,
    email: Email,
    password: Type.String({ minLength: 1, maxLength: 1024, examples: ['correct horse battery staple'] }),
  },
  { additionalProperties: false, title: 'SignIn' },
);
export type SignInBody = Static<typeof SignInBody>;

export const SessionCreated = Type.Object(
  {
    token: Type.String({
      description:
        'The session token: send it as `Authorization: Bearer <token>`. Shown once; store it as a secret.',
      examples: ['vps_9QmT2xLk4VbN7cWp1ZrD5yHsJ8fGa3Ke6uXo0iMt'],
    }),
    user_id: Type.String({ examples: ['usr_3kTmd8Qw1ZbXcV5nR7pL2yHs'] }),
    expires_at: Timestamp,
  },
  { additionalProperties: false, title: 'Session', description: 'A new session of the user, valid 7 days.' },
);
export type SessionCreated = Static<typeof SessionCreated>;

export const PasswordResetRequestBody = Type.Object(
  { tenant_id: TenantId, email: Email },
  { additionalProperties: false, title: 'PasswordResetRequest' },
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
      examples: ['vpr_7hJk2LmN4pQrSt6VwXyZ8aBc0DeFgH1iJ2kL3mN4'],
    }),
    password: Password,
  },
  { additionalProperties: false, title: 'PasswordResetConfirmation' },
);
export type PasswordResetConfirmBody = Static<typeof PasswordResetConfirmBody>;

export const PasswordResetDone = Type.Object(
  { user_id: Type.String({ examples: ['usr_3kTmd8Qw1ZbXcV5nR7pL2yHs'] }) },
  { additionalProperties: false, description: 'The new password is set; every session was signed out.' },
);
export type PasswordResetDone = Static<typeof PasswordResetDone>;

/** The `sessions.password_reset` job: the reset email for an address, if a user has it. */
export const PasswordResetJobPayload = Type.Object({ email: Type.String() });
export type PasswordResetJobPayload = Static<typeof PasswordResetJobPayload>;
