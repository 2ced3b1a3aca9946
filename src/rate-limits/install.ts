/**
 * Rate limits and abuse protection (decisions.md §8): token buckets per API key, per webhook id,
 * per client IP for failed authentication, and per account and IP for failed sign-ins. Buckets
 * live in this process, or in Redis when REDIS_URL is set (shared by every process, with the
 * in-process store answering while Redis is unreachable). The HTTP hooks are registered by
 * buildApp through ./hooks.ts.
 */
import type { Services } from '../app.js';
import { createRedisStore } from './redis-store.js';
import { createRateLimits, type RateLimits } from './service.js';
import { createMemoryStore } from './token-bucket.js';

declare module '../app.js' {
  interface Services {
    /**
     * Rate limits (set by installRateLimits; optional because createServices builds Services
     * before the features run). Tests may swap it (e.g. for a hand-moved time source) before buildApp.
     */
    rateLimits?: RateLimits;
  }
}

export function installRateLimits(services: Services): void {
  const db = services.database.db;
  const redisUrl = services.config.redisUrl;
  let rateLimits: RateLimits;
  if (redisUrl) {
    const store = createRedisStore({
      url: redisUrl,
      fallback: createMemoryStore(),
      logger: () => rateLimits.logger(),
    });
    rateLimits = createRateLimits({ db, store, policies: services.config.rateLimits });
  } else {
    rateLimits = createRateLimits({ db, policies: services.config.rateLimits });
  }
  services.rateLimits = rateLimits;
  services.closeHooks.push(async () => {
    await rateLimits.close();
    // A test may have swapped in its own before the app was built.
    if (services.rateLimits && services.rateLimits !== rateLimits) await services.rateLimits.close();
  });
}
