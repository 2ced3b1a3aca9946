/** Operator routes for phone numbers (docs/phone-numbers.md): import, list, get, reassign, release. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { DataEnvelope, ListEnvelope } from '../core/http/schemas.js';
import {
  ImportPhoneNumberBody,
  ListOperatorPhoneNumbersQuery,
  OperatorPhoneNumber,
  PhoneNumberParam,
  ReassignPhoneNumberBody,
} from './schemas.js';
import type { PhoneNumberService } from './service.js';

export async function phoneNumberAdminRoutes(
  fastify: FastifyInstance,
  { phoneNumbers }: { phoneNumbers: PhoneNumberService },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/phone-numbers',
    { schema: { body: ImportPhoneNumberBody, response: { 201: DataEnvelope(OperatorPhoneNumber) } } },
    async (request, reply) => reply.code(201).send({ data: await phoneNumbers.import(request.body) }),
  );

  app.get(
    '/phone-numbers',
    {
      schema: {
        querystring: ListOperatorPhoneNumbersQuery,
        response: { 200: ListEnvelope(OperatorPhoneNumber) },
      },
    },
    async (request) => phoneNumbers.list(request.query),
  );

  app.get(
    '/phone-numbers/:phone_number',
    { schema: { params: PhoneNumberParam, response: { 200: DataEnvelope(OperatorPhoneNumber) } } },
    async (request) => ({ data: await phoneNumbers.get(request.params.phone_number) }),
  );

  app.patch(
    '/phone-numbers/:phone_number',
    {
      schema: {
        params: PhoneNumberParam,
        body: ReassignPhoneNumberBody,
        response: { 200: DataEnvelope(OperatorPhoneNumber) },
      },
    },
    async (request) => ({ data: await phoneNumbers.reassign(request.params.phone_number, request.body) }),
  );

  app.delete(
    '/phone-numbers/:phone_number',
    { schema: { params: PhoneNumberParam, response: { 200: DataEnvelope(OperatorPhoneNumber) } } },
    async (request) => ({ data: await phoneNumbers.release(request.params.phone_number) }),
  );
}
