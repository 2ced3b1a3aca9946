/**
 * Buckets in Redis, shared by every process that points at the same REDIS_URL. Each step is one
 * Lua script (read, refill, take, write, expire) so concurrent processes never lose an update.
 *
 * Redis is an accelerator here, not a dependency: while it is unreachable (refused, timed out,
 * restarting) every request is answered from the in-process fallback store, one warning is
 * logged per outage, and the first successful command afterwards switches back. Commands never
 * queue while disconnected (enableOfflineQueue: false) and time out fast, so an outage costs
 * requests no waiting.
 */
import { Redis } from 'ioredis';
import type { BucketLimits, BucketStore, Decision } from './token-bucket.js';

// The same arithmetic as takeTokens() in ./token-bucket.ts. The hash holds t (tokens) and at (ms);
// a full bucket is deleted, and every key expires once it would be full again.
const TAKE_TOKENS_LUA = `
local rate = tonumber(ARGV[1])
local burst = tonumber(ARGV[2])
local now = tonumber(ARGV[3])
local cost = tonumber(ARGV[4])
local eps = 1e-6
local tokens = burst
local at = now
local saved = redis.call('HMGET', KEYS[1], 't', 'at')
if saved[1] and saved[2] then
  local savedAt = tonumber(saved[2])
  tokens = math.min(burst, tonumber(saved[1]) + math.max(0, now - savedAt) * rate / 1000)
  at = math.max(savedAt, now)
end
local allowed = 1
if cost > 0 then
  if tokens + eps >= cost then tokens = tokens - cost else allowed = 0 end
else
  tokens = math.min(burst, tokens - cost)
end
local missing = math.max(0, burst - tokens)
local reset = 0
if missing > eps then reset = math.ceil(missing * 1000 / rate) end
local retry = 0
if allowed == 0 then retry = math.ceil((cost - tokens) * 1000 / rate) end
if reset == 0 then
  redis.call('DEL', KEYS[1])
else
  redis.call('HSET', KEYS[1], 't', string.format('%.17g', tokens), 'at', string.format('%.17g', at))
  redis.call('PEXPIRE', KEYS[1], reset + 1000)
end
return { allowed, math.max(0, math.floor(tokens + eps)), reset, retry }
`;

type RedisWithScript = Redis & {
  vpTakeTokens(key: string, perSecond: number, burst: number, nowMs: number, cost: number): Promise<number[]>;
};

/** Where the outage warning and the recovery notice go (the app's logger once it exists). */
export interface StoreLogger {
  warn(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface RedisStoreOptions {
  url: string;
  /** Answers while Redis is unreachable. */
  fallback: BucketStore;
  logger: () => StoreLogger;
  keyPrefix?: string;
  /** A command slower than this counts as an outage for that request (ms). */
  commandTimeoutMs?: number;
  /** How long requests skip Redis after a failed command before one tries again (ms). */
  retryAfterFailureMs?: number;
  /** How long one connection attempt may take (ms). */
  connectTimeoutMs?: number;
}

/**
 * Failed connection attempts in a row, before the first connection, that make an outage. One is
 * not: the attempt starts while the process is still building its app, and a busy event loop
 * (a loaded machine, several processes booting) makes its connect time out although Redis is
 * there. The retries run once start-up is over.
 */
const FAILED_ATTEMPTS_BEFORE_FIRST_OUTAGE = 3;

export interface RedisBucketStore extends BucketStore {
  /** True while answers come from Redis (false during an outage). */
  healthy(): boolean;
  /** Resolves once connected (or rejects after timeoutMs); requests never wait for this. */
  ready(timeoutMs?: number): Promise<void>;
}

export function createRedisStore(options: RedisStoreOptions): RedisBucketStore {
  const prefix = options.keyPrefix ?? 'vp:rl:';
  const redis = new Redis(options.url, {
    enableOfflineQueue: false,
    maxRetriesPerRequest: 0,
    commandTimeout: options.commandTimeoutMs ?? 250,
    connectTimeout: options.connectTimeoutMs ?? 1000,
    // Keep trying to reconnect, at most a second apart, so recovery is noticed quickly.
    retryStrategy: (attempt) => Math.min(attempt * 100, 1000),
  }) as RedisWithScript;
  redis.defineCommand('vpTakeTokens', { numberOfKeys: 1, lua: TAKE_TOKENS_LUA });

  let outage = false;
  let closing = false;
  // After a failed command on a connection that still looks alive (a stalled Redis), requests skip
  // Redis for a moment instead of each waiting for the command timeout; then one tries again.
  let skipUntil = 0;

  function markDown(error: unknown) {
    if (outage || closing) return;
    outage = true;
    options
      .logger()
      .warn(
        { err: error instanceof Error ? { message: error.message } : error },
        'rate limiter: Redis unreachable, answering from this process only until it returns',
      );
  }
  function markUp() {
    if (!outage) return;
    outage = false;
    options.logger().info({}, 'rate limiter: Redis reachable again, limits are shared again');
  }

  let connectedOnce = false;
  let failedAttempts = 0;
  let lastError: unknown;
  // Connection errors are reported through markDown; without a listener ioredis prints each retry.
  redis.on('error', (error) => {
    lastError = error;
    if (connectedOnce) markDown(error);
  });
  redis.on('ready', () => {
    connectedOnce = true;
    skipUntil = 0;
    markUp();
  });
  // Every connection attempt, failed or lost, ends with 'close'.
  redis.on('close', () => {
    if (closing) return;
    if (connectedOnce) markDown(new Error('connection closed'));
    else if (++failedAttempts >= FAILED_ATTEMPTS_BEFORE_FIRST_OUTAGE)
      markDown(lastError ?? new Error('connection closed'));
  });

  return {
    async consume(key: string, limits: BucketLimits, nowMs: number, cost = 1): Promise<Decision> {
      if (redis.status === 'ready' && Date.now() >= skipUntil) {
        try {
          const [allowed, remaining, resetMs, retryAfterMs] = await redis.vpTakeTokens(
            prefix + key,
            limits.perSecond,
            limits.burst,
            Math.round(nowMs),
            cost,
          );
          markUp();
          return { allowed: allowed === 1, limit: limits.burst, remaining, resetMs, retryAfterMs };
        } catch (error) {
          skipUntil = Date.now() + (options.retryAfterFailureMs ?? 1000);
          markDown(error);
        }
      }
      return options.fallback.consume(key, limits, nowMs, cost);
    },
    healthy: () => redis.status === 'ready' && !outage,
    ready(timeoutMs = 5000) {
      if (redis.status === 'ready') return Promise.resolve();
      return new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          redis.off('ready', onReady);
          reject(new Error(`Redis at ${options.url} not ready after ${timeoutMs} ms`));
        }, timeoutMs);
        const onReady = () => {
          clearTimeout(timer);
          resolve();
        };
        redis.once('ready', onReady);
      });
    },
    async close() {
      closing = true;
      await options.fallback.close();
      if (redis.status === 'ready') {
        await Promise.race([
          redis.quit().catch(() => {}),
          new Promise((resolve) => setTimeout(resolve, 500)),
        ]);
      }
      redis.disconnect();
    },
  };
}
