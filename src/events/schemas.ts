import { type Static, Type } from '@sinclair/typebox';
import { PageQuery } from '../core/db/pagination.js';
import { Nullable, Timestamp } from '../core/http/schemas.js';

/** Every event type a partner may subscribe to (platform contract §3). */
export const EVENT_TYPES = [
  'call.queued',
  'call.started',
  'call.completed',
  'call.no_answer',
  'call.failed',
  'call.analyzed',
  'user.created',
  'user.deleted',
  'subscription.created',
  'subscription.updated',
  'subscription.canceled',
  'credits.low',
  'credits.exhausted',
  'campaign.started',
  'campaign.paused',
  'campaign.completed',
] as const;
/**
 * The event "send a test event" delivers to one endpoint, whatever its subscriptions; nothing
 * else records it, so no endpoint subscribes to it.
 */
export const TEST_EVENT_TYPE = 'webhook.test';
export type EventType = (typeof EVENT_TYPES)[number] | typeof TEST_EVENT_TYPE;

const EventTypeName = Type.Union(
  [...EVENT_TYPES, TEST_EVENT_TYPE].map((type) => Type.Literal(type)),
  { description: 'An event type.', examples: ['call.completed'] },
);

const EventFilter = Type.Array(Type.Union([...EVENT_TYPES, '*' as const].map((type) => Type.Literal(type))), {
  minItems: 1,
  maxItems: EVENT_TYPES.length + 1,
  uniqueItems: true,
  description: 'The event types sent to this endpoint; `["*"]` for every type.',
  examples: [['call.completed', 'user.created']],
});

const Url = Type.String({
  minLength: 1,
  maxLength: 2000,
  description: 'Where events are POSTed: https (http too when the server allows private targets).',
  examples: ['https://hooks.example.com/voiceplane'],
});
const Description = Type.String({ maxLength: 500, examples: ['CRM sync'] });

const endpointProperties = {
  id: Type.String({ examples: ['we_3kTmd8Qw1ZbXcV5nR7pL2yHs'] }),
  url: Url,
  events: EventFilter,
  description: Nullable(Description),
  enabled: Type.Boolean({
    description: 'False: nothing is sent (set by you, or after 3 days of failures).',
    examples: [true],
  }),
  failing_since: Nullable({
    ...Timestamp,
    description: 'When the current run of failed deliveries began; null while the endpoint answers.',
  }),
  created_at: Timestamp,
};

export const WebhookEndpoint = Type.Object(endpointProperties, {
  additionalProperties: false,
  title: 'WebhookEndpoint',
  description: 'A URL that receives signed events.',
});
export type WebhookEndpoint = Static<typeof WebhookEndpoint>;

const Secret = Type.String({
  description: 'The signing secret (Standard Webhooks), shown only in this answer: keep it.',
  examples: ['whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw'],
});

export const WebhookEndpointWithSecret = Type.Object(
  { ...endpointProperties, secret: Secret },
  { additionalProperties: false, title: 'WebhookEndpointWithSecret' },
);
export type WebhookEndpointWithSecret = Static<typeof WebhookEndpointWithSecret>;

export const CreateEndpointBody = Type.Object(
  {
    url: Url,
    events: EventFilter,
    description: Type.Optional(Nullable(Description)),
    enabled: Type.Optional(Type.Boolean({ default: true, examples: [true] })),
  },
  { additionalProperties: false, title: 'CreateWebhookEndpointRequest' },
);
export type CreateEndpointBody = Static<typeof CreateEndpointBody>;

export const UpdateEndpointBody = Type.Object(
  {
    url: Type.Optional(Url),
    events: Type.Optional(EventFilter),
    description: Type.Optional(Nullable(Description)),
    enabled: Type.Optional(
      Type.Boolean({ description: 'true also clears failing_since.', examples: [true] }),
    ),
  },
  { additionalProperties: false, title: 'UpdateWebhookEndpointRequest' },
);
export type UpdateEndpointBody = Static<typeof UpdateEndpointBody>;

const EndpointId = Type.String({
  minLength: 1,
  maxLength: 255,
  description: 'The endpoint’s id.',
  examples: ['we_3kTmd8Qw1ZbXcV5nR7pL2yHs'],
});
export const EndpointIdParam = Type.Object({ id: EndpointId });
export const DeliveryParams = Type.Object({
  id: EndpointId,
  delivery_id: Type.String({
    minLength: 1,
    maxLength: 255,
    description: 'The delivery’s id.',
    examples: ['del_3kTmd8Qw1ZbXcV5nR7pL2yHs'],
  }),
});

