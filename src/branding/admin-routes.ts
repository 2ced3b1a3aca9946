/**
 * Operator routes for white-label (docs/white-label.md): a tenant's brand and its custom domains.
 * The console's "Branding and domains" page calls the same service.
 */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import { DataEnvelope, IdParam } from '../core/http/schemas.js';
import type { TenantService } from '../tenants/service.js';
import { refuseWithEveryIssue } from './body-issues.js';
import { AddDomainBody, Branding, Domain, UpdateBrandingBody } from './schemas.js';
import type { BrandingService } from './service.js';

const DomainParams = Type.Object(
  { id: Type.String({ maxLength: 200 }), domain_id: Type.String({ maxLength: 200 }) },
  { additionalProperties: false },
);

export async function brandingAdminRoutes(
  fastify: FastifyInstance,
  { branding, tenants }: { branding: BrandingService; tenants: TenantService },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();
  /** 404 for an unknown tenant, before anything else is looked at. */
  const tenantOf = async (id: string) => (await tenants.get(id)).id;

  app.get(
    '/tenants/:id/branding',
    { schema: { params: IdParam, response: { 200: DataEnvelope(Branding) } } },
    async (request) => ({ data: await branding.get(await tenantOf(request.params.id)) }),
  );

  app.patch(
    '/tenants/:id/branding',
    {
      attachValidation: true,
      preHandler: refuseWithEveryIssue,
      schema: { params: IdParam, body: UpdateBrandingBody, response: { 200: DataEnvelope(Branding) } },
    },
    async (request) => ({ data: await branding.update(await tenantOf(request.params.id), request.body) }),
  );

  app.get(
    '/tenants/:id/domains',
    { schema: { params: IdParam, response: { 200: DataEnvelope(Type.Array(Domain)) } } },
    async (request) => ({ data: await branding.listDomains(await tenantOf(request.params.id)) }),
  );

  app.post(
    '/tenants/:id/domains',
    {
      schema: {
        params: IdParam,
        body: AddDomainBody,
        response: { 200: DataEnvelope(Domain), 201: DataEnvelope(Domain) },
      },
    },
    async (request, reply) => {
      const { domain, created } = await branding.addDomain(await tenantOf(request.params.id), request.body);
      return reply.code(created ? 201 : 200).send({ data: domain });
    },
  );

  app.post(
    '/tenants/:id/domains/:domain_id/verify',
    { schema: { params: DomainParams, response: { 200: DataEnvelope(Domain) } } },
    async (request) => ({
      data: await branding.verifyDomain(await tenantOf(request.params.id), request.params.domain_id),
    }),
  );

  app.delete(
    '/tenants/:id/domains/:domain_id',
    { schema: { params: DomainParams, response: { 200: DataEnvelope(Domain) } } },
    async (request) => ({
      data: await branding.removeDomain(await tenantOf(request.params.id), request.params.domain_id),
    }),
  );
}
