/** Operator routes for a tenant's console members: the first owner is created here. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { DataEnvelope, IdParam } from '../core/http/schemas.js';
import type { TenantService } from '../tenants/service.js';
import { CreateMemberBody, Member } from './schemas.js';
import type { MemberService } from './service.js';

export async function memberAdminRoutes(
  fastify: FastifyInstance,
  deps: { members: MemberService; tenants: TenantService },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/tenants/:id/members',
    {
      schema: {
        summary: "Create a console member of a tenant (the tenant's first owner)",
        params: IdParam,
        body: CreateMemberBody,
        response: { 201: DataEnvelope(Member) },
      },
    },
    async (request, reply) => {
      const tenant = await deps.tenants.get(request.params.id);
      return reply.code(201).send({ data: await deps.members.create(tenant.id, request.body) });
    },
  );

  app.get(
    '/tenants/:id/members',
    {
      schema: {
        summary: "List a tenant's console members",
        params: IdParam,
        response: { 200: DataEnvelope(Type.Array(Member)) },
      },
    },
    async (request) => {
      const tenant = await deps.tenants.get(request.params.id);
      return { data: await deps.members.list(tenant.id) };
    },
  );
}
