/**
 * The portal's stylesheet and its one script (the reset page's, which moves the link's token from
 * the fragment into the form), from public/portal/, served under each portal's own path
 * (`{base}/assets/styles.css?v=<hash>`), so a custom domain serves everything itself and nothing
 * points at the platform; the Content-Security-Policy allows scripts from 'self' only.
 */
import type { FastifyReply } from 'fastify';
import { loadAssets } from '../web/assets.js';

const assets = loadAssets('portal', {
  'styles.css': 'text/css; charset=utf-8',
  'reset-password.js': 'text/javascript; charset=utf-8',
});

/** `/portal/acme/assets/styles.css`, `/portal/assets/styles.css`: the asset's name, when it is one. */
export function assetNameOf(portalPath: string): string | undefined {
  const match = /^(?:\/[^/]+)?\/assets\/([\w.-]+)$/.exec(portalPath);
  return match && assets.has(match[1]) ? match[1] : undefined;
}

export function assetUrl(base: string, name: string): string {
  return `${base}/assets/${name}?v=${assets.hashOf(name)}`;
}

export function sendAsset(reply: FastifyReply, name: string): FastifyReply {
  return assets.send(reply, name);
}
