/**
 * The console's stylesheet and script, read once from public/console/ at the repository root
 * (the same path from src/ under tsx and from dist/) and served with a content hash in the URL,
 * so browsers cache them for good and a new build is fetched at once. Nothing comes from a CDN.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { FastifyInstance } from 'fastify';

const ASSETS_DIR = new URL('../../public/console/', import.meta.url);
const TYPES: Record<string, string> = {
  'styles.css': 'text/css; charset=utf-8',
  'console.js': 'text/javascript; charset=utf-8',
};

const assets = new Map(
  Object.entries(TYPES).map(([name, type]) => {
    const body = fs.readFileSync(new URL(name, ASSETS_DIR));
    const hash = crypto.createHash('sha256').update(body).digest('hex').slice(0, 12);
    return [name, { body, type, hash }];
  }),
);

export function assetUrl(name: keyof typeof TYPES | string): string {
  return `/console/assets/${name}?v=${assets.get(name)?.hash ?? '0'}`;
}

export async function assetRoutes(app: FastifyInstance) {
  app.get<{ Params: { name: string } }>(
    '/assets/:name',
    { schema: { hide: true }, config: { consoleAccess: 'public' } },
    async (request, reply) => {
      const asset = assets.get(request.params.name);
      if (!asset) return reply.callNotFound();
      return reply
        .type(asset.type)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .send(asset.body);
    },
  );
}
