/** Partner routes: /api/v1/subscriptions. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
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
import type { StoredResponse } from '../core/idempotency/store.js';
import { ChangePlanBody, CreateSubscriptionBody, ListSubscriptionsQuery, Subscription } from './schemas.js';
import type { SubscriptionResult, SubscriptionService } from './service.js';

const SubscriptionIdParam = resourceIdParam('The subscription’s id.', 'sub_4rT9kQ2mXv7bN1cL8pZ0sD3f');

export async function subscriptionRoutes(
  fastify: FastifyInstance,
  { subscriptions, publicBaseUrl }: { subscriptions: SubscriptionService; publicBaseUrl: string },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  // The answers, sent and (with an Idempotency-Key) stored for replay. POST answers 201 with
  // Location even when it switched the user's current subscription (docs/api.md).
  const located = locatedAnswer<SubscriptionResult['subscription']>(201, publicBaseUrl, 'subscriptions');
  const subscribed = ({ subscription }: SubscriptionResult): StoredResponse => located(subscription);
  const changed = ({ subscription }: SubscriptionResult): StoredResponse => ({
    status: 200,
    body: { data: subscription },
    headers: {},
  });

  app.post(
    '/subscriptions',
    {
      config: { scope: 'subscriptions:write', idempotent: true },
      schema: {
        operationId: 'createSubscription',
        summary: 'Subscribe a user to a plan',
        description:
          'Subscribes the user to an active plan of the caller’s catalog. Processor-billed plans need a payment method on file; ' +
          'without a trial the first invoice is charged at once, and a declined charge gives status inactive. ' +
          'If the user already has an active or trialing subscription on another plan, that subscription changes plan ' +
          'with the rules of PATCH /subscriptions/{id}/plan (the answer is then that subscription, or for an agency downgrade the new one). ' +
          'The Idempotency-Key is forwarded to the processor, so a retry bills once.',
        tags: ['Subscriptions'],
        headers: IdempotencyKeyHeader,
        body: CreateSubscriptionBody,
        response: { 201: DataEnvelope(Subscription), ...errorResponses(...PARTNER_ERRORS, 404, 409) },
      },
    },
    async (request, reply) => {
      const recorder = answerRecorder(request.idempotency, subscribed);
      const result = await subscriptions.create(tenantOf(request), request.body, recorder);
      return sendAnswer(reply, subscribed(result));
    },
  );

  app.get(
    '/subscriptions',
    {
      config: { scope: 'subscriptions:read' },
      schema: {
        operationId: 'listSubscriptions',
        summary: 'List subscriptions',
        description: 'Subscriptions of the caller’s tenant, sorted by created_at (newest first by default).',
        tags: ['Subscriptions'],
        querystring: ListSubscriptionsQuery,
        response: { 200: ListEnvelope(Subscription), ...errorResponses(...PARTNER_ERRORS) },
      },
    },
    async (request) => subscriptions.list(tenantOf(request), request.query),
  );

  app.get(
    '/subscriptions/:id',
    {
      config: { scope: 'subscriptions:read' },
      schema: {
        operationId: 'getSubscription',
        summary: 'Get a subscription',
        description: 'One subscription of the caller’s tenant.',
        tags: ['Subscriptions'],
        params: SubscriptionIdParam,
        response: { 200: DataEnvelope(Subscription), ...errorResponses(...PARTNER_ERRORS, 404) },
      },
    },
    async (request) => ({ data: await subscriptions.get(tenantOf(request), request.params.id) }),
  );

  app.post(
    '/subscriptions/:id/cancel',
    {
      config: { scope: 'subscriptions:write' },
      schema: {
        operationId: 'cancelSubscription',
        summary: 'Cancel a subscription at the end of its period',
        description:
          'The user keeps the plan and its minutes until current_period_end, then the subscription is canceled and nothing more is billed (cancel_at_period_end becomes true). ' +
          'Processor-billed: the processor is told first (503 when it does not answer; retrying is safe). Agency-billed: a downgrade scheduled to follow is canceled too. ' +
          'A subscription that has not started yet is canceled at once. Repeating the request answers the same subscription; a canceled or inactive one is 422.',
        tags: ['Subscriptions'],
        params: SubscriptionIdParam,
        response: {
          200: DataEnvelope(Subscription, 'The subscription, now ending at its period’s end.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => ({
      data: await subscriptions.cancelAtPeriodEnd(tenantOf(request), request.params.id),
    }),
  );

  app.patch(
    '/subscriptions/:id/plan',
    {
      config: { scope: 'subscriptions:write', idempotent: true },
      schema: {
        operationId: 'changeSubscriptionPlan',
        summary: 'Change a subscription’s plan',
        description:
          'Moves the subscription to another active plan with the same provider and currency. A target monthly_price greater ' +
          'than or equal to the current one is an upgrade, lower a downgrade. Processor: an upgrade is invoiced at once with ' +
          'proration (a declined charge leaves status past_due); a downgrade changes the plan at once and credits the next invoice. ' +
          'Agency: an upgrade changes the plan and grants the difference of included minutes for the current period; a downgrade ' +
          'ends the current subscription on the last day of the UTC month at 23:59 and answers the new subscription, which starts ' +
          "one minute later (status active, current_period_start in the future: scheduled, not yet the user's plan). Changing the " +
          'plan of a subscription with a scheduled downgrade again replaces the scheduled subscription, which then shows as inactive. ' +
          'Compare the returned plan_id and id with the request to see what happened.',
        tags: ['Subscriptions'],
        headers: IdempotencyKeyHeader,
        params: SubscriptionIdParam,
        body: ChangePlanBody,
        response: { 200: DataEnvelope(Subscription), ...errorResponses(...PARTNER_ERRORS, 404, 409) },
      },
    },
    async (request, reply) => {
      const recorder = answerRecorder(request.idempotency, changed);
      const result = await subscriptions.changePlan(
        tenantOf(request),
        request.params.id,
        request.body,
        recorder,
      );
      return sendAnswer(reply, changed(result));
    },
  );
}
