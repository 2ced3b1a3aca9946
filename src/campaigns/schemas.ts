import { type Static, Type } from '@sinclair/typebox';
import { CallingHours, RetryPolicy } from '../agents/settings.js';
import { PageQuery } from '../core/db/pagination.js';
import { Nullable, Timestamp } from '../core/http/schemas.js';

/** Recipients one request may add (create or POST …/recipients). */
export const MAX_RECIPIENTS_PER_REQUEST = 10_000;

export const CAMPAIGN_STATUSES = [
  'draft',
  'scheduled',
  'running',
  'paused',
  'completed',
  'canceled',
] as const;
export type CampaignStatus = (typeof CAMPAIGN_STATUSES)[number];

export const PAUSE_REASONS = [
  'manual',
  'insufficient_credits',
  'tenant_balance_exhausted',
  'agent_unavailable',
] as const;
export type PauseReason = (typeof PAUSE_REASONS)[number];

export const RECIPIENT_STATUSES = ['pending', 'calling', 'done', 'skipped', 'canceled'] as const;
export type RecipientStatus = (typeof RECIPIENT_STATUSES)[number];

export const OUTCOMES = ['completed', 'no_answer', 'failed'] as const;
export type Outcome = (typeof OUTCOMES)[number];

export const REFUSAL_REASONS = ['invalid_number', 'do_not_call', 'duplicate'] as const;
export type RefusalReason = (typeof REFUSAL_REASONS)[number];

const enumOf = <T extends string>(values: readonly T[], title: string, description: string) =>
  Type.Unsafe<T>({ type: 'string', enum: [...values], title, description });

const CampaignStatusSchema = enumOf(
  CAMPAIGN_STATUSES,
  'CampaignStatus',
  'draft → (scheduled) → running ⇄ paused → completed; canceled from any state before completed.',
);
const PauseReasonSchema = enumOf(
  PAUSE_REASONS,
  'CampaignPauseReason',
  'manual: POST …/pause; the others pause the campaign by itself and it resumes by itself once they no longer hold.',
);
const RecipientStatusSchema = enumOf(
  RECIPIENT_STATUSES,
  'CampaignRecipientStatus',
  'pending: not called yet; calling: its call is under way; done: its call ended (see outcome); skipped: refused at dial time (skip_reason); canceled: the campaign was canceled first.',
);
const OutcomeSchema = enumOf(OUTCOMES, 'CampaignCallOutcome', 'How the recipient’s last call ended.');

const counts = <K extends string>(keys: readonly K[], description: string) =>
  Type.Object(
    Object.fromEntries(keys.map((key) => [key, Type.Integer({ minimum: 0, examples: [0] })])) as Record<
      K,
      ReturnType<typeof Type.Integer>
    >,
    { additionalProperties: false, description },
  );

const MaxConcurrent = Type.Integer({
  minimum: 1,
  maximum: 10_000,
  description:
    'Calls of this campaign queued, dialling or in progress at once (default 10: a campaign never turns its whole list into calls ahead of the balance); the agent’s own cap also holds.',
  examples: [5],
});

export const Campaign = Type.Object(
  {
    id: Type.String({ examples: ['cmp_3kTmd8Qw1ZbXcV5nR7pL2yHs'] }),
    agent_id: Type.String({ examples: ['agt_5Gh8jKl2Mn4Pq6Rs8Tv0Wx2Y'] }),
    name: Type.String({ examples: ['Spring renewals'] }),
    status: CampaignStatusSchema,
    pause_reason: Nullable(PauseReasonSchema),
    scheduled_at: Nullable(Timestamp),
    max_concurrent_calls: Nullable(MaxConcurrent),
    calling_hours: Nullable(CallingHours),
    retry: Nullable(RetryPolicy),
    recipients: counts([...RECIPIENT_STATUSES, 'total'], 'Recipients by status, and their total.'),
    outcomes: counts(OUTCOMES, 'Recipients by the outcome of their last call.'),
    minutes_used: Type.Integer({
      minimum: 0,
      description: 'Minutes billed for the campaign’s calls.',
      examples: [42],
    }),
    created_at: Timestamp,
    updated_at: Timestamp,
    started_at: Nullable(Timestamp),
    finished_at: Nullable({ ...Timestamp, description: 'When it completed or was canceled.' }),
  },
  { additionalProperties: false, title: 'Campaign' },
);
export type Campaign = Static<typeof Campaign>;

export const Refusal = Type.Object(
  {
    line: Type.Integer({
      minimum: 1,
      description:
        'JSON: the 1-based position in `recipients`; CSV: the line of the file (the header is line 1).',
      examples: [7],
    }),
    phone: Type.String({ examples: ['+1 415 555'] }),
    reason: enumOf(REFUSAL_REASONS, 'CampaignRefusalReason', 'Why the row was not stored.'),
  },
  { additionalProperties: false, title: 'CampaignRecipientRefusal' },
);
export type Refusal = Static<typeof Refusal>;

