/**
 * The Redis the suites use: TEST_REDIS_URL (default redis://127.0.0.1:6379; a database number as
 * its path, e.g. redis://127.0.0.1:6379/7, keeps the tests' keys out of database 0), and
 * TEST_REDIS_PREFIX (default `vp:test:`) before every key a test writes.
 */
import crypto from 'node:crypto';
import { Redis } from 'ioredis';

export const TEST_REDIS_URL = process.env.TEST_REDIS_URL || 'redis://127.0.0.1:6379';
export const TEST_REDIS_PREFIX = process.env.TEST_REDIS_PREFIX || 'vp:test:';

/** A key prefix of one test's own, under TEST_REDIS_PREFIX. */
export function testRedisPrefix(): string {
  return `${TEST_REDIS_PREFIX}${crypto.randomBytes(6).toString('hex')}:`;
}

/** Whether a Redis server answers at `url` (suites that need one skip with a message otherwise). */
export async function redisAnswers(url: string): Promise<boolean> {
  const client = new Redis(url, {
    lazyConnect: true,
    connectTimeout: 1000,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    return (await client.ping()) === 'PONG';
  } catch {
    return false;
  } finally {
    client.disconnect();
  }
}
