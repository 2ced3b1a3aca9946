/**
 * POST /admin/v1/tenants/{id}/suspend and /unsuspend (docs/operator-console.md, "Suspension"):
 * actions rather than a PATCH field, because suspending does more than store a value (cached keys
 * are forgotten, waiting calls are woken on the lift). Both answer the tenant; both may be repeated.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { DataEnvelope, IdParam } from '../core/http/schemas.js';
import { SuspendTenantBody, Tenant } from '../tenants/schemas.js';
import type { TenantSuspension } from './suspension.js';

export async function suspensionAdminRoutes(
  fastify: FastifyInstance,
  { suspension }: { suspension: TenantSuspension },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/tenants/:id/suspend',
    {
      schema: {
        summary: 'Suspend a tenant',
        description:
          'Refuses the tenant’s API keys, call-trigger webhooks, console and client portal (403 `permission_denied`) and holds its queued calls; calls in progress finish and are billed. Nothing is deleted. `reason` is the operator’s own note.',
        params: IdParam,
        body: SuspendTenantBody,
        response: { 200: DataEnvelope(Tenant) },
      },
    },
    async (request) => ({ data: await suspension.suspend(request.params.id, request.body?.reason) }),
  );

  app.post(
    '/tenants/:id/unsuspend',
    {
      schema: {
        summary: 'Lift a tenant’s suspension',
        description: 'Everything the suspension refused works again at once; held calls are dialled.',
        params: IdParam,
        response: { 200: DataEnvelope(Tenant) },
      },
    },
    async (request) => ({ data: await suspension.lift(request.params.id) }),
  );
}
