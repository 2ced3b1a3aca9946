/**
 * A surface's static files (stylesheet, small scripts), read once from public/<surface>/ at the
 * repository root (the same path from src/ under tsx and from dist/) and served with a content
 * hash in the URL, so browsers cache them for good and a new build is fetched at once. Nothing
 * comes from a CDN.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { FastifyReply } from 'fastify';

export interface StaticAssets {
  has(name: string): boolean;
  /** The content hash that goes into the asset's URL (`?v=`). */
  hashOf(name: string): string;
  send(reply: FastifyReply, name: string): FastifyReply;
}

/** `folder` is the surface's folder under public/ ('console', 'portal'); `types` maps file name → content type. */
export function loadAssets(folder: string, types: Record<string, string>): StaticAssets {
  const dir = new URL(`../../public/${folder}/`, import.meta.url);
  const assets = new Map(
    Object.entries(types).map(([name, type]) => {
      const body = fs.readFileSync(new URL(name, dir));
      const hash = crypto.createHash('sha256').update(body).digest('hex').slice(0, 12);
      return [name, { body, type, hash }];
    }),
  );
  return {
    has: (name) => assets.has(name),
    hashOf: (name) => assets.get(name)?.hash ?? '0',
    send(reply, name) {
      const asset = assets.get(name);
      if (!asset) throw new Error(`no ${folder} asset ${name}`);
      return reply
        .type(asset.type)
        .header('cache-control', 'public, max-age=31536000, immutable')
        .send(asset.body);
    },
  };
}
