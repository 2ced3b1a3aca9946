/**
 * Partner routes: /api/v1/calls (platform contract §1). Placing a call here follows the webhook's
 * rules (the same service path), answered in the API's conventions: strict bodies (422
 * validation_failed), a do-not-call number 422 unprocessable_entity, Idempotency-Key honoured.
 */

import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { tenantOf } from '../core/http/auth.js';
import { sendJsonText } from '../core/http/json-text.js';
import {
  DataEnvelope,
  errorResponses,
  IdempotencyKeyHeader,
  ListEnvelope,
  PARTNER_ERRORS,
  resourceIdParam,
} from '../core/http/schemas.js';
import { answerRecorder, locatedAnswer, sendAnswer } from '../core/idempotency/answer.js';
import { CallDetail, CallListItem, CreateCallBody, ListPartnerCallsQuery } from './schemas.js';
import type { CallService } from './service.js';

const CallIdParam = resourceIdParam('The call’s id.', 'call_7Yh2kLm9Qw3ZbXcV5nR8pT1s');

export async function callRoutes(
  fastify: FastifyInstance,
  { calls, publicBaseUrl }: { calls: CallService; publicBaseUrl: string },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  const queued = locatedAnswer<CallDetail>(202, publicBaseUrl, 'calls');

  app.post(
    '/calls',
    {
      config: { scope: 'calls:write', idempotent: true },
      schema: {
        operationId: 'createCall',
        summary: 'Place a call',
        description: [
          'Makes an agent of the caller’s tenant place one outbound call to `phone` with its published version, exactly as its webhook would: the same refusals (404 for an agent that is not in the tenant or deleted, 409 `agent_not_published`, 409 `agent_unavailable`, 402 `tenant_balance_exhausted`, 402 `insufficient_credits`), except that invalid fields are 422 `validation_failed` and a number on the tenant’s do-not-call list is 422 `unprocessable_entity`.',
          'Answers 202 with the queued call once it is durably stored. The agent’s call controls apply: outside its calling hours the call waits with `scheduled_for`; over a concurrency cap it waits queued until a slot frees. With an Idempotency-Key a retry answers the first 202 again and places no second call.',
        ].join('\n\n'),
        tags: ['Calls'],
        headers: IdempotencyKeyHeader,
        body: CreateCallBody,
        response: {
          202: {
            ...DataEnvelope(CallDetail, 'The call is queued.'),
            headers: {
              Location: Type.String({
                format: 'uri',
                description: 'URL of the call (GET /api/v1/calls/{id}).',
              }),
            },
          },
          ...errorResponses(
            ...PARTNER_ERRORS.filter((status) => status !== 422),
            402,
            404,
            [409, ['agent_not_published', 'agent_unavailable', 'conflict', 'idempotency_key_reuse']],
            [422, ['validation_failed', 'unprocessable_entity']],
          ),
        },
      },
    },
    async (request, reply) => {
      const recorder = answerRecorder(request.idempotency, queued);
      const call = await calls.create(tenantOf(request), request.body, recorder);
      return sendAnswer(reply, queued(call));
    },
  );

  app.get(
    '/calls',
    {
      config: { scope: 'calls:read' },
      schema: {
        operationId: 'listCalls',
        summary: 'List calls',
        description:
          'Calls of the caller’s tenant, newest first by default (`sort_order=asc` for oldest first), ties broken by id. Page-based: calls placed between fetches may shift items by one position. `pagination.total` is exact when fewer than 10,000 calls match past the end of the page, otherwise a lower bound (that end plus 10,000); `has_more` is always exact.',
        tags: ['Calls'],
        querystring: ListPartnerCallsQuery,
        response: {
          200: ListEnvelope(CallListItem, 'A page of calls.'),
          ...errorResponses(...PARTNER_ERRORS),
        },
      },
    },
    // The page comes as JSON text from the database, each field named by the statement
    // (CallListItem): sent as it is.
    async (request, reply) =>
      sendJsonText(reply, await calls.listForTenantJson(tenantOf(request), request.query)),
  );

  app.get(
    '/calls/:id',
    {
      config: { scope: 'calls:read' },
      schema: {
        operationId: 'getCall',
        summary: 'Get a call',
        description:
          'The whole call: its status, numbers, context, rendered prompt and welcome message, times, billing, outcome, and `events`, the timeline of its status changes (each retry’s re-queue included).',
        tags: ['Calls'],
        params: CallIdParam,
        response: {
          200: DataEnvelope(CallDetail, 'The call.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => ({ data: await calls.getForTenant(tenantOf(request), request.params.id) }),
  );
}
