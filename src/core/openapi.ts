/**
 * The OpenAPI 3.1 document, generated from the route schemas: partner routes (tagged) and the
 * webhook; operator and internal routes carry no tag and stay out of it.
 */
import swagger from '@fastify/swagger';
import swaggerUi from '@fastify/swagger-ui';
import type { FastifyInstance } from 'fastify';
import { ErrorEnvelope } from './schemas.js';

export async function registerOpenApi(
  app: FastifyInstance,
  options: { publicBaseUrl: string; keyPrefix: string },
) {
  app.addSchema({ ...ErrorEnvelope, $id: 'ErrorEnvelope' });
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'voiceplane partner API',
        version: '1.0',
        description:
          'Tenant-scoped REST API for users, plans and subscriptions, plus the per-agent call-trigger webhook. ' +
          'Every answer carries X-Request-Id; every error is the envelope { error: { code, message, details? }, request_id }.',
      },
      servers: [{ url: options.publicBaseUrl }],
      components: {
        securitySchemes: {
          apiKey: {
            type: 'http',
            scheme: 'bearer',
            description: `API key \`${options.keyPrefix}_<live|test>_<32 characters>\` issued from the tenant dashboard. Each operation lists the scope it requires.`,
          },
        },
      },
      tags: [
        { name: 'Users', description: 'Users of the caller’s tenant.' },
        { name: 'Plans', description: 'The tenant’s plan catalog.' },
        { name: 'Subscriptions', description: 'Users’ subscriptions to plans.' },
        { name: 'Webhooks', description: 'The per-agent call-trigger webhook; the URL is the credential.' },
      ],
    },
    hideUntagged: true,
    refResolver: {
      buildLocalReference: (json, _baseUri, _fragment, i) => (json.$id as string) || `schema${i}`,
    },
    transform({ schema, url, route }) {
      const scope = route.config?.scope;
      if (!scope || !schema) return { schema, url };
      return {
        schema: {
          ...schema,
          security: [{ apiKey: [scope] }],
          description: `${schema.description ?? ''}\n\nRequired scope: \`${scope}\`.`.trim(),
        } as typeof schema,
        url,
      };
    },
  });
  await app.register(swaggerUi, { routePrefix: '/docs', uiConfig: { deepLinking: true } });
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
}
