/** Operator routes for tenants: create, list (every tenant, paged), read, change. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { DataEnvelope, IdParam, ListEnvelope } from '../core/http/schemas.js';
import { CreateTenantBody, ListTenantsQuery, Tenant, UpdateTenantBody } from './schemas.js';
import type { TenantService } from './service.js';

export async function tenantAdminRoutes(fastify: FastifyInstance, { tenants }: { tenants: TenantService }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/tenants',
    { schema: { body: CreateTenantBody, response: { 201: DataEnvelope(Tenant) } } },
    async (request, reply) => reply.code(201).send({ data: await tenants.create(request.body) }),
  );

  app.get(
    '/tenants',
    { schema: { querystring: ListTenantsQuery, response: { 200: ListEnvelope(Tenant) } } },
    async (request) => tenants.list(request.query),
  );

  app.get(
    '/tenants/:id',
    { schema: { params: IdParam, response: { 200: DataEnvelope(Tenant) } } },
    async (request) => ({
      data: await tenants.get(request.params.id),
    }),
  );

  app.patch(
    '/tenants/:id',
    { schema: { params: IdParam, body: UpdateTenantBody, response: { 200: DataEnvelope(Tenant) } } },
    async (request) => ({ data: await tenants.update(request.params.id, request.body) }),
  );
}