export const ListEndpointsQuery = Type.Object({ ...PageQuery });
export type ListEndpointsQuery = Static<typeof ListEndpointsQuery>;

export const Delivery = Type.Object(
  {
    id: Type.String({ examples: ['del_3kTmd8Qw1ZbXcV5nR7pL2yHs'] }),
    event_id: Type.String({ examples: ['evt_3kTmd8Qw1ZbXcV5nR7pL2yHs'] }),
    event_type: EventTypeName,
    status: Type.Union([Type.Literal('pending'), Type.Literal('succeeded'), Type.Literal('failed')], {
      examples: ['succeeded'],
    }),
    attempts: Type.Integer({ minimum: 0, examples: [1] }),
    last_attempt_at: Nullable(Timestamp),
    last_response_code: Nullable(
      Type.Integer({ description: 'HTTP status of the last answer; null: none.', examples: [200] }),
    ),
    next_attempt_at: Nullable(Timestamp),
    resent_from: Nullable(
      Type.String({
        description: 'The delivery this one resends (the same event to the same endpoint); null: none.',
        examples: ['del_8aXmd8Qw1ZbXcV5nR7pL2yHs'],
      }),
    ),
    created_at: Timestamp,
  },
  { additionalProperties: false, title: 'EventDelivery' },
);
export type Delivery = Static<typeof Delivery>;

const Headers = Type.Record(Type.String(), Type.String({ examples: ['application/json'] }), {
  description: 'Header names (lower case) and values.',
  examples: [{ 'content-type': 'application/json' }],
});

export const DeliveryDetail = Type.Object(
  {
    ...Delivery.properties,
    request: Nullable(
      Type.Object(
        {
          headers: Headers,
          body: Type.String({
            description: 'The event as sent: its first 4 KiB.',
            examples: [
              '{"id":"evt_3kTmd8Qw1ZbXcV5nR7pL2yHs","type":"webhook.test","created_at":"2026-11-21T10:00:00.000Z","data":{"object":{}}}',
            ],
          }),
        },
        {
          additionalProperties: false,
          description: 'What the last attempt sent; null before the first attempt.',
        },
      ),
    ),
    response: Nullable(
      Type.Object(
        {
          status: Type.Integer({ examples: [200] }),
          headers: Headers,
          body: Type.String({
            description: 'The first 4 KiB of the answer (no more is read).',
            examples: ['{"received":true}'],
          }),
        },
        { additionalProperties: false, description: 'The last attempt’s answer; null when none came.' },
      ),
    ),
    error: Nullable(
      Type.String({
        description:
          'Why the last attempt got no answer (a timeout, a refused address); null when it got one.',
        examples: ['no answer within 10000 ms'],
      }),
    ),
  },
  { additionalProperties: false, title: 'EventDeliveryDetail' },
);
export type DeliveryDetail = Static<typeof DeliveryDetail>;

export const ListDeliveriesQuery = Type.Object({ ...PageQuery });
export type ListDeliveriesQuery = Static<typeof ListDeliveriesQuery>;

export const Event = Type.Object(
  {
    id: Type.String({
      description: 'Also the `webhook-id` header of every delivery of it.',
      examples: ['evt_3kTmd8Qw1ZbXcV5nR7pL2yHs'],
    }),
    type: EventTypeName,
    created_at: Timestamp,
    data: Type.Object(
      {
        object: Type.Object(
          {},
          { additionalProperties: true, description: 'The resource as the API’s GET of it shows it.' },
        ),
      },
      { additionalProperties: false },
    ),
  },
  { additionalProperties: false, title: 'Event' },
);
export type Event = Static<typeof Event>;

export const ListEventsQuery = Type.Object({
  ...PageQuery,
  type: Type.Optional(EventTypeName),
});
export type ListEventsQuery = Static<typeof ListEventsQuery>;

/** The `events.deliver` job: one attempt of one delivery. */
export const DeliveryJobPayload = Type.Object({
  delivery_id: Type.String(),
  /** The endpoint, so the job runner can cap its deliveries in flight (absent on older jobs). */
  endpoint_id: Type.Optional(Type.String()),
});
export type DeliveryJobPayload = Static<typeof DeliveryJobPayload>;
