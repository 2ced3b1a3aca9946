import { type Static, Type } from '@sinclair/typebox';
import { PageQuery } from '../core/db/pagination.js';
import { Nullable, Timestamp } from '../core/http/schemas.js';

/** The bounds of one top-up's minutes: at least one, at most 100,000 (about 69 days of talk). */
export const MIN_TOP_UP_MINUTES = 1;
export const MAX_TOP_UP_MINUTES = 100_000;

export const TOP_UP_BILLINGS = ['processor', 'agency'] as const;
export type TopUpBilling = (typeof TOP_UP_BILLINGS)[number];

export const TOP_UP_STATUSES = ['succeeded', 'declined'] as const;
export type TopUpStatus = (typeof TOP_UP_STATUSES)[number];

// One enum keyword each (not a union of literals), as the document's other enums.
const TopUpBillingSchema = Type.Unsafe<TopUpBilling>({
  type: 'string',
  enum: [...TOP_UP_BILLINGS],
  title: 'TopUpBilling',
  description:
    'processor: charged to the user’s card through the processor; agency: recorded for the agency’s own invoicing.',
});

const TopUpStatusSchema = Type.Unsafe<TopUpStatus>({
  type: 'string',
  enum: [...TOP_UP_STATUSES],
  title: 'TopUpStatus',
  description:
    'succeeded: the minutes were credited; declined: the card was declined and nothing was credited.',
});

export const TopUp = Type.Object(
  {
    id: Type.String({ examples: ['top_9xQ2mR7vK1cB4nT8pL0sD3fH'] }),
    user_id: Type.String({ examples: ['usr_3kTmd8Qw1ZbXcV5nR7pL2yHs'] }),
    plan_id: Type.String({
      description: 'The plan of the user’s current subscription, whose topup_rate priced the top-up.',
      examples: ['plan_7Yt2mQ9vX1cB4nK8pL0sD3fH'],
    }),
    minutes: Type.Integer({ description: 'Minutes bought.', examples: [120] }),
    amount: Type.Integer({
      description: 'minutes × topup_rate, in the minor unit of the currency (rounded half up).',
      examples: [1200],
    }),
    currency: Type.String({ description: 'Lowercase ISO 4217 code (the plan’s).', examples: ['usd'] }),
    billing: TopUpBillingSchema,
    status: TopUpStatusSchema,
    processor_charge_id: Nullable(
      Type.String({
        description: 'The processor’s charge (Stripe: PaymentIntent); null for agency billing.',
        examples: ['pi_3PqR2sT3uV4wX5yZ'],
      }),
    ),
    decline_code: Nullable(
      Type.String({
        description: 'Why the processor declined the card (e.g. generic_decline); null unless declined.',
        examples: ['generic_decline'],
      }),
    ),
    created_at: Timestamp,
  },
  { additionalProperties: false, title: 'TopUp' },
);
export type TopUp = Static<typeof TopUp>;

export const CreateTopUpBody = Type.Object(
  {
    minutes: Type.Integer({
      minimum: MIN_TOP_UP_MINUTES,
      maximum: MAX_TOP_UP_MINUTES,
      description: `Minutes to add, ${MIN_TOP_UP_MINUTES} to ${MAX_TOP_UP_MINUTES.toLocaleString('en-US')}.`,
      examples: [120],
    }),
  },
  { additionalProperties: false },
);
export type CreateTopUpBody = Static<typeof CreateTopUpBody>;

export const ListTopUpsQuery = Type.Object({ ...PageQuery });
export type ListTopUpsQuery = Static<typeof ListTopUpsQuery>;
