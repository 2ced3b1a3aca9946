/** Operator routes for a user's credit balance (minutes). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db.js';
import { DataEnvelope, IdParam } from '../core/schemas.js';
import { tenantOfUser } from '../users/service.js';
import { addCreditEntry, creditBalance } from './repository.js';

const CreditBalance = Type.Object(
  { user_id: Type.String(), balance_minutes: Type.Integer() },
  { additionalProperties: false },
);

const AddCreditsBody = Type.Object(
  {
    minutes: Type.Integer({ minimum: -10_000_000, maximum: 10_000_000, description: 'May be negative.' }),
    reason: Type.Optional(Type.String({ maxLength: 500 })),
  },
  { additionalProperties: false },
);

export async function creditAdminRoutes(fastify: FastifyInstance, deps: { db: Db; clock: Clock }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/users/:id/credits',
    { schema: { params: IdParam, body: AddCreditsBody, response: { 201: DataEnvelope(CreditBalance) } } },
    async (request, reply) => {
      const userId = request.params.id;
      const tenantId = await tenantOfUser(deps.db, userId);
      const balance = await deps.db.transaction().execute((tx) =>
        addCreditEntry(tx, {
          tenantId,
          userId,
          minutes: request.body.minutes,
          reason: request.body.reason ?? 'operator adjustment',
          at: deps.clock.now(),
        }),
      );
      return reply.code(201).send({ data: { user_id: userId, balance_minutes: balance ?? 0 } });
    },
  );

  app.get(
    '/users/:id/credits',
    { schema: { params: IdParam, response: { 200: DataEnvelope(CreditBalance) } } },
    async (request) => {
      const userId = request.params.id;
      const tenantId = await tenantOfUser(deps.db, userId);
      return {
        data: { user_id: userId, balance_minutes: (await creditBalance(deps.db, tenantId, userId)) ?? 0 },
      };
    },
  );
}
