/**
 * Partner routes: /api/v1/campaigns (docs/campaigns.md). Recipients come as JSON or as a CSV file
 * (multipart/form-data, ./upload.ts); either way every row is checked and stored, or none is.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { tenantOf } from '../core/http/auth.js';
import {
  DataEnvelope,
  errorResponses,
  IdempotencyKeyHeader,
  ListEnvelope,
  PARTNER_ERRORS,
  resourceIdParam,
} from '../core/http/schemas.js';
import { answerRecorder, locatedAnswer, sendAnswer } from '../core/idempotency/answer.js';
import { refuseWithEveryIssue } from './body-issues.js';
import { RESULT_COLUMNS } from './results.js';
import {
  AddRecipientsBody,
  Campaign,
  CampaignWithImport,
  CreateCampaignBody,
  ListCampaignsQuery,
  ListRecipientsQuery,
  Recipient,
  RetryAnswer,
} from './schemas.js';
import { type CampaignService, jsonRows } from './service.js';
import { registerUploads, uploadedRows } from './upload.js';

const CampaignIdParam = resourceIdParam('The campaign’s id.', 'cmp_3kTmd8Qw1ZbXcV5nR7pL2yHs');
/** 10,000 recipients with names, emails and some context fit comfortably. */
const UPLOAD_LIMIT = 8 * 1024 * 1024;

const TRANSITIONS = [
  [
    'start',
    'startCampaign',
    'Start a campaign',
    'A draft or scheduled campaign starts now (`campaign.started`).',
  ],
  [
    'pause',
    'pauseCampaign',
    'Pause a campaign',
    'A running campaign stops placing calls (`pause_reason: manual`, `campaign.paused`); calls under way finish. A campaign paused by itself becomes paused by hand: it no longer resumes alone.',
  ],
  ['resume', 'resumeCampaign', 'Resume a campaign', 'A paused campaign runs again.'],
  [
    'cancel',
    'cancelCampaign',
    'Cancel a campaign',
    'Every recipient not yet called is canceled; calls under way finish. Refused for a completed or canceled campaign.',
  ],
] as const;

