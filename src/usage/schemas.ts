import { type Static, Type } from '@sinclair/typebox';
import { MONTH_PATTERN, Nullable, Timestamp } from '../core/http/schemas.js';

export const PERIOD_PATTERN = MONTH_PATTERN;

export const Period = Type.String({
  pattern: PERIOD_PATTERN,
  description: 'A calendar month in UTC, YYYY-MM (years 2000 to 2099). Default: the current month.',
  examples: ['2026-11'],
});

export const UsageQuery = Type.Object({
  user_id: Type.String({
    minLength: 1,
    maxLength: 255,
    description: 'The user whose usage to report.',
    examples: ['usr_3kTmd8Qw1ZbXcV5nR7pL2yHs'],
  }),
  period: Type.Optional(Period),
});
export type UsageQuery = Static<typeof UsageQuery>;

const minutes = (description: string, example: number) => Type.Integer({ description, examples: [example] });
const amount = (description: string, example: number) =>
  Type.Integer({ description: `${description} In the minor unit of the currency.`, examples: [example] });

export const UsageMinutes = Type.Object(
  {
    included: minutes('Minutes granted by the plan for periods that started in the month.', 100),
    used: minutes('Minutes debited by completed calls that ended in the month.', 148),
    topped_up: minutes('Minutes credited by top-ups in the month.', 30),
    overage: minutes(
      'Minutes beyond the balance settled in the month (at the end of a subscription period, when the balance was negative).',
      18,
    ),
    adjustments: minutes(
      'Every other ledger entry of the month (operator grants, the credit of an agency-billed upgrade).',
      0,
    ),
    balance: minutes(
      'The balance at the end of the month (now, for the current month): the sum of every ledger entry until then.',
      0,
    ),
  },
  { additionalProperties: false, title: 'UsageMinutes' },
);

export const UsageCalls = Type.Object(
  {
    completed: Type.Integer({ description: 'Calls answered and ended.', examples: [42] }),
    no_answer: Type.Integer({ description: 'Calls nobody answered.', examples: [7] }),
    failed: Type.Integer({ description: 'Calls the carrier could not place.', examples: [1] }),
    total: Type.Integer({ description: 'Every call that ended in the month.', examples: [50] }),
  },
  { additionalProperties: false, title: 'UsageCalls' },
);

export const UsageAmounts = Type.Object(
  {
    currency: Nullable(
      Type.String({
        description:
          'Lowercase ISO 4217 code: the plan’s of the user’s latest subscription; null when the user never subscribed and nothing was charged.',
        examples: ['usd'],
      }),
    ),
    top_ups: amount('Succeeded top-ups of the month.', 300),
    overage: amount('Overage settled in the month (minutes × the plan’s overage_rate).', 216),
    total: amount('top_ups + overage. Subscription fees are not included (see docs/usage.md).', 516),
  },
  { additionalProperties: false, title: 'UsageAmounts' },
);

export const UnsettledOverage = Type.Object(
  {
    id: Type.String({ description: 'The overage charge.', examples: ['ovg_7hQm2Lx9VbTc4RzN1pKd8sWe'] }),
    status: Type.Union([Type.Literal('unpaid'), Type.Literal('failed')], {
      description:
        'unpaid: the card on file was declined; the invoice stays open at the card processor. ' +
        'failed: the processor refused to bill it (e.g. the user has no customer there).',
      examples: ['unpaid'],
    }),
    amount: amount('minutes × the plan’s overage_rate.', 216),
    currency: Type.String({ description: 'Lowercase ISO 4217 code.', examples: ['usd'] }),
    message: Nullable(
      Type.String({ description: 'Why, in the processor’s words.', examples: ['Your card was declined.'] }),
    ),
    period_start: { ...Timestamp, description: 'The subscription period the minutes were used in.' },
    period_end: Timestamp,
  },
  { additionalProperties: false, title: 'UnsettledOverage' },
);
export type UnsettledOverage = Static<typeof UnsettledOverage>;

export const Usage = Type.Object(
  {
    user_id: Type.String({ examples: ['usr_3kTmd8Qw1ZbXcV5nR7pL2yHs'] }),
    period: Type.Object(
      {
        key: Type.String({ description: 'The month, YYYY-MM.', examples: ['2026-11'] }),
        start: Timestamp,
        end: { ...Timestamp, description: 'Exclusive: the first instant of the next month.' },
      },
      { additionalProperties: false, title: 'UsagePeriod' },
    ),
    minutes: UsageMinutes,
    calls: UsageCalls,
    amounts: UsageAmounts,
    unsettled_overage: Type.Array(UnsettledOverage, {
      description:
        'Overage settled in the month that the card processor did not collect, oldest first (at most 100): a ' +
        'declined card (unpaid: still counted in amounts.overage) or a refused request (failed: not counted). ' +
        'Empty when everything was paid.',
    }),
  },
  { additionalProperties: false, title: 'Usage' },
);
export type Usage = Static<typeof Usage>;
