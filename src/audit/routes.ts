/** GET /api/v1/audit-events(/{id}): the tenant's audit log for partners (scope `audit:read`). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { tenantOf } from '../core/http/auth.js';
import { DataEnvelope, errorResponses, ListEnvelope, PARTNER_ERRORS } from '../core/http/schemas.js';
import { AuditEvent, AuditEventParams, ListAuditEventsQuery } from './schemas.js';
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

  app.get(
    '/audit-events/:id',
    {
      config: { scope: 'audit:read' },
      schema: {
        operationId: 'getAuditEvent',
        summary: 'Get an audit event',
        description: 'One entry of the tenant’s audit log; 404 when it is not the tenant’s or was purged.',
        tags: ['Audit log'],
        params: AuditEventParams,
        response: {
          200: DataEnvelope(AuditEvent, 'The audit event.'),
          ...errorResponses(...PARTNER_ERRORS, 404),
        },
      },
    },
    async (request) => ({ data: await audit.getForTenant(tenantOf(request), request.params.id) }),
  );
}
