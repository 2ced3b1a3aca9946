/**
 * On a tenant's verified custom domain only what belongs to the tenant's clients answers: its
 * portal, and its agents' call-trigger webhooks (so a webhook URL can carry the agency's domain).
 * Everything of the platform (the partner and operator APIs, the console, /docs, /metrics) answers
 * 404 there (the root redirects to the portal): a client who strays from the portal never lands on the platform's pages.
 * Requests to the platform's own host or to an IP address (load balancers, health checks, the
 * bench) never wait for a lookup.
 */
import type { FastifyInstance } from 'fastify';
import { notFound } from '../core/errors.js';
import { sendApiError } from '../core/http/error-handler.js';
import type { BrandingService } from './service.js';

const CLIENT_PATHS = /^\/(?:portal(?:[/?#]|$)|webhooks\/agents\/)/;

export function registerCustomDomainGuard(app: FastifyInstance, branding: BrandingService): void {
  app.addHook('onRequest', (request, reply, done) => {
    const host = request.headers.host;
    if (CLIENT_PATHS.test(request.url) || !branding.mayBeCustomDomain(host)) return done();
    branding.forHost(host).then(
      // Sent here, in the envelope, whatever surface the path belongs to: the console's own
      // error pages carry the platform's name.
      (brand) => {
        if (!brand) return done();
        // The domain's root is where a client types it in: the portal.
        if (request.method === 'GET' && request.url === '/') return reply.redirect('/portal', 302);
        return sendApiError(request, reply, notFound('Page'));
      },
      (error: Error) => done(error),
    );
  });
}
