/** Partner routes: /api/v1/plans. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { tenantOf } from '../core/http/auth.js';
import {
  DataEnvelope,
  errorResponses,
  ListEnvelope,
  PARTNER_ERRORS,
  resourceIdParam,
} from '../core/http/schemas.js';
import { ListPlansQuery, Plan } from './schemas.js';
import type { PlanService } from './service.js';

const PlanIdParam = resourceIdParam('The plan’s id.', 'plan_7Yt2mQ9vX1cB4nK8pL0sD3fH');

export async function planRoutes(fastify: FastifyInstance, { plans }: { plans: PlanService }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/plans',
    {
      config: { scope: 'plans:read' },
      schema: {
        operationId: 'listPlans',
        summary: 'List plans',
        description:
          'The tenant’s plan catalog, both providers. Branch on `provider` to know who bills the plan.',
        tags: ['Plans'],
        querystring: ListPlansQuery,
        response: { 200: ListEnvelope(Plan, 'A page of plans.'), ...errorResponses(...PARTNER_ERRORS) },
      },
    },
    async (request) => plans.list(tenantOf(request), request.query),
  );

  app.get(
    '/plans/:id',
    {
      config: { scope: 'plans:read' },
      schema: {
        operationId: 'getPlan',
        summary: 'Get a plan',
        description: '404 when the plan is not in the tenant or is archived.',
        tags: ['Plans'],
        params: PlanIdParam,
        response: { 200: DataEnvelope(Plan, 'The plan.'), ...errorResponses(...PARTNER_ERRORS, 404) },
      },
    },
    async (request) => ({ data: await plans.get(tenantOf(request), request.params.id) }),
  );
}
