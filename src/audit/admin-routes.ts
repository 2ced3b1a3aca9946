/** GET /admin/v1/audit-events: every tenant's audit log for the operator. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { ListEnvelope } from '../core/http/schemas.js';
import { AuditEvent, ListOperatorAuditEventsQuery } from './schemas.js';
import type { AuditService } from './service.js';

export async function auditAdminRoutes(fastify: FastifyInstance, { audit }: { audit: AuditService }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/audit-events',
    {
      schema: {
        querystring: ListOperatorAuditEventsQuery,
        response: { 200: ListEnvelope(AuditEvent, 'A page of audit events, newest first.') },
      },
    },
    async (request) => audit.list(request.query),
  );
}
