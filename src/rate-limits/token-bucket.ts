/**
 * The token bucket, and the in-process store that keeps buckets in a Map.
 *
 * A bucket holds at most `burst` tokens and gains `perSecond` tokens per second; a request takes
 * `cost` tokens (1), a refund gives them back (negative cost). An absent bucket is a full one, so
 * a bucket can be forgotten as soon as it is full again. The same arithmetic runs in the Redis
 * Lua script (./redis-store.ts); keep the two in step.
 */

/** The numbers of one bucket. */
export interface BucketLimits {
  /** Tokens gained per second (the steady rate). */
  perSecond: number;
  /** Capacity: the requests that may arrive at once after a quiet period. */
  burst: number;
}

/** The answer for one request, as the RateLimit-* and Retry-After headers need it. */
export interface Decision {
  allowed: boolean;
  /** The bucket's capacity (RateLimit-Limit). */
  limit: number;
  /** Whole tokens left after this request (RateLimit-Remaining). */
  remaining: number;
  /** Milliseconds until the bucket is full again (RateLimit-Reset, rounded up to seconds). */
  resetMs: number;
  /** Milliseconds until `cost` tokens are available; 0 when allowed. */
  retryAfterMs: number;
}

/** Where buckets live: this process, or Redis shared by every process. */
export interface BucketStore {
  /** Takes `cost` tokens when available (a negative cost refunds); `nowMs` is the caller's time. */
  consume(key: string, limits: BucketLimits, nowMs: number, cost?: number): Promise<Decision>;
  close(): Promise<void>;
}

export interface BucketState {
  tokens: number;
  /** When `tokens` was computed, in milliseconds. */
  at: number;
}

// Refill adds fractions (elapsed * rate / 1000); the tolerance keeps 0.1 * 10 counting as 1 token.
const EPSILON = 1e-6;

/** Pure token-bucket step: the new state (undefined when full again) and the decision. */
export function takeTokens(
  state: BucketState | undefined,
  limits: BucketLimits,
  nowMs: number,
  cost: number,
): { state: BucketState | undefined; decision: Decision } {
  const { perSecond, burst } = limits;
  let tokens = burst;
  let at = nowMs;
  if (state) {
    // A clock that goes backwards (another process's time) refills nothing.
    const elapsed = Math.max(0, nowMs - state.at);
    tokens = Math.min(burst, state.tokens + (elapsed * perSecond) / 1000);
    at = Math.max(state.at, nowMs);
  }
  let allowed = true;
  if (cost > 0) {
    allowed = tokens + EPSILON >= cost;
    if (allowed) tokens -= cost;
  } else {
    tokens = Math.min(burst, tokens - cost);
  }
  const missing = Math.max(0, burst - tokens);
  const resetMs = missing <= EPSILON ? 0 : Math.ceil((missing * 1000) / perSecond);
  const retryAfterMs = allowed ? 0 : Math.ceil(((cost - tokens) * 1000) / perSecond);
  return {
    state: resetMs === 0 ? undefined : { tokens, at },
    decision: {
      allowed,
      limit: burst,
      remaining: Math.max(0, Math.floor(tokens + EPSILON)),
      resetMs,
      retryAfterMs,
    },
  };
}

/** Buckets kept in this process (the default, and the fallback while Redis is unreachable). */
export function createMemoryStore(options: { maxBuckets?: number } = {}): BucketStore & { size(): number } {
  const maxBuckets = options.maxBuckets ?? 100_000;
  const buckets = new Map<string, BucketState & { fullAt: number }>();

  function makeRoom(nowMs: number) {
    for (const [key, bucket] of buckets) if (bucket.fullAt <= nowMs) buckets.delete(key);
    // Still full of live buckets: forget the oldest (Map order is insertion order).
    while (buckets.size >= maxBuckets) buckets.delete(buckets.keys().next().value as string);
  }

  return {
    async consume(key, limits, nowMs, cost = 1) {
      const { state, decision } = takeTokens(buckets.get(key), limits, nowMs, cost);
      if (!state) {
        buckets.delete(key);
      } else {
        if (!buckets.has(key) && buckets.size >= maxBuckets) makeRoom(nowMs);
        buckets.set(key, { ...state, fullAt: state.at + decision.resetMs });
      }
      return decision;
    },
    async close() {
      buckets.clear();
    },
    size: () => buckets.size,
  };
}
