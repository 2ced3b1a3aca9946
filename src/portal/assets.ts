/**
 * The portal's stylesheet and its one script (the reset page's, which moves the link's token from
 * the fragment into the form), read once from public/portal/ and served under each portal's own
 * path (`{base}/assets/styles.css?v=<hash>`), so a custom domain serves everything itself and
 * nothing points at the platform; the Content-Security-Policy allows scripts from 'self' only.
 * The hash in the URL lets browsers keep them for good.
 */
import crypto from 'node:crypto';
import fs from 'node:fs';
import type { FastifyReply } from 'fastify';

const ASSETS_DIR = new URL('../../public/portal/', import.meta.url);
const TYPES: Record<string, string> = {
  'styles.css': 'text/css; charset=utf-8',
  'reset-password.js': 'text/javascript; charset=utf-8',
};

const assets = new Map(
  Object.entries(TYPES).map(([name, type]) => {
    const body = fs.readFileSync(new URL(name, ASSETS_DIR));
    const hash = crypto.createHash('sha256').update(body).digest('hex').slice(0, 12);
    return [name, { body, type, hash }];
  }),
);

/** `/portal/acme/assets/styles.css`, `/portal/assets/styles.css`: the asset's name, when it is one. */
export function assetNameOf(portalPath: string): string | undefined {
  const match = /^(?:\/[^/]+)?\/assets\/([\w.-]+)$/.exec(portalPath);
  return match && assets.has(match[1]) ? match[1] : undefined;
}

export function assetUrl(base: string, name: string): string {
  return `${base}/assets/${name}?v=${assets.get(name)?.hash ?? '0'}`;
}

export function sendAsset(reply: FastifyReply, name: string): FastifyReply {
  const asset = assets.get(name);
  if (!asset) throw new Error(`no portal asset ${name}`);
  return reply
    .type(asset.type)
    .header('cache-control', 'public, max-age=31536000, immutable')
    .send(asset.body);
}
