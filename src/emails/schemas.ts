import { type Static, Type } from '@sinclair/typebox';
import { PageQuery } from '../core/db/pagination.js';
import { Nullable, Timestamp } from '../core/http/schemas.js';

export const EmailStatus = Type.Union(
  [Type.Literal('pending'), Type.Literal('sent'), Type.Literal('failed')],
  {
    description:
      'pending = waiting for (another) delivery attempt; sent = accepted by the SMTP server; failed = given up.',
  },
);
export type EmailStatus = Static<typeof EmailStatus>;

/** One outbox email as the operator sees it (no body). */
export const OutboxEmail = Type.Object(
  {
    id: Type.String({ examples: ['eml_7hQm2VxC9kLp0RtY3bN5wZsA'] }),
    user_id: Nullable(Type.String({ description: 'The user the email is about; null for member emails.' })),
    kind: Type.Union([
      Type.Literal('welcome'),
      Type.Literal('password_reset'),
      Type.Literal('member_invitation'),
      Type.Literal('test'),
      Type.Literal('user_invitation'),
    ]),
    to: Type.String(),
    subject: Type.String(),
    status: EmailStatus,
    attempts: Type.Integer({ minimum: 0, description: 'SMTP delivery attempts made so far.' }),
    last_error: Nullable(
      Type.String({ description: 'Reason of the last failed attempt; never holds the SMTP password.' }),
    ),
    created_at: Timestamp,
    sent_at: Nullable(Timestamp),
  },
  { additionalProperties: false },
);
export type OutboxEmail = Static<typeof OutboxEmail>;

export const ListEmailsQuery = Type.Object({
  ...PageQuery,
  status: Type.Optional(EmailStatus),
});
export type ListEmailsQuery = Static<typeof ListEmailsQuery>;

/** The `emails.send` job: one delivery attempt of one outbox row. */
export const EmailJobPayload = Type.Object({ outbox_id: Type.String() });
export type EmailJobPayload = Static<typeof EmailJobPayload>;
