/** Operator routes for the plan catalog. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { DataEnvelope, IdParam } from '../core/http/schemas.js';
import type { TenantService } from '../tenants/service.js';
import { CreatePlanBody, Plan, UpdatePlanBody } from './schemas.js';
import { checkPlanRates, type PlanService } from './service.js';

export async function planAdminRoutes(
  fastify: FastifyInstance,
  { plans, tenants }: { plans: PlanService; tenants: TenantService },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/tenants/:id/plans',
    { schema: { params: IdParam, body: CreatePlanBody, response: { 201: DataEnvelope(Plan) } } },
    async (request, reply) => {
      checkPlanRates(request.body);
      const tenant = await tenants.get(request.params.id);
      return reply.code(201).send({ data: await plans.create(tenant.id, request.body) });
    },
  );

  app.patch(
    '/plans/:id',
    { schema: { params: IdParam, body: UpdatePlanBody, response: { 200: DataEnvelope(Plan) } } },
    async (request) => ({ data: await plans.update(request.params.id, request.body) }),
  );

  app.delete(
    '/plans/:id',
    { schema: { params: IdParam, response: { 200: DataEnvelope(Plan) } } },
    async (request) => ({ data: await plans.archive(request.params.id) }),
  );
}