export const ImportReport = Type.Object(
  {
    accepted: Type.Integer({ minimum: 0, description: 'Rows stored.', examples: [998] }),
    refused: counts(REFUSAL_REASONS, 'Rows not stored, by reason.'),
    refusals: Type.Array(Refusal, { description: 'Every row not stored, in order.' }),
  },
  { additionalProperties: false, title: 'CampaignImport' },
);
export type ImportReport = Static<typeof ImportReport>;

export const CampaignWithImport = Type.Object(
  { ...Campaign.properties, import: ImportReport },
  { additionalProperties: false, title: 'CampaignWithImport' },
);
export type CampaignWithImport = Static<typeof CampaignWithImport>;

export const RecipientInput = Type.Object(
  {
    phone: Type.String({
      minLength: 1,
      maxLength: 64,
      description:
        'E.164 (`+14155550123`); spaces, dots, dashes, parentheses and a leading `00` are accepted and normalized. Anything else refuses the row (invalid_number), not the request.',
      examples: ['+14155550123'],
    }),
    name: Type.Optional(Type.String({ maxLength: 200, examples: ['Ada Lovelace'] })),
    email: Type.Optional(Type.String({ format: 'email', maxLength: 254, examples: ['ada@example.com'] })),
    context: Type.Optional(
      Type.Object(
        {},
        {
          additionalProperties: true,
          description:
            'Stored with the call; fills `{key}` placeholders. At most 200 keys, nested at most 8 levels.',
          examples: [{ product: 'solar panels' }],
        },
      ),
    ),
  },
  { additionalProperties: false, title: 'CampaignRecipientInput' },
);
export type RecipientInput = Static<typeof RecipientInput>;

const Recipients = Type.Array(RecipientInput, {
  maxItems: MAX_RECIPIENTS_PER_REQUEST,
  description: `At most ${MAX_RECIPIENTS_PER_REQUEST.toLocaleString('en-US')} per request.`,
});

export const CreateCampaignBody = Type.Object(
  {
    agent_id: Type.String({ minLength: 1, maxLength: 255, examples: ['agt_5Gh8jKl2Mn4Pq6Rs8Tv0Wx2Y'] }),
    name: Type.String({ minLength: 1, maxLength: 200, examples: ['Spring renewals'] }),
    recipients: Recipients,
    scheduled_at: Type.Optional({
      ...Timestamp,
      description: 'Starts by itself at this time (status `scheduled`); without it the campaign is a draft.',
    }),
    max_concurrent_calls: Type.Optional(MaxConcurrent),
    calling_hours: Type.Optional(CallingHours),
    retry: Type.Optional(RetryPolicy),
  },
  {
    title: 'CreateCampaignRequest',
    additionalProperties: false,
    examples: [
      {
        agent_id: 'agt_5Gh8jKl2Mn4Pq6Rs8Tv0Wx2Y',
        name: 'Spring renewals',
        recipients: [{ phone: '+14155550123', name: 'Ada Lovelace', context: { product: 'solar panels' } }],
        max_concurrent_calls: 5,
      },
    ],
  },
);
export type CreateCampaignBody = Static<typeof CreateCampaignBody>;

export const AddRecipientsBody = Type.Object(
  { recipients: Recipients },
  { title: 'AddCampaignRecipientsRequest', additionalProperties: false },
);
export type AddRecipientsBody = Static<typeof AddRecipientsBody>;

export const Recipient = Type.Object(
  {
    position: Type.Integer({
      minimum: 1,
      description: 'Order in the campaign (upload order).',
      examples: [12],
    }),
    line: Type.Integer({ minimum: 1, description: 'Where the row came from in its upload.', examples: [13] }),
    phone: Type.String({ examples: ['+14155550123'] }),
    name: Type.String({ examples: ['Ada Lovelace'] }),
    email: Nullable(Type.String({ examples: ['ada@example.com'] })),
    context: Type.Object({}, { additionalProperties: true }),
    status: RecipientStatusSchema,
    skip_reason: Nullable(Type.String({ examples: ['do_not_call'] })),
    call_id: Nullable(Type.String({ examples: ['call_7Yh2kLm9Qw3ZbXcV5nR8pT1s'] })),
    outcome: Nullable(OutcomeSchema),
    attempts: Type.Integer({ minimum: 0, description: 'Calls placed for this recipient.', examples: [1] }),
  },
  { additionalProperties: false, title: 'CampaignRecipient' },
);
export type Recipient = Static<typeof Recipient>;

export const ListCampaignsQuery = Type.Object({
  ...PageQuery,
  status: Type.Optional(CampaignStatusSchema),
});
export type ListCampaignsQuery = Static<typeof ListCampaignsQuery>;

export const ListRecipientsQuery = Type.Object({
  ...PageQuery,
  status: Type.Optional(RecipientStatusSchema),
});
export type ListRecipientsQuery = Static<typeof ListRecipientsQuery>;

export const RetryAnswer = Type.Object(
  {
    ...Campaign.properties,
    requeued: Type.Integer({
      minimum: 0,
      description: 'Recipients whose no_answer or failed call is dialled again.',
      examples: [3],
    }),
  },
  { additionalProperties: false, title: 'CampaignRetry' },
);
export type RetryAnswer = Static<typeof RetryAnswer>;
