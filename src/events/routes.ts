/** Partner routes: /api/v1/webhook-endpoints and /api/v1/events (platform contract §3). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { tenantOf } from '../core/http/auth.js';
import { bodySchemaIssues } from '../core/http/body-issues.js';
import {
  DataEnvelope,
  errorResponses,
  IdempotencyKeyHeader,
  ListEnvelope,
  PARTNER_ERRORS,
} from '../core/http/schemas.js';
import { answerRecorder, sendAnswer } from '../core/idempotency/answer.js';
import {
  CreateEndpointBody,
  Delivery,
  DeliveryDetail,
  DeliveryParams,
  EndpointIdParam,
  Event,
  ListDeliveriesQuery,
  ListEndpointsQuery,
  ListEventsQuery,
  UpdateEndpointBody,
  WebhookEndpoint,
  WebhookEndpointWithSecret,
} from './schemas.js';
import { deliveryAnswer, type EventService } from './service.js';

const TAGS = ['Events'];

export async function eventRoutes(
  fastify: FastifyInstance,
  { events, publicBaseUrl }: { events: EventService; publicBaseUrl: string },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/webhook-endpoints',
    {
      config: { scope: 'webhooks:write' },
      attachValidation: true,
      schema: {
        operationId: 'createWebhookEndpoint',
        summary: 'Create a webhook endpoint',
        description:
          'Events of the chosen types are POSTed to the URL, signed (Standard Webhooks). The answer carries the signing `secret`, shown only this once.',
        tags: TAGS,
        body: CreateEndpointBody,
        response: {
          201: {
            ...DataEnvelope(WebhookEndpointWithSecret, 'The endpoint, with its signing secret.'),
            headers: { Location: Type.String({ format: 'uri', description: 'URL of the endpoint.' }) },
          },
          ...errorResponses(...PARTNER_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const endpoint = await events.create(tenantOf(request), request.body, bodySchemaIssues(request));
      return reply
        .code(201)
        .header('location', `${publicBaseUrl}/api/v1/webhook-endpoints/${endpoint.id}`)
        .send({ data: endpoint });
    },
  );

  app.get(
    '/webhook-endpoints',
    {
      config: { scope: 'webhooks:read' },
      schema: {
        operationId: 'listWebhookEndpoints',
        summary: 'List webhook endpoints',
        description: 'Newest first.',
        tags: TAGS,
        querystring: ListEndpointsQuery,
        response: {
          200: ListEnvelope(WebhookEndpoint, 'A page of endpoints.'),
          ...errorResponses(...PARTNER_ERRORS),
        },
      },
    },
    async (request) => events.list(tenantOf(request), request.query),
  );

  app.get(
    '/webhook-endpoints/:id',
    {
      config: { scope: 'webhooks:read' },
      schema: {
        operationId: 'getWebhookEndpoint',
        summary: 'Get a webhook endpoint',
        tags: TAGS,
        params: EndpointIdParam,
        response: {
          200: DataEnvelope(WebhookEndpoint, 'The endpoint.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => ({ data: await events.get(tenantOf(request), request.params.id) }),
  );

  app.patch(
    '/webhook-endpoints/:id',
    {
      config: { scope: 'webhooks:write' },
      attachValidation: true,
      schema: {
        operationId: 'updateWebhookEndpoint',
        summary: 'Update a webhook endpoint',
        description: 'Changes the given fields. `enabled: true` turns a disabled endpoint back on.',
        tags: TAGS,
        params: EndpointIdParam,
        body: UpdateEndpointBody,
        response: {
          200: DataEnvelope(WebhookEndpoint, 'The endpoint.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => ({
      data: await events.update(
        tenantOf(request),
        request.params.id,
        request.body,
        bodySchemaIssues(request),
      ),
    }),
  );

  app.delete(
    '/webhook-endpoints/:id',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        operationId: 'deleteWebhookEndpoint',
        summary: 'Delete a webhook endpoint',
        description: 'Nothing more is sent to it; pending deliveries end as failed.',
        tags: TAGS,
        params: EndpointIdParam,
        response: {
          200: DataEnvelope(WebhookEndpoint, 'The deleted endpoint.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => ({ data: await events.remove(tenantOf(request), request.params.id) }),
  );

  app.post(
    '/webhook-endpoints/:id/rotate-secret',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        operationId: 'rotateWebhookEndpointSecret',
        summary: 'Rotate the signing secret',
        description:
          'Answers a new `secret` (shown only this once). For 24 hours the old secret keeps signing beside it: each delivery carries both signatures.',
        tags: TAGS,
        params: EndpointIdParam,
        response: {
          200: DataEnvelope(WebhookEndpointWithSecret, 'The endpoint, with its new signing secret.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => ({ data: await events.rotateSecret(tenantOf(request), request.params.id) }),
  );

  app.get(
    '/webhook-endpoints/:id/deliveries',
    {
      config: { scope: 'webhooks:read' },
      schema: {
        operationId: 'listWebhookDeliveries',
        summary: 'List an endpoint’s deliveries',
        description: 'The delivery log, newest first.',
        tags: TAGS,
        params: EndpointIdParam,
        querystring: ListDeliveriesQuery,
        response: {
          200: ListEnvelope(Delivery, 'A page of deliveries.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => events.listDeliveries(tenantOf(request), request.params.id, request.query),
  );

  app.post(
    '/webhook-endpoints/:id/deliveries/:delivery_id/retry',
    {
      config: { scope: 'webhooks:write' },
      schema: {
        operationId: 'retryWebhookDelivery',
        summary: 'Send a delivery again now',
        description: 'Sends the event again at once, with the same `webhook-id`.',
        tags: TAGS,
        params: DeliveryParams,
        response: {
          200: DataEnvelope(Delivery, 'The delivery, pending.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => ({
      data: await events.retryDelivery(tenantOf(request), request.params.id, request.params.delivery_id),
    }),
  );

  app.get(
    '/webhook-endpoints/:id/deliveries/:delivery_id',
    {
      config: { scope: 'webhooks:read' },
      schema: {
        operationId: 'getWebhookDelivery',
        summary: 'Get a delivery, with its request and response',
        description:
          'The delivery with what its last attempt sent (headers, and the event’s first 4 KiB) and got back (status, headers, the first 4 KiB of the body), or why no answer came.',
        tags: TAGS,
        params: DeliveryParams,
        response: {
          200: DataEnvelope(DeliveryDetail, 'The delivery.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => ({
      data: await events.getDelivery(tenantOf(request), request.params.id, request.params.delivery_id),
    }),
  );

  const made = deliveryAnswer(publicBaseUrl);
  const madeResponses = {
    201: {
      ...DataEnvelope(Delivery, 'The new delivery, pending: it is sent at once.'),
      headers: { Location: Type.String({ format: 'uri', description: 'URL of the delivery.' }) },
    },
    ...errorResponses(...PARTNER_ERRORS, 404, [409, ['conflict', 'idempotency_key_reuse']]),
  };

  app.post(
    '/webhook-endpoints/:id/test',
    {
      config: { scope: 'webhooks:write', idempotent: true },
      schema: {
        operationId: 'sendWebhookTestEvent',
        summary: 'Send a test event',
        description:
          'Records a `webhook.test` event whose `data.object` is the endpoint, and delivers it to this endpoint only (whatever events it subscribes to), signed and retried like any event. A disabled endpoint is 409. With an Idempotency-Key a retry answers the first delivery again.',
        tags: TAGS,
        headers: IdempotencyKeyHeader,
        params: EndpointIdParam,
        response: madeResponses,
      },
    },
    async (request, reply) => {
      const delivery = await events.sendTest(
        tenantOf(request),
        request.params.id,
        answerRecorder(request.idempotency, made),
      );
      return sendAnswer(reply, made(delivery));
    },
  );

  app.post(
    '/webhook-endpoints/:id/deliveries/:delivery_id/resend',
    {
      config: { scope: 'webhooks:write', idempotent: true },
      schema: {
        operationId: 'resendWebhookDelivery',
        summary: 'Resend a delivery',
        description:
          'A new delivery of the same event to the same endpoint (the same `webhook-id`), with its own attempts; the first delivery stays as it was (`retry` sends the first again instead). A disabled endpoint is 409. With an Idempotency-Key a retry answers the first resend again.',
        tags: TAGS,
        headers: IdempotencyKeyHeader,
        params: DeliveryParams,
        response: madeResponses,
      },
    },
    async (request, reply) => {
      const delivery = await events.resendDelivery(
        tenantOf(request),
        request.params.id,
        request.params.delivery_id,
        answerRecorder(request.idempotency, made),
      );
      return sendAnswer(reply, made(delivery));
    },
  );

  app.get(
    '/events',
    {
      config: { scope: 'webhooks:read' },
      schema: {
        operationId: 'listEvents',
        summary: 'List events',
        description: 'Events of the last 30 days, newest first.',
        tags: TAGS,
        querystring: ListEventsQuery,
        response: {
          200: ListEnvelope(Event, 'A page of events.'),
          ...errorResponses(...PARTNER_ERRORS),
        },
      },
    },
    async (request) => events.listEvents(tenantOf(request), request.query),
  );
}
