/** Operator routes for agents (docs/design-choices.md). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { DataEnvelope, IdParam, ListEnvelope } from '../core/http/schemas.js';
import type { TenantService } from '../tenants/service.js';
import { refuseWithEveryIssue } from './body-issues.js';
import {
  Agent,
  AgentDefaults,
  AgentDefaultsBody,
  CreateAgentBody,
  ListAgentsQuery,
  UpdateAgentBody,
} from './schemas.js';
import type { AgentService } from './service.js';

export async function agentAdminRoutes(
  fastify: FastifyInstance,
  { agents, tenants }: { agents: AgentService; tenants: TenantService },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  const reply200 = { response: { 200: DataEnvelope(Agent) } };
  const everyIssue = refuseWithEveryIssue(agents);

  app.post(
    '/tenants/:id/agents',
    {
      attachValidation: true,
      preHandler: everyIssue,
      schema: { params: IdParam, body: CreateAgentBody, response: { 201: DataEnvelope(Agent) } },
    },
    async (request, reply) => {
      const tenant = await tenants.get(request.params.id);
      return reply.code(201).send({ data: await agents.create(tenant.id, request.body) });
    },
  );

  app.get(
    '/tenants/:id/agents',
    { schema: { params: IdParam, querystring: ListAgentsQuery, response: { 200: ListEnvelope(Agent) } } },
    async (request) => {
      const tenant = await tenants.get(request.params.id);
      return agents.list(tenant.id, request.query);
    },
  );

  app.get('/agents/:id', { schema: { params: IdParam, ...reply200 } }, async (request) => ({
    data: await agents.get(await agents.tenantOf(request.params.id), request.params.id),
  }));

  app.patch(
    '/agents/:id',
    {
      attachValidation: true,
      preHandler: everyIssue,
      schema: { params: IdParam, body: UpdateAgentBody, ...reply200 },
    },
    async (request) => ({
      data: await agents.update(await agents.tenantOf(request.params.id), request.params.id, request.body),
    }),
  );

  app.post('/agents/:id/publish', { schema: { params: IdParam, ...reply200 } }, async (request) => ({
    data: await agents.publish(await agents.tenantOf(request.params.id), request.params.id),
  }));

  app.post('/agents/:id/rotate-webhook', { schema: { params: IdParam, ...reply200 } }, async (request) => ({
    data: await agents.rotateWebhook(await agents.tenantOf(request.params.id), request.params.id),
  }));

  app.get(
    '/tenants/:id/agent-defaults',
    { schema: { params: IdParam, response: { 200: DataEnvelope(AgentDefaults) } } },
    async (request) => {
      const tenant = await tenants.get(request.params.id);
      return { data: await agents.defaults.get(tenant.id) };
    },
  );

  app.put(
    '/tenants/:id/agent-defaults',
    { schema: { params: IdParam, body: AgentDefaultsBody, response: { 200: DataEnvelope(AgentDefaults) } } },
    async (request) => {
      const tenant = await tenants.get(request.params.id);
      return { data: await agents.defaults.set(tenant.id, request.body) };
    },
  );
}
