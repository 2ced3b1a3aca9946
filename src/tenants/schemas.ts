import { type Static, Type } from '@sinclair/typebox';
import { PageQuery, SortOrder } from '../core/db/pagination.js';
import { Nullable, Timestamp } from '../core/http/schemas.js';

/** The partner API's rate limit per API key of the tenant (src/rate-limits applies it). */
export const TenantRateLimit = Type.Object(
  {
    requests_per_second: Type.Integer({
      minimum: 1,
      maximum: 100_000,
      description: 'Steady rate of each API key of the tenant (token bucket refill).',
    }),
    burst: Type.Integer({
      minimum: 1,
      maximum: 1_000_000,
      description: 'Requests each key may send at once.',
    }),
  },
  {
    additionalProperties: false,
    description: 'Partner API limit per API key of the tenant; default 100 requests/s with bursts of 200.',
  },
);
export type TenantRateLimit = Static<typeof TenantRateLimit>;

export const EmailSettingsInput = Type.Object(
  {
    smtp_url: Type.String({
      minLength: 1,
      maxLength: 2000,
      description: 'smtp:// or smtps:// URL, user and password in the URL.',
      examples: ['smtps://mailer:secret@smtp.example.com:465'],
    }),
    from: Type.String({
      minLength: 3,
      maxLength: 320,
      description: 'Sender: an address, optionally with a display name.',
    }),
  },
  { additionalProperties: false },
);
export type EmailSettingsInput = Static<typeof EmailSettingsInput>;

const MaxConcurrentCalls = Type.Integer({
  minimum: 1,
  maximum: 1_000_000,
  description: 'Calls of the whole tenant dialling or in progress at once; more wait queued.',
});

const LowBalanceMinutes = Type.Integer({
  minimum: 1,
  maximum: 1_000_000,
  description: 'A user’s credit balance crossing below this many minutes sends the `credits.low` event.',
});

/** A connected Stripe account (Stripe Connect), e.g. `acct_1Nv0FGQ9RKHgCVdK`. */
export const ProcessorAccountId = Type.String({
  pattern: '^acct_[A-Za-z0-9]{1,255}$',
  description:
    'The agency’s connected Stripe account: every processor object of the tenant lives there (the platform key plus ' +
    'the Stripe-Account header). null: the platform’s own account. Changes only while the tenant has no customers, ' +
    'prices or subscriptions at the processor (409 otherwise).',
  examples: ['acct_1Nv0FGQ9RKHgCVdK'],
});

/** The platform's cut of what the agency's clients pay, in percent. */
export const ApplicationFeePercent = Type.Number({
  exclusiveMinimum: 0,
  maximum: 100,
  description:
    'The platform’s cut, in percent with at most two decimals: on subscriptions created and top-up charges made ' +
    'after it is set, with a connected account only. null: none.',
  examples: [2.5],
});

/** The tenant owner's form in the console: the account only (the fee is the operator's). */
export const ProcessorAccountInput = Type.Object(
  { processor_account_id: Nullable(ProcessorAccountId) },
  { additionalProperties: false },
);
export type ProcessorAccountInput = Static<typeof ProcessorAccountInput>;

export const Tenant = Type.Object(
  {
    id: Type.String(),
    name: Type.String(),
    email: Nullable(
      Type.Object(
        {
          smtp_url: Type.String({ description: 'The SMTP URL without its password.' }),
          from: Type.String(),
        },
        { additionalProperties: false },
      ),
    ),
    /** The partner API limit in force for each key (the default unless set by PATCH). */
    rate_limit: TenantRateLimit,
    max_concurrent_calls: Nullable(
      Type.Integer({
        minimum: 1,
        description: 'Calls of the whole tenant dialling or in progress at once; null: no tenant-wide cap.',
      }),
    ),
    low_balance_minutes: Nullable(
      Type.Integer({
        minimum: 1,
        description: 'A user’s balance crossing below this many minutes sends `credits.low`; null: never.',
      }),
    ),
    processor_account_id: Nullable(ProcessorAccountId),
    application_fee_percent: Nullable(ApplicationFeePercent),
    suspended_at: Nullable(
      Type.String({
        format: 'date-time',
        description:
          'When the operator suspended the tenant; null: active. While suspended, its keys, webhooks, console and portal are refused.',
      }),
    ),
    suspended_reason: Nullable(
      Type.String({ description: 'The operator’s note on the suspension (never shown to the agency).' }),
    ),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);
export type Tenant = Static<typeof Tenant>;

export const CreateTenantBody = Type.Object(
  { name: Type.String({ minLength: 1, maxLength: 200 }), email: Type.Optional(EmailSettingsInput) },
  { additionalProperties: false },
);
export type CreateTenantBody = Static<typeof CreateTenantBody>;

export const UpdateTenantBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    email: Type.Optional(Nullable(EmailSettingsInput)),
    /** null restores the default partner rate limit. */
    rate_limit: Type.Optional(Nullable(TenantRateLimit)),
    /** A tenant-wide cap on calls at once (more wait queued); null removes it. */
    max_concurrent_calls: Type.Optional(Nullable(MaxConcurrentCalls)),
    /** The `credits.low` threshold; null: no such events. */
    low_balance_minutes: Type.Optional(Nullable(LowBalanceMinutes)),
    /** The connected Stripe account; null: the platform's own. 409 once the tenant has processor objects. */
    processor_account_id: Type.Optional(Nullable(ProcessorAccountId)),
    /** The platform's cut in percent; null: none. May change at any time. */
    application_fee_percent: Type.Optional(Nullable(ApplicationFeePercent)),
  },
  { additionalProperties: false },
);
export type UpdateTenantBody = Static<typeof UpdateTenantBody>;

export const ListTenantsQuery = Type.Object({
  ...PageQuery,
  sort_by: Type.Union([Type.Literal('created_at'), Type.Literal('name')], { default: 'created_at' }),
  sort_order: SortOrder,
});
export type ListTenantsQuery = Static<typeof ListTenantsQuery>;

/** POST /admin/v1/tenants/{id}/suspend: an optional note for the operator's own records. */
export const SuspendTenantBody = Type.Object(
  { reason: Type.Optional(Type.String({ minLength: 1, maxLength: 500 })) },
  { additionalProperties: false },
);
export type SuspendTenantBody = Static<typeof SuspendTenantBody>;
