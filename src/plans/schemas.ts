import { type Static, Type } from '@sinclair/typebox';
import { PageQuery, SortOrder } from '../core/db/pagination.js';
import { Nullable, Timestamp } from '../core/http/schemas.js';

export const PlanProvider = Type.Union([Type.Literal('processor'), Type.Literal('agency')], {
  title: 'PlanProvider',
  description: 'processor: billed by the card processor; agency: billed offline by the agency.',
});
export type PlanProvider = Static<typeof PlanProvider>;

const Currency = Type.String({
  pattern: '^[a-z]{3}$',
  description: 'Lowercase ISO 4217 code.',
  examples: ['usd'],
});
const MinorUnits = Type.Integer({
  minimum: 0,
  maximum: 1_000_000_000_000,
  description: 'Minor unit of the currency.',
});
const PerMinuteRate = Type.Number({
  minimum: 0,
  maximum: 1_000_000,
  description: 'Per minute, major unit of the currency; at most 6 decimal places.',
});

export const Plan = Type.Object(
  {
    id: Type.String({ examples: ['plan_7Yt2mQ9vX1cB4nK8pL0sD3fH'] }),
    name: Type.String({ examples: ['Starter'] }),
    description: Nullable(Type.String({ examples: ['100 minutes a month for small teams.'] })),
    active: Type.Boolean({ description: 'Offered to new subscribers.' }),
    provider: PlanProvider,
    currency: Type.String({ description: 'Lowercase ISO 4217 code.', examples: ['usd'] }),
    monthly_price: Type.Integer({ description: 'Minor unit of the currency.', examples: [2900] }),
    annual_price: Type.Integer({ description: 'Minor unit of the currency.', examples: [29000] }),
    included_minutes: Type.Integer({ description: 'Call minutes granted each period.', examples: [100] }),
    overage_rate: Type.Number({
      description: 'Per minute beyond the included ones, major unit of the currency.',
      examples: [0.12],
    }),
    topup_rate: Type.Number({
      description: 'Per minute of a top-up, major unit of the currency.',
      examples: [0.1],
    }),
    trial_period_days: Type.Integer({ description: '0 means no trial.', examples: [14] }),
    created_at: Timestamp,
    updated_at: Timestamp,
  },
  { additionalProperties: false, title: 'Plan' },
);
export type Plan = Static<typeof Plan>;

export const ListPlansQuery = Type.Object({
  ...PageQuery,
  active: Type.Union([Type.Literal('true'), Type.Literal('false')], {
    default: 'true',
    description: 'true: only plans offered to new subscribers; false: archived and inactive plans too.',
  }),
  sort_by: Type.Union([Type.Literal('created_at'), Type.Literal('name')], {
    default: 'created_at',
    description: 'Sort key: creation time or name.',
  }),
  sort_order: SortOrder,
  provider: Type.Optional(PlanProvider),
});
export type ListPlansQuery = Static<typeof ListPlansQuery>;

const editable = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  description: Nullable(Type.String({ maxLength: 2000 })),
  active: Type.Boolean(),
  monthly_price: MinorUnits,
  annual_price: MinorUnits,
  included_minutes: Type.Integer({ minimum: 0, maximum: 10_000_000 }),
  overage_rate: PerMinuteRate,
  topup_rate: PerMinuteRate,
  trial_period_days: Type.Integer({ minimum: 0, maximum: 730 }),
};

export const CreatePlanBody = Type.Object(
  {
    name: editable.name,
    description: Type.Optional(editable.description),
    active: Type.Optional(editable.active),
    provider: PlanProvider,
    currency: Currency,
    monthly_price: editable.monthly_price,
    annual_price: editable.annual_price,
    included_minutes: editable.included_minutes,
    overage_rate: editable.overage_rate,
    topup_rate: editable.topup_rate,
    trial_period_days: Type.Optional(editable.trial_period_days),
  },
  { additionalProperties: false },
);
export type CreatePlanBody = Static<typeof CreatePlanBody>;

export const UpdatePlanBody = Type.Partial(Type.Object(editable), {
  additionalProperties: false,
  minProperties: 1,
});
export type UpdatePlanBody = Static<typeof UpdatePlanBody>;
