/** Partner routes: /api/v1/phone-numbers (docs/phone-numbers.md). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { tenantOf } from '../core/http/auth.js';
import { DataEnvelope, errorResponses, ListEnvelope, PARTNER_ERRORS } from '../core/http/schemas.js';
import { ListPhoneNumbersQuery, PhoneNumber, PhoneNumberParam, UpdatePhoneNumberBody } from './schemas.js';
import type { PhoneNumberService } from './service.js';

export async function phoneNumberRoutes(
  fastify: FastifyInstance,
  { phoneNumbers }: { phoneNumbers: PhoneNumberService },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/phone-numbers',
    {
      config: { scope: 'agents:read' },
      schema: {
        operationId: 'listPhoneNumbers',
        summary: 'List phone numbers',
        description: 'The numbers the operator assigned to the caller’s tenant, newest first.',
        tags: ['Phone numbers'],
        querystring: ListPhoneNumbersQuery,
        response: {
          200: ListEnvelope(PhoneNumber, 'A page of phone numbers.'),
          ...errorResponses(...PARTNER_ERRORS),
        },
      },
    },
    async (request) => phoneNumbers.listForTenant(tenantOf(request), request.query),
  );

  app.get(
    '/phone-numbers/:phone_number',
    {
      config: { scope: 'agents:read' },
      schema: {
        operationId: 'getPhoneNumber',
        summary: 'Get a phone number',
        description: 'One of the tenant’s numbers; 404 for a number the tenant does not hold.',
        tags: ['Phone numbers'],
        params: PhoneNumberParam,
        response: {
          200: DataEnvelope(PhoneNumber, 'The phone number.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => ({
      data: await phoneNumbers.getForTenant(tenantOf(request), request.params.phone_number),
    }),
  );

  app.patch(
    '/phone-numbers/:phone_number',
    {
      config: { scope: 'agents:write' },
      schema: {
        operationId: 'updatePhoneNumber',
        summary: 'Choose who answers a phone number',
        description:
          'Names the agent whose published version answers the number’s inbound calls (null: they are declined) and, optionally, its label. The agent must be one of the tenant’s (422 naming `inbound_agent_id` otherwise).',
        tags: ['Phone numbers'],
        params: PhoneNumberParam,
        body: UpdatePhoneNumberBody,
        response: {
          200: DataEnvelope(PhoneNumber, 'The phone number as it now is.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => ({
      data: await phoneNumbers.updateForTenant(tenantOf(request), request.params.phone_number, request.body),
    }),
  );
}
