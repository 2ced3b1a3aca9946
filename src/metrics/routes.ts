/**
 * GET /metrics in Prometheus's text format (service.ts says what it holds), and the hook that
 * times every request by its route pattern. With METRICS_TOKEN set the scrape needs
 * `Authorization: Bearer <METRICS_TOKEN>`; without it the endpoint is open, for a scraper on a
 * private network (README, "Metrics").
 */
import type { FastifyInstance } from 'fastify';
import { bearerRefused, bearerToken, constantTimeEquals } from '../core/http/auth.js';
import type { Metrics } from './registry.js';
import type { MetricsService } from './service.js';

/** Times every answer, labelled with the route's pattern (never its values) or `unmatched`. */
export function registerRequestMetrics(app: FastifyInstance, metrics: Metrics): void {
  app.addHook('onResponse', (request, reply, done) => {
    metrics.observeRequest(
      request.method,
      request.routeOptions.url ?? 'unmatched',
      reply.statusCode,
      reply.elapsedTime / 1000,
    );
    if (request.rateLimitRefused) metrics.rateLimitRefused(request.rateLimitRefused);
    done();
  });
}

export async function metricsRoutes(
  app: FastifyInstance,
  options: { metrics: MetricsService; token: string | undefined },
) {
  const { metrics, token } = options;
  app.get('/metrics', { schema: { hide: true } }, async (request, reply) => {
    const presented = bearerToken(request);
    if (token && (!presented || !constantTimeEquals(presented, token))) {
      throw bearerRefused(
        'A valid metrics token is required: Authorization: Bearer <METRICS_TOKEN>.',
        presented,
      );
    }
    const scrape = await metrics.scrape();
    return reply
      .header('content-type', scrape.contentType)
      .header('cache-control', 'no-store')
      .send(scrape.body);
  });
}
