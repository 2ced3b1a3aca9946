import { type Static, Type } from '@sinclair/typebox';
import { PageQuery } from '../core/db/pagination.js';
import { MONTH_PATTERN, Nullable, Timestamp } from '../core/http/schemas.js';

const Currency = Type.String({
  pattern: '^[a-z]{3}$',
  description: 'Lowercase ISO 4217 code.',
  examples: ['usd'],
});
const WholesaleRate = Type.Number({
  minimum: 0,
  maximum: 1_000_000,
  description: 'Per minute, major unit of the currency; at most 6 decimal places.',
  examples: [0.045],
});
const Minutes = Type.Integer({ minimum: -2_000_000_000, maximum: 2_000_000_000 });

export const AutoRefill = Type.Object(
  {
    threshold_minutes: Type.Integer({
      minimum: 0,
      maximum: 100_000_000,
      description: 'A call that takes the balance below this starts a refill.',
      examples: [500],
    }),
    refill_minutes: Type.Integer({
      minimum: 1,
      maximum: 100_000_000,
      description: 'Minutes bought per refill, at the wallet’s wholesale_rate.',
      examples: [5000],
    }),
  },
  { additionalProperties: false, title: 'WalletAutoRefill' },
);

export const Wallet = Type.Object(
  {
    tenant_id: Type.String({ examples: ['ten_4Fq8mR2vX9cB1nK7pL0sD3fH'] }),
    metered: Type.Boolean({
      description:
        'False: the tenant has no wallet; its calls debit nothing here and are never refused for it.',
    }),
    balance_minutes: Nullable(Type.Integer({ description: 'May be negative.', examples: [12_000] })),
    wholesale_rate: Nullable(WholesaleRate),
    currency: Nullable(Currency),
    auto_refill: Nullable(AutoRefill),
    refill_card: Nullable(
      Type.Object(
        { customer_id: Type.String(), payment_method_id: Type.String() },
        { additionalProperties: false, title: 'WalletRefillCard' },
      ),
    ),
    last_refill_error: Nullable(
      Type.String({ description: 'The last refill’s decline; null once one succeeds.' }),
    ),
    last_refill_at: Nullable(Timestamp),
    created_at: Nullable(Timestamp),
    updated_at: Nullable(Timestamp),
  },
  { additionalProperties: false, title: 'TenantWallet' },
);
export type Wallet = Static<typeof Wallet>;

export const PutWalletBody = Type.Object(
  {
    wholesale_rate: WholesaleRate,
    currency: Currency,
    auto_refill: Type.Optional(Nullable(AutoRefill)),
  },
  { additionalProperties: false, title: 'PutWalletBody' },
);
export type PutWalletBody = Static<typeof PutWalletBody>;

export const WalletCreditBody = Type.Object(
  {
    minutes: Type.Integer({
      minimum: -10_000_000,
      maximum: 10_000_000,
      description: 'Not 0. Positive: a credit; negative: an adjustment that takes minutes back.',
      examples: [10_000],
    }),
    reason: Type.Optional(Type.String({ maxLength: 500, description: 'Kept as the entry’s note.' })),
  },
  { additionalProperties: false, title: 'WalletCreditBody' },
);
export type WalletCreditBody = Static<typeof WalletCreditBody>;

export const WalletLedgerEntry = Type.Object(
  {
    id: Type.String({ examples: ['wled_9Xc2mQ7vT1bB4nK8pL0sD3fH'] }),
    minutes: Minutes,
    wholesale_rate: WholesaleRate,
    reason: Type.Union(
      [Type.Literal('call'), Type.Literal('credit'), Type.Literal('refill'), Type.Literal('adjustment')],
      { title: 'WalletLedgerReason' },
    ),
    reference: Nullable(Type.String({ examples: ['call:call_2bQ8mR4vX7cB1nK9pL0sD3fH'] })),
    user_id: Nullable(Type.String()),
    call_id: Nullable(Type.String()),
    note: Nullable(Type.String()),
    created_at: Timestamp,
  },
  { additionalProperties: false, title: 'WalletLedgerEntry' },
);
export type WalletLedgerEntry = Static<typeof WalletLedgerEntry>;

export const WalletCredit = Type.Object(
  {
    entry: WalletLedgerEntry,
    balance_minutes: Type.Integer({ description: 'The wallet’s balance after the entry.' }),
  },
  { additionalProperties: false, title: 'WalletCredit' },
);
export type WalletCredit = Static<typeof WalletCredit>;

export const WalletLedgerQuery = Type.Object(PageQuery, { additionalProperties: false });
export type WalletLedgerQuery = Static<typeof WalletLedgerQuery>;

export const WalletUsageQuery = Type.Object(
  {
    period: Type.String({
      pattern: MONTH_PATTERN,
      description: 'A UTC calendar month, YYYY-MM (years 2000 to 2099).',
      examples: ['2026-11'],
    }),
  },
  { additionalProperties: false },
);
export type WalletUsageQuery = Static<typeof WalletUsageQuery>;

export const WalletUsage = Type.Object(
  {
    tenant_id: Type.String(),
    period: Type.String({ examples: ['2026-11'] }),
    period_start: Timestamp,
    period_end: Timestamp,
    metered: Type.Boolean(),
    calls: Type.Integer({ minimum: 0, description: 'Billed calls debited in the period.' }),
    minutes: Type.Integer({ minimum: 0, description: 'Wholesale minutes those calls used.' }),
    amount: Type.Integer({
      minimum: 0,
      description: 'Their cost: minutes × the rate at each call, in the currency’s minor unit.',
      examples: [5400],
    }),
    currency: Nullable(Currency),
  },
  { additionalProperties: false, title: 'WalletUsage' },
);
export type WalletUsage = Static<typeof WalletUsage>;

export const WalletPaymentMethodBody = Type.Object(
  { token: Type.String({ minLength: 1, maxLength: 255, description: 'The processor’s card token.' }) },
  { additionalProperties: false, title: 'WalletPaymentMethodBody' },
);
export type WalletPaymentMethodBody = Static<typeof WalletPaymentMethodBody>;

/** The `wallets.refill` job: what one auto-refill charges (built in SQL when the balance drops below the threshold). */
export const RefillPlan = Type.Object({
  minutes: Type.Number(),
  rate: Type.Number(),
  currency: Type.String(),
  customer_id: Type.String(),
  payment_method_id: Type.String(),
});
export type RefillPlan = Static<typeof RefillPlan>;
