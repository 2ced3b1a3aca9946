/**
 * The call-trigger webhook: POST /webhooks/agents/{agentWebhookId}/trigger (docs/api.md,
 * docs/design-choices.md). No authentication header: the webhook id in the URL is the credential, and
 * the request logger only ever sees it shortened (core/observability/logging.ts).
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance, FastifySchema, FastifySchemaCompiler } from 'fastify';
import { ApiError } from '../core/errors.js';
import { DataEnvelope, errorResponses, IdempotencyKeyHeader } from '../core/http/schemas.js';
import { answerRecorder, sendAnswer } from '../core/idempotency/answer.js';
import {
  type IdempotencyStore,
  registerIdempotency,
  type StoredResponse,
} from '../core/idempotency/store.js';
import { QueuedCall, TriggerCallBody, WebhookParams } from './schemas.js';
import type { CallService } from './service.js';

export const WEBHOOK_BODY_LIMIT = 64 * 1024;

const notJson = () =>
  new ApiError(
    'invalid_request',
    'The request body must be sent as Content-Type: application/json.',
    undefined,
    {
      status: 415,
    },
  );

/**
 * The documented schemas feed OpenAPI only: the body must be a JSON object, and the handler
 * checks its fields so each problem is a 400 with the message partners expect (never a 422).
 */
const shapeOnly: FastifySchemaCompiler<FastifySchema> = ({ httpPart }) => {
  if (httpPart !== 'body') return (data: unknown) => ({ value: data });
  return (data: unknown) =>
    typeof data === 'object' && data !== null && !Array.isArray(data)
      ? { value: data }
      : { error: new ApiError('invalid_request', 'The request body must be a JSON object.') };
};

/** Idempotency keys of the webhook belong to the webhook id, not to a tenant (platform contract §2). */
export const webhookIdempotencyScope = (webhookId: string) => `webhook:${webhookId}`;

const queuedAnswer = (call: QueuedCall): StoredResponse => ({
  status: 202,
  body: { data: call },
  headers: {},
});

export async function webhookRoutes(
  fastify: FastifyInstance,
  { calls, idempotency }: { calls: CallService; idempotency: IdempotencyStore },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  // Only with the header: without it these hooks return at once, no query is added.
  registerIdempotency(app, idempotency, (request) =>
    webhookIdempotencyScope((request.params as { agentWebhookId: string }).agentWebhookId),
  );

  app.post(
    '/webhooks/agents/:agentWebhookId/trigger',
    {
      bodyLimit: WEBHOOK_BODY_LIMIT,
      config: { rateLimit: 'webhook', idempotent: true },
      validatorCompiler: shapeOnly,
      // Only JSON, whatever parsers other routes register; a missing Content-Type is refused too.
      onRequest: async (request) => {
        const type = request.headers['content-type'];
        const media = typeof type === 'string' ? type.split(';')[0].trim().toLowerCase() : '';
        if (media !== 'application/json') throw notJson();
      },
      schema: {
        operationId: 'triggerAgentCall',
        summary: 'Place a call with an agent',
        description: [
          'Makes the voice agent that owns this webhook place one outbound call to `phone`, using its published version (a draft-only change is not used) and its phone number as caller ID.',
          'Answers 202 once the call is queued, without waiting for it; the call is durably stored before the answer. Each request places one call, unless it carries an `Idempotency-Key`: then a retry with the same key and body within 24 hours answers the first 202 again (`Idempotent-Replayed: true`) and places no second call; keys belong to this webhook.',
          'A number on the tenant’s do-not-call list is refused with 409 `do_not_call` before anything is stored. The agent’s call controls apply: outside its calling hours the call is accepted and waits; over its concurrency cap it waits queued until a slot frees.',
          'Calls consume the owner’s credits: with no balance left the answer is 402 `insufficient_credits` and no call is placed; when the agency’s wholesale minutes are used up it is 402 `tenant_balance_exhausted`. Send `Content-Type: application/json`; no other header is needed, the URL itself is the credential.',
          'Pace requests: each webhook accepts 10 requests/s with bursts of 20 (429 with Retry-After beyond).',
        ].join('\n\n'),
        tags: ['Webhooks'],
        security: [],
        params: WebhookParams,
        headers: IdempotencyKeyHeader,
        body: TriggerCallBody,
        response: {
          202: DataEnvelope(QueuedCall, 'The call is queued.'),
          ...errorResponses(
            400,
            402,
            404,
            [
              409,
              [
                'agent_not_published',
                'agent_unavailable',
                'do_not_call',
                'conflict',
                'idempotency_key_reuse',
              ],
            ],
            413,
            415,
            429,
            500,
            503,
          ),
        },
      },
    },
    async (request, reply) => {
      const call = await calls.trigger(
        request.params.agentWebhookId,
        request.body as Record<string, unknown>,
        answerRecorder(request.idempotency, queuedAnswer),
      );
      return sendAnswer(reply, queuedAnswer(call));
    },
  );
}
