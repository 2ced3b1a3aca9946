/** Operator routes for phone numbers (docs/phone-numbers.md): import, list, get, reassign, release. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { OperatorCall } from '../calls/schemas.js';
import type { CallService } from '../calls/service.js';
import { DataEnvelope, ListEnvelope } from '../core/http/schemas.js';
import type { InboundCallService } from './inbound.js';
import {
  ImportPhoneNumberBody,
  ListOperatorPhoneNumbersQuery,
  OperatorPhoneNumber,
  PhoneNumberParam,
  ReassignPhoneNumberBody,
  SimulateInboundCallBody,
} from './schemas.js';
import type { PhoneNumberService } from './service.js';
import { simulateInboundCall } from './simulated-inbound.js';

export async function phoneNumberAdminRoutes(
  fastify: FastifyInstance,
  {
    phoneNumbers,
    inbound,
    calls,
    engine,
  }: { phoneNumbers: PhoneNumberService; inbound: InboundCallService; calls: CallService; engine: string },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  // The simulator rings one of its numbers (tests, demos): the inbound path end to end.
  if (engine === 'simulated') {
    app.post(
      '/simulator/inbound-calls',
      { schema: { body: SimulateInboundCallBody, response: { 201: DataEnvelope(OperatorCall) } } },
      async (request, reply) => {
        const callId = await simulateInboundCall(phoneNumbers, inbound, request.body);
        return reply.code(201).send({ data: await calls.get(callId) });
      },
    );
  }

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
