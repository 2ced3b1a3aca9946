/** Partner routes: /api/v1/users/{id}/top-ups. */
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
import { answerRecorder, sendAnswer } from '../core/idempotency/answer.js';
import type { StoredResponse } from '../core/idempotency/store.js';
import { CreateTopUpBody, ListTopUpsQuery, TopUp } from './schemas.js';
import type { TopUpService } from './service.js';

const UserIdParam = resourceIdParam('The user’s id.', 'usr_3kTmd8Qw1ZbXcV5nR7pL2yHs');
const TopUpParams = Type.Object({
  ...UserIdParam.properties,
  top_up_id: Type.String({
    minLength: 1,
    maxLength: 255,
    description: 'The top-up’s id.',
    examples: ['top_9xQ2mR7vK1cB4nT8pL0sD3fH'],
  }),
});

export async function topUpRoutes(
  fastify: FastifyInstance,
  { topUps, publicBaseUrl }: { topUps: TopUpService; publicBaseUrl: string },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  // The answer, sent and (with an Idempotency-Key) stored for replay with the credit it reports.
  const created = (topUp: TopUp): StoredResponse => ({
    status: 201,
    body: { data: topUp },
    headers: {
      location: `${publicBaseUrl}/api/v1/users/${encodeURIComponent(topUp.user_id)}/top-ups/${encodeURIComponent(topUp.id)}`,
    },
  });

  app.post(
    '/users/:id/top-ups',
    {
      config: { scope: 'subscriptions:write', idempotent: true },
      schema: {
        operationId: 'createTopUp',
        summary: 'Top up a user’s minutes',
        description:
          'Adds minutes to the user’s credit balance, priced at minutes × topup_rate of the plan of the user’s current ' +
          '(active or trialing) subscription, in the plan’s currency. Processor-billed plans: the card on file is charged ' +
          'at once, then the minutes are credited; a declined card answers 422 unprocessable_entity, credits nothing and ' +
          'lists the top-up as declined (error.details.top_up_id). Agency-billed plans: credited at once and recorded for ' +
          'the agency’s own invoicing. 422 unprocessable_entity also when the user is blocked, has no current subscription, ' +
          'or (processor) has no card on file. The Idempotency-Key is forwarded to the processor: a retry charges once; ' +
          '503 means the processor did not answer, retry with the same key.',
        tags: ['Top-ups'],
        headers: IdempotencyKeyHeader,
        params: UserIdParam,
        body: CreateTopUpBody,
        response: {
          201: DataEnvelope(
            TopUp,
            'The minutes were credited (or, with Idempotent-Replayed, the original answer is replayed).',
          ),
          ...errorResponses(...PARTNER_ERRORS, 404, 409),
        },
      },
    },
    async (request, reply) => {
      const recorder = answerRecorder(request.idempotency, created);
      const topUp = await topUps.create(tenantOf(request), request.params.id, request.body, recorder);
      return sendAnswer(reply, created(topUp));
    },
  );

  app.get(
    '/users/:id/top-ups',
    {
      config: { scope: 'subscriptions:read' },
      schema: {
        operationId: 'listTopUps',
        summary: 'List a user’s top-ups',
        description: 'The user’s top-ups, succeeded and declined, newest first (ties broken by id).',
        tags: ['Top-ups'],
        params: UserIdParam,
        querystring: ListTopUpsQuery,
        response: {
          200: ListEnvelope(TopUp, 'A page of top-ups.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => topUps.list(tenantOf(request), request.params.id, request.query),
  );

  app.get(
    '/users/:id/top-ups/:top_up_id',
    {
      config: { scope: 'subscriptions:read' },
      schema: {
        operationId: 'getTopUp',
        summary: 'Get a top-up',
        description:
          'One top-up of the user (the target of the Location header of POST /users/{id}/top-ups).',
        tags: ['Top-ups'],
        params: TopUpParams,
        response: { 200: DataEnvelope(TopUp, 'The top-up.'), ...errorResponses(...PARTNER_ERRORS, 404) },
      },
    },
    async (request) => ({
      data: await topUps.get(tenantOf(request), request.params.id, request.params.top_up_id),
    }),
  );
}