export async function campaignRoutes(
  fastify: FastifyInstance,
  { campaigns, publicBaseUrl }: { campaigns: CampaignService; publicBaseUrl: string },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  await registerUploads(fastify, UPLOAD_LIMIT);
  // Every offending field at once (the create and add-recipients routes take their schema's issues).
  fastify.addHook('preHandler', refuseWithEveryIssue);
  const created = locatedAnswer<CampaignWithImport>(201, publicBaseUrl, 'campaigns');
  const uploadErrors = [
    ...PARTNER_ERRORS.filter((status) => status !== 422),
    404,
    [409, ['conflict', 'idempotency_key_reuse']] as [number, ('conflict' | 'idempotency_key_reuse')[]],
    [422, ['validation_failed']] as [number, 'validation_failed'[]],
  ];

  app.post(
    '/campaigns',
    {
      bodyLimit: UPLOAD_LIMIT,
      config: { scope: 'calls:write', idempotent: true },
      attachValidation: true,
      schema: {
        operationId: 'createCampaign',
        summary: 'Create a campaign',
        description: [
          'A list of recipients an agent of the tenant calls. JSON (`recipients`), or `multipart/form-data` with the same fields as form fields (`calling_hours` and `retry` as JSON text) and the list as a CSV file in the field `file` (a header row with `phone`; `name` and `email` columns are used as such, every other column goes into the context).',
          'Up to 10,000 recipients per request (more with POST …/{id}/recipients). A number that is not a phone number, is on the do-not-call list or repeats one already in the campaign refuses only its row: the answer counts them by reason and lists each with its line. A malformed row (an email, a context) refuses the whole request (422, its line in the issue); nothing is stored then.',
          'Without `scheduled_at` the campaign is a `draft` until POST …/start; with it, `scheduled` and started at that time.',
        ].join('\n\n'),
        tags: ['Campaigns'],
        headers: IdempotencyKeyHeader,
        body: CreateCampaignBody,
        response: {
          201: {
            ...DataEnvelope(CampaignWithImport, 'The campaign and what became of each row.'),
            headers: { Location: Type.String({ format: 'uri', description: 'URL of the campaign.' }) },
          },
          ...errorResponses(...uploadErrors),
        },
      },
    },
    async (request, reply) => {
      const recorder = answerRecorder(request.idempotency, created);
      const { recipients, ...input } = request.body;
      const rows = uploadedRows(request) ?? jsonRows(recipients);
      const campaign = await campaigns.create(tenantOf(request), input, rows, recorder);
      return sendAnswer(reply, created(campaign));
    },
  );

  app.post(
    '/campaigns/:id/recipients',
    {
      bodyLimit: UPLOAD_LIMIT,
      config: { scope: 'calls:write', idempotent: true },
      attachValidation: true,
      schema: {
        operationId: 'addCampaignRecipients',
        summary: 'Add recipients to a campaign',
        description:
          'Up to 10,000 more recipients, as JSON or as a CSV file (`multipart/form-data`, field `file`), checked as at creation; a number the campaign already holds is refused as a duplicate. 409 once the campaign is completed or canceled.',
        tags: ['Campaigns'],
        headers: IdempotencyKeyHeader,
        params: CampaignIdParam,
        body: AddRecipientsBody,
        response: {
          201: DataEnvelope(CampaignWithImport, 'The campaign and what became of each row.'),
          ...errorResponses(...uploadErrors),
        },
      },
    },
    async (request, reply) => {
      const recorder = answerRecorder(request.idempotency, (campaign: CampaignWithImport) => ({
        status: 201,
        body: { data: campaign },
        headers: {},
      }));
      const rows = uploadedRows(request) ?? jsonRows(request.body.recipients);
      const campaign = await campaigns.addRecipients(tenantOf(request), request.params.id, rows, recorder);
      return reply.code(201).send({ data: campaign });
    },
  );

  app.get(
    '/campaigns',
    {
      config: { scope: 'calls:read' },
      schema: {
        operationId: 'listCampaigns',
        summary: 'List campaigns',
        description: 'The tenant’s campaigns, newest first (ties broken by id), with their counts.',
        tags: ['Campaigns'],
        querystring: ListCampaignsQuery,
        response: {
          200: ListEnvelope(Campaign, 'A page of campaigns.'),
          ...errorResponses(...PARTNER_ERRORS),
        },
      },
    },
    async (request) => campaigns.list(tenantOf(request), request.query),
  );

  app.get(
    '/campaigns/:id',
    {
      config: { scope: 'calls:read' },
      schema: {
        operationId: 'getCampaign',
        summary: 'Get a campaign',
        description:
          'The campaign with its recipients counted by status and by the outcome of their calls, the minutes billed, and when it started and finished.',
        tags: ['Campaigns'],
        params: CampaignIdParam,
        response: { 200: DataEnvelope(Campaign, 'The campaign.'), ...errorResponses(...PARTNER_ERRORS, 404) },
      },
    },
    async (request) => ({ data: await campaigns.get(tenantOf(request), request.params.id) }),
  );

  app.get(
    '/campaigns/:id/recipients',
    {
      config: { scope: 'calls:read' },
      schema: {
        operationId: 'listCampaignRecipients',
        summary: 'List a campaign’s recipients',
        description: 'In upload order, each with its status, its latest call and that call’s outcome.',
        tags: ['Campaigns'],
        params: CampaignIdParam,
        querystring: ListRecipientsQuery,
        response: {
          200: ListEnvelope(Recipient, 'A page of recipients.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => campaigns.recipients(tenantOf(request), request.params.id, request.query),
  );

  app.get(
    '/campaigns/:id/results.csv',
    {
      config: { scope: 'calls:read' },
      schema: {
        operationId: 'exportCampaignResults',
        summary: 'Export a campaign’s results as CSV',
        description: `Every recipient in upload order, one line each (RFC 4180, UTF-8, CRLF), with the columns ${RESULT_COLUMNS.map((c) => `\`${c}\``).join(', ')}. Cells a spreadsheet would run as a formula are prefixed with an apostrophe.`,
        tags: ['Campaigns'],
        params: CampaignIdParam,
        response: {
          200: {
            description: 'The results as CSV.',
            content: { 'text/csv': { schema: Type.String() } },
          },
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request, reply) => {
      const csv = await campaigns.resultsCsv(tenantOf(request), request.params.id);
      return reply
        .type('text/csv; charset=utf-8')
        .header('content-disposition', `attachment; filename="${request.params.id}-results.csv"`)
        .send(csv);
    },
  );

  for (const [action, operationId, summary, description] of TRANSITIONS) {
    app.post(
      `/campaigns/:id/${action}`,
      {
        config: { scope: 'calls:write' },
        schema: {
          operationId,
          summary,
          description: `${description} 409 conflict from any other state (details.status names the current one).`,
          tags: ['Campaigns'],
          params: CampaignIdParam,
          response: {
            200: DataEnvelope(Campaign, 'The campaign after the change.'),
            ...errorResponses(...PARTNER_ERRORS, 404, [409, ['conflict']]),
          },
        },
      },
      async (request) => ({ data: await campaigns[action](tenantOf(request), request.params.id) }),
    );
  }

  app.post(
    '/campaigns/:id/retry',
    {
      config: { scope: 'calls:write' },
      schema: {
        operationId: 'retryCampaign',
        summary: 'Retry unsuccessful recipients',
        description:
          'Recipients whose last call ended `no_answer` or `failed` are called again (a new call each). A completed campaign runs again (`campaign.started`); a paused one retries once resumed. 409 for a draft, scheduled or canceled campaign.',
        tags: ['Campaigns'],
        params: CampaignIdParam,
        response: {
          200: DataEnvelope(RetryAnswer, 'The campaign and how many recipients will be called again.'),
          ...errorResponses(...PARTNER_ERRORS, 404, [409, ['conflict']]),
        },
      },
    },
    async (request) => ({ data: await campaigns.retry(tenantOf(request), request.params.id) }),
  );
}
