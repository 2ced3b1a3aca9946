import { type Static, Type } from '@sinclair/typebox';
import { PageQuery, SortOrder } from '../core/db/pagination.js';
import { Nullable, Timestamp } from '../core/http/schemas.js';

export const PUBLIC_STATUSES = [
  'trialing',
  'active',
  'past_due',
  'canceled',
  'unpaid',
  'paused',
  'inactive',
] as const;
export type PublicStatus = (typeof PUBLIC_STATUSES)[number];

// One enum keyword (not a union of literals) so a bad value yields one validation issue.
export const SubscriptionStatus = Type.Unsafe<PublicStatus>({
  type: 'string',
  enum: [...PUBLIC_STATUSES],
  title: 'SubscriptionStatus',
  description:
    'Normalized state. The processor’s transient states (incomplete, incomplete_expired) and internal tombstones are reported as inactive.',
});

export const SubscriptionProvider = Type.Union(
  [Type.Literal('processor'), Type.Literal('agency'), Type.Literal('marketplace'), Type.Literal('custom')],
  { title: 'SubscriptionProvider', description: 'Billing provider behind the subscription.' },
);

export const Subscription = Type.Object(
  {
    id: Type.String({ examples: ['sub_4rT9kQ2mXv7bN1cL8pZ0sD3f'] }),
    user_id: Type.String({ examples: ['usr_3kTmd8Qw1ZbXcV5nR7pL2yHs'] }),
    plan_id: Type.String({ examples: ['plan_7Yt2mQ9vX1cB4nK8pL0sD3fH'] }),
    status: SubscriptionStatus,
    provider: SubscriptionProvider,
    provider_subscription_id: Nullable(
      Type.String({
        description:
          'The external provider’s subscription id; null where the provider exposes none (agency).',
        examples: ['sub_1PqR2sT3uV4wX5yZ'],
      }),
    ),
    cancel_at_period_end: Type.Boolean({ description: 'Ends at current_period_end.' }),
    current_period_start: Timestamp,
    current_period_end: Timestamp,
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false, title: 'Subscription' },
);
export type Subscription = Static<typeof Subscription>;

export const CreateSubscriptionBody = Type.Object(
  {
    user_id: Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'A user of the caller’s tenant.',
      examples: ['usr_3kTmd8Qw1ZbXcV5nR7pL2yHs'],
    }),
    plan_id: Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'An active plan of the caller’s catalog.',
      examples: ['plan_7Yt2mQ9vX1cB4nK8pL0sD3fH'],
    }),
  },
  { additionalProperties: false, title: 'CreateSubscriptionRequest' },
);
export type CreateSubscriptionBody = Static<typeof CreateSubscriptionBody>;

export const ChangePlanBody = Type.Object(
  {
    plan_id: Type.String({
      minLength: 1,
      maxLength: 255,
      description: 'The target plan: an active plan with the same provider and currency as the current one.',
      examples: ['plan_2Hx8kQ4mZv6bN9cL1pT0sR5d'],
    }),
  },
  { additionalProperties: false, title: 'ChangePlanRequest' },
);
export type ChangePlanBody = Static<typeof ChangePlanBody>;

export const ListSubscriptionsQuery = Type.Object({
  ...PageQuery,
  user_id: Type.Optional(
    Type.String({
      maxLength: 255,
      description: 'Only this user’s subscriptions.',
      examples: ['usr_3kTmd8Qw1ZbXcV5nR7pL2yHs'],
    }),
  ),
  plan_id: Type.Optional(
    Type.String({
      maxLength: 255,
      description: 'Only subscriptions to this plan.',
      examples: ['plan_7Yt2mQ9vX1cB4nK8pL0sD3fH'],
    }),
  ),
  status: Type.Optional(SubscriptionStatus),
  sort_order: SortOrder,
});
export type ListSubscriptionsQuery = Static<typeof ListSubscriptionsQuery>;

export const PaymentMethodBody = Type.Object(
  {
    token: Type.String({
      minLength: 1,
      maxLength: 255,
      description:
        'A Stripe test token: pm_card_visa (always succeeds) or pm_card_chargeDeclined (every charge declines).',
    }),
  },
  { additionalProperties: false },
);

export const PaymentMethod = Type.Object(
  { user_id: Type.String(), brand: Nullable(Type.String()), last4: Nullable(Type.String()) },
  { additionalProperties: false },
);

/** The `subscriptions.period` job: bring the subscription's periods up to now. */
export const PeriodJobPayload = Type.Object({ subscription_id: Type.String() });
/** The `subscriptions.reconcile` job: finish a processor change a crash interrupted. */
export const ReconcileJobPayload = Type.Object({ operation_id: Type.String() });
/** The `subscriptions.cancel_at_processor` job: end the processor's subscription of a deleted user. */
export const ProcessorCancelJobPayload = Type.Object({
  subscription_id: Type.String(),
  provider_subscription_id: Type.String(),
});
