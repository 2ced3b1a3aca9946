/** Operator routes for users: approval and blocking. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import { DataEnvelope, IdParam } from '../core/http/schemas.js';
import { UpdateUserStatusBody, UserListItem } from './schemas.js';
import { tenantOfUser, type UserService } from './service.js';

export async function userAdminRoutes(
  fastify: FastifyInstance,
  deps: { db: Db; clock: Clock; users: UserService },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.patch(
    '/users/:id',
    {
      schema: { params: IdParam, body: UpdateUserStatusBody, response: { 200: DataEnvelope(UserListItem) } },
    },
    async (request) => {
      const tenantId = await tenantOfUser(deps.db, request.params.id);
      return { data: await deps.users.setStatus(tenantId, request.params.id, request.body.status) };
    },
  );
}
