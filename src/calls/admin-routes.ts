/** Operator routes for calls (docs/design-choices.md): the list, newest first, and one call. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { DataEnvelope, IdParam, ListEnvelope } from '../core/http/schemas.js';
import { ListCallsQuery, OperatorCall } from './schemas.js';
import type { CallService } from './service.js';

export async function callAdminRoutes(fastify: FastifyInstance, { calls }: { calls: CallService }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/calls',
    { schema: { querystring: ListCallsQuery, response: { 200: ListEnvelope(OperatorCall) } } },
    async (request) => calls.list(request.query),
  );

  app.get(
    '/calls/:id',
    { schema: { params: IdParam, response: { 200: DataEnvelope(OperatorCall) } } },
    async (request) => ({
      data: await calls.get(request.params.id),
    }),
  );
}
