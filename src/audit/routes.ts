/** GET /api/v1/audit-events: the tenant's audit log for partners (scope `audit:read`). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { tenantOf } from '../core/http/auth.js';
import { errorResponses, ListEnvelope, PARTNER_ERRORS } from '../core/http/schemas.js';
import { AuditEvent, ListAuditEventsQuery } from './schemas.js';
import type { AuditService } from './service.js';

export async function auditRoutes(fastify: FastifyInstance, { audit }: { audit: AuditService }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  app.get(
    '/audit-events',
    {
      config: { scope: 'audit:read' },
      schema: {
        operationId: 'listAuditEvents',
        summary: 'List audit events',
        description:
          'Every write made in the tenant by its API keys, its console members and the operator: who, what (action, object, names of the changed fields, never their values), when, from where and the request id. Newest first; kept 400 days.',
        tags: ['Audit log'],
        querystring: ListAuditEventsQuery,
        response: {
          200: ListEnvelope(AuditEvent, 'A page of audit events.'),
          ...errorResponses(...PARTNER_ERRORS),
        },
      },
    },
    async (request) => audit.listForTenant(tenantOf(request), request.query),
  );
}
