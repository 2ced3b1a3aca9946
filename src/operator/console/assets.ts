/**
 * The operator console's stylesheet: the agency console's own (public/console/styles.css, one
 * stylesheet of design tokens for both) and its small script (copy buttons, confirmations), and `brand.css`, the operator's colour as the accent token.
 */
import type { FastifyInstance } from 'fastify';
import type { PlatformBrand, PlatformBrandService } from '../../platform-brand/service.js';
import { loadAssets } from '../../web/assets.js';

const assets = loadAssets('console', {
  'styles.css': 'text/css; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
});

export function operatorAssetUrl(name: string): string {
  return `/operator/assets/${name}?v=${assets.hashOf(name)}`;
}

export function brandStylesheet(brand: PlatformBrand): string {
  return `:root{--accent:${brand.color};--accent-strong:color-mix(in srgb, ${brand.color} 80%, black);--accent-soft:color-mix(in srgb, ${brand.color} 10%, white);}\n`;
}

export async function operatorAssetRoutes(
  app: FastifyInstance,
  options: { platformBrand: PlatformBrandService },
) {
  app.get(
    '/assets/brand.css',
    { schema: { hide: true }, config: { operatorAccess: 'public' } },
    async (_request, reply) =>
      reply
        .type('text/css; charset=utf-8')
        .header('cache-control', 'no-cache')
        .send(brandStylesheet(await options.platformBrand.current())),
  );
  app.get<{ Params: { name: string } }>(
    '/assets/:name',
    { schema: { hide: true }, config: { operatorAccess: 'public' } },
    async (request, reply) => {
      if (!assets.has(request.params.name)) return reply.callNotFound();
      return assets.send(reply, request.params.name);
    },
  );
}
