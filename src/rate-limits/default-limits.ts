import type { Config } from '../core/config/config.js';
import type { Database } from '../core/db/database.js';
import { createRedisStore } from './redis-store.js';
import { createRateLimits, type RateLimits } from './service.js';
import { createMemoryStore } from './token-bucket.js';

/** Rate-limit buckets in this process, or shared in Redis when REDIS_URL is set. */
export function defaultRateLimits(config: Config, database: Database): RateLimits {
  if (!config.redisUrl) return createRateLimits({ db: database.db, policies: config.rateLimits });
  // The store warns through the limits' logger, which the app replaces with its own once built.
  const limits: RateLimits = createRateLimits({
    db: database.db,
    policies: config.rateLimits,
    store: createRedisStore({
      url: config.redisUrl,
      keyPrefix: config.redisKeyPrefix,
      fallback: createMemoryStore(),
      logger: () => limits.logger(),
    }),
  });
  return limits;
}
