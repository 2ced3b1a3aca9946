import { type Static, Type } from '@sinclair/typebox';

export const CreditBalance = Type.Object(
  { user_id: Type.String(), balance_minutes: Type.Integer() },
  { additionalProperties: false },
);
export type CreditBalance = Static<typeof CreditBalance>;

/** A grant (or, negative, a deduction) of minutes: the operator API and the console. */
export const AddCreditsBody = Type.Object(
  {
    minutes: Type.Integer({ minimum: -10_000_000, maximum: 10_000_000, description: 'May be negative.' }),
    reason: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);
export type AddCreditsBody = Static<typeof AddCreditsBody>;
