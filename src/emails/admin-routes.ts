/** Operator routes for the email outbox: what was sent to a tenant's users, and what failed. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { IdParam, ListEnvelope } from '../core/http/schemas.js';
import type { TenantService } from '../tenants/service.js';
import { ListEmailsQuery, OutboxEmail } from './schemas.js';
import type { EmailService } from './service.js';

export async function emailAdminRoutes(
  fastify: FastifyInstance,
  { emails, tenants }: { emails: EmailService; tenants: TenantService },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.get(
    '/tenants/:id/emails',
    {
      schema: { params: IdParam, querystring: ListEmailsQuery, response: { 200: ListEnvelope(OutboxEmail) } },
    },
    async (request) => {
      const tenant = await tenants.get(request.params.id);
      return emails.list(tenant.id, request.query);
    },
  );
}
