/** The console's stylesheet and script (public/console/), served under /console/assets/. */
import type { FastifyInstance } from 'fastify';
import { loadAssets } from '../web/assets.js';

const assets = loadAssets('console', {
  'styles.css': 'text/css; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
  'favicon.svg': 'image/svg+xml',
});

export function assetUrl(name: string): string {
  return `/console/assets/${name}?v=${assets.hashOf(name)}`;
}

export async function assetRoutes(app: FastifyInstance) {
  app.get<{ Params: { name: string } }>(
    '/assets/:name',
    { schema: { hide: true }, config: { consoleAccess: 'public' } },
    async (request, reply) => {
      if (!assets.has(request.params.name)) return reply.callNotFound();
      return assets.send(reply, request.params.name);
    },
  );
}
