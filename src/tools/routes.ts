/** Partner route: POST /api/v1/tools-secret/rotate (docs/tools.md). */
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type { FastifyInstance } from 'fastify';
import { tenantOf } from '../core/http/auth.js';
import { DataEnvelope, errorResponses, PARTNER_ERRORS } from '../core/http/schemas.js';
import { ToolsSecret } from './schemas.js';
import type { ToolService } from './service.js';

export async function toolRoutes(fastify: FastifyInstance, { tools }: { tools: ToolService }) {
  const app = fastify.withTypeProvider<TypeBoxTypeProvider>();

  app.post(
    '/tools-secret/rotate',
    {
      config: { scope: 'agents:write' },
      schema: {
        operationId: 'rotateToolsSecret',
        summary: 'Create or rotate the tools secret',
        description:
          'Every request to an agent’s tool `url` is signed (Standard Webhooks) with this secret. Answers the new `secret`, shown only this once; for 24 hours the previous one keeps signing beside it.',
        tags: ['Agents'],
        response: {
          200: DataEnvelope(ToolsSecret, 'The new tools secret.'),
          ...errorResponses(...PARTNER_ERRORS),
        },
      },
    },
    async (request) => ({ data: await tools.rotateSecret(tenantOf(request)) }),
  );
}
