/** The token bucket's guarantees, for any limits and any arrival times (no database, no server). */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { createMemoryStore, takeTokens } from '../../src/rate-limits/token-bucket.js';

const limitsArb = fc.record({
  perSecond: fc.oneof(fc.integer({ min: 1, max: 1000 }), fc.constant(10 / 900), fc.constant(1 / 3)),
  burst: fc.integer({ min: 1, max: 500 }),
});
const gapsArb = fc.array(
  fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 50 }), fc.integer({ min: 0, max: 5000 })),
  {
    maxLength: 300,
  },
);

describe('token bucket', () => {
  it('never lets more than burst + rate × elapsed through, from any start', () => {
    fc.assert(
      fc.property(limitsArb, gapsArb, (limits, gaps) => {
        let state: ReturnType<typeof takeTokens>['state'];
        let now = 0;
        const allowedAt: number[] = [];
        for (const gap of gaps) {
          now += gap;
          const step = takeTokens(state, limits, now, 1);
          state = step.state;
          if (step.decision.allowed) allowedAt.push(now);
        }
        // Every window [allowedAt[i], allowedAt[j]] holds at most burst + rate × its length.
        for (let i = 0; i < allowedAt.length; i++) {
          for (let j = i; j < allowedAt.length; j++) {
            const budget = limits.burst + ((allowedAt[j] - allowedAt[i]) * limits.perSecond) / 1000;
            expect(j - i + 1).toBeLessThanOrEqual(Math.floor(budget + 1e-6));
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it('lets the next request through once Retry-After (rounded up to seconds) has passed', () => {
    fc.assert(
      fc.property(limitsArb, gapsArb, (limits, gaps) => {
        let state: ReturnType<typeof takeTokens>['state'];
        let now = 0;
        for (const gap of gaps) {
          now += gap;
          const step = takeTokens(state, limits, now, 1);
          state = step.state;
          if (!step.decision.allowed) {
            expect(step.decision.retryAfterMs).toBeGreaterThan(0);
            const wait = Math.max(1, Math.ceil(step.decision.retryAfterMs / 1000)) * 1000;
            expect(takeTokens(state, limits, now + wait, 1).decision.allowed).toBe(true);
            expect(takeTokens(state, limits, now + step.decision.retryAfterMs, 1).decision.allowed).toBe(
              true,
            );
          }
        }
      }),
      { numRuns: 200 },
    );
  });

  it('reports remaining, reset and limit consistently; refunds never exceed the burst', () => {
    const limits = { perSecond: 100, burst: 200 };
    let step = takeTokens(undefined, limits, 0, 1);
    expect(step.decision).toEqual({
      allowed: true,
      limit: 200,
      remaining: 199,
      resetMs: 10,
      retryAfterMs: 0,
    });
    step = takeTokens(step.state, limits, 0, -1);
    expect(step.state).toBeUndefined(); // full again: nothing to keep
    expect(takeTokens(undefined, limits, 0, -1).decision.remaining).toBe(200);
  });

  it('keeps memory bounded: full buckets are forgotten, the oldest go first when over the cap', async () => {
    const store = createMemoryStore({ maxBuckets: 100 });
    const limits = { perSecond: 10, burst: 5 };
    for (let i = 0; i < 100; i++) await store.consume(`k${i}`, limits, 0);
    expect(store.size()).toBe(100);
    // One second later every bucket is full again, so a new one makes room by dropping them.
    await store.consume('new', limits, 1000);
    expect(store.size()).toBe(1);
    for (let i = 0; i < 250; i++) await store.consume(`x${i}`, limits, 2000);
    expect(store.size()).toBeLessThanOrEqual(100);
    expect((await store.consume('x249', limits, 2000)).remaining).toBe(3);
  });
});
