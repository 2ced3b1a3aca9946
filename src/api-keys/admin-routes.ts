/** Operator routes: issue, list and revoke partner API keys. */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import { Type } from '@sinclair/typebox';
import type { FastifyInstance } from 'fastify';
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db.js';
import { notFound, validationFailed } from '../core/errors.js';
import { DataEnvelope, IdParam, ListEnvelope, Nullable, Timestamp } from '../core/schemas.js';
import type { TenantService } from '../tenants/service.js';
import { revokeApiKey } from './repository.js';
import { ApiKey, ListApiKeysQuery } from './schemas.js';
import { issueApiKey, type KeyVerifier, listApiKeys, SCOPES } from './service.js';

const Scope = Type.Union(SCOPES.map((s) => Type.Literal(s)));

const CreateApiKeyBody = Type.Object(
  {
    scopes: Type.Array(Scope, { minItems: 1, uniqueItems: true }),
    env: Type.Optional(Type.Union([Type.Literal('test'), Type.Literal('live')])),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    expires_at: Type.Optional(Nullable(Timestamp)),
  },
  { additionalProperties: false },
);

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
      const { expires_at: expiresAt } = request.body;
      if (expiresAt && new Date(expiresAt) <= deps.clock.now()) {
        throw validationFailed([{ field: 'expires_at', issue: 'must be in the future.' }]);
      }
      const { key, row } = await issueApiKey(deps.db, deps.clock, {
        tenantId: tenant.id,
        prefix: deps.keyPrefix,
        env: request.body.env ?? 'test',
        scopes: request.body.scopes,
        name: request.body.name ?? null,
        expiresAt: expiresAt ? new Date(expiresAt) : null,
      });
      return reply.code(201).send({
        data: {
          id: row.id,
          key,
          env: row.env,
          scopes: row.scopes,
          name: row.name,
          expires_at: row.expires_at?.toISOString() ?? null,
          created_at: row.created_at.toISOString(),
        },
      });
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
    async (request) => {
      const row = await revokeApiKey(deps.db, request.params.id, deps.clock.now());
      if (!row?.revoked_at) throw notFound('API key');
      deps.verifier.invalidate();
      return { data: { id: row.id, revoked_at: row.revoked_at.toISOString() } };
    },
  );
}
