/** Operator routes: issue, list and revoke partner API keys. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import { DataEnvelope, IdParam, ListEnvelope, Nullable, Timestamp } from '../core/http/schemas.js';
import type { TenantService } from '../tenants/service.js';
import { ApiKey, CreateApiKeyBody, ListApiKeysQuery } from './schemas.js';
import { createApiKey, type KeyVerifier, listApiKeys, revokeApiKey } from './service.js';

const IssuedApiKey = Type.Object(
  {
    id: Type.String(),
    key: Type.String({ description: 'The full secret; shown only in this answer.' }),
    env: Type.String(),
    scopes: Type.Array(Type.String()),
    name: Nullable(Type.String()),
    expires_at: Nullable(Timestamp),
    created_at: Timestamp,
  },
  { additionalProperties: false },
);

const RevokedApiKey = Type.Object(
  { id: Type.String(), revoked_at: Timestamp },
  { additionalProperties: false },
);

export async function apiKeyAdminRoutes(
  fastify: FastifyInstance,
  deps: { db: Db; clock: Clock; tenants: TenantService; verifier: KeyVerifier; keyPrefix: string },
) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/tenants/:id/api-keys',
    { schema: { params: IdParam, body: CreateApiKeyBody, response: { 201: DataEnvelope(IssuedApiKey) } } },
    async (request, reply) => {
      const tenant = await deps.tenants.get(request.params.id);
      return reply.code(201).send({ data: await createApiKey(deps, tenant.id, request.body) });
    },
  );

  app.get(
    '/tenants/:id/api-keys',
    { schema: { params: IdParam, querystring: ListApiKeysQuery, response: { 200: ListEnvelope(ApiKey) } } },
    async (request) => {
      const tenant = await deps.tenants.get(request.params.id);
      return listApiKeys(deps.db, deps.clock, tenant.id, request.query);
    },
  );

  app.delete(
    '/api-keys/:id',
    { schema: { params: IdParam, response: { 200: DataEnvelope(RevokedApiKey) } } },
    async (request) => ({ data: await revokeApiKey(deps, request.params.id) }),
  );
}
