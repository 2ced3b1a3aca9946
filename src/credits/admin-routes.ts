/** Operator routes for a user's credit balance (minutes). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import { DataEnvelope, IdParam } from '../core/http/schemas.js';
import { AddCreditsBody, CreditBalance } from './schemas.js';
import { balanceOf, grantCredits } from './service.js';

export async function creditAdminRoutes(fastify: FastifyInstance, deps: { db: Db; clock: Clock }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/users/:id/credits',
    { schema: { params: IdParam, body: AddCreditsBody, response: { 201: DataEnvelope(CreditBalance) } } },
    async (request, reply) =>
      reply.code(201).send({ data: await grantCredits(deps, { userId: request.params.id }, request.body) }),
  );

  app.get(
    '/users/:id/credits',
    { schema: { params: IdParam, response: { 200: DataEnvelope(CreditBalance) } } },
    async (request) => ({ data: await balanceOf(deps, { userId: request.params.id }) }),
  );
}
