/** Partner routes: /api/v1/do-not-call (platform contract §2). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { tenantOf } from '../core/http/auth.js';
import { DataEnvelope, errorResponses, ListEnvelope, PARTNER_ERRORS } from '../core/http/schemas.js';
import { AddDoNotCallBody, DoNotCallEntry, ListDoNotCallQuery, PhoneNumberParam } from './schemas.js';
import type { DoNotCallService } from './service.js';

export async function doNotCallRoutes(
  fastify: FastifyInstance,
  { doNotCall, publicBaseUrl }: { doNotCall: DoNotCallService; publicBaseUrl: string },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const locationOf = (phone: string) => `${publicBaseUrl}/api/v1/do-not-call/${encodeURIComponent(phone)}`;

  app.get(
    '/do-not-call',
    {
      config: { scope: 'calls:read' },
      schema: {
        operationId: 'listDoNotCall',
        summary: 'List the do-not-call list',
        description: 'The numbers of the caller’s do-not-call list, newest first.',
        tags: ['Do-not-call'],
        querystring: ListDoNotCallQuery,
        response: {
          200: ListEnvelope(DoNotCallEntry, 'A page of listed numbers.'),
          ...errorResponses(...PARTNER_ERRORS),
        },
      },
    },
    async (request) => doNotCall.list(tenantOf(request), request.query),
  );

  app.post(
    '/do-not-call',
    {
      config: { scope: 'calls:write' },
      schema: {
        operationId: 'addDoNotCall',
        summary: 'Add a number to the do-not-call list',
        description:
          'Lists the number: calls to it are refused before anything is stored. Adding a listed number again changes nothing and answers 200 with the existing entry.',
        tags: ['Do-not-call'],
        body: AddDoNotCallBody,
        response: {
          200: DataEnvelope(DoNotCallEntry, 'The number was already listed: the existing entry.'),
          201: {
            ...DataEnvelope(DoNotCallEntry, 'The number is now listed.'),
            headers: {
              Location: Type.String({
                format: 'uri',
                description: 'URL of the entry (GET /api/v1/do-not-call/{phone_number}).',
                examples: ['https://api.example.com/api/v1/do-not-call/%2B14155550123'],
              }),
            },
          },
          ...errorResponses(...PARTNER_ERRORS),
        },
      },
    },
    async (request, reply) => {
      const { entry, created } = await doNotCall.add(tenantOf(request), request.body);
      if (created) reply.code(201).header('location', locationOf(entry.phone_number));
      return reply.send({ data: entry });
    },
  );

  app.get(
    '/do-not-call/:phone_number',
    {
      config: { scope: 'calls:read' },
      schema: {
        operationId: 'getDoNotCall',
        summary: 'Get a do-not-call entry',
        description: 'The entry of a listed number; 404 when it is not listed.',
        tags: ['Do-not-call'],
        params: PhoneNumberParam,
        response: {
          200: DataEnvelope(DoNotCallEntry, 'The entry.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => ({ data: await doNotCall.get(tenantOf(request), request.params.phone_number) }),
  );

  app.delete(
    '/do-not-call/:phone_number',
    {
      config: { scope: 'calls:write' },
      schema: {
        operationId: 'removeDoNotCall',
        summary: 'Remove a number from the do-not-call list',
        description: 'Calls to the number are allowed again. 404 when it is not listed.',
        tags: ['Do-not-call'],
        params: PhoneNumberParam,
        response: {
          200: DataEnvelope(DoNotCallEntry, 'The removed entry.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => ({ data: await doNotCall.remove(tenantOf(request), request.params.phone_number) }),
  );
}
