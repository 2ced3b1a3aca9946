/** The limits (docs/design-choices.md), each a token bucket; see README "Rate limits". */
import type { BucketLimits } from './token-bucket.js';

export interface RateLimitPolicies {
  /** Per partner API key; a tenant may have its own numbers (PATCH /admin/v1/tenants/{id}). */
  partner: BucketLimits;
  /** Per client IP, counting only partner requests that fail authentication (401). */
  unauthenticated: BucketLimits;
  /** Per webhook id (routes with `config.rateLimit: 'webhook'`). */
  webhook: BucketLimits;
  /** Failed sign-ins per tenant + email: 10, then one more every 90 s (10 per 15 minutes). */
  signInAccount: BucketLimits;
  /** Failed sign-ins per client IP, over every account. */
  signInIp: BucketLimits;
  /** Password-reset requests per tenant + email, every request counted: 5, then one every 12 min. */
  passwordResetAccount: BucketLimits;
  /** Password-reset requests per client IP, over every account. */
  passwordResetIp: BucketLimits;
}

const FIFTEEN_MINUTES_S = 15 * 60;
const HOUR_S = 60 * 60;

export const DEFAULT_POLICIES: RateLimitPolicies = {
  partner: { perSecond: 100, burst: 200 },
  unauthenticated: { perSecond: 10, burst: 100 },
  webhook: { perSecond: 10, burst: 20 },
  signInAccount: { perSecond: 10 / FIFTEEN_MINUTES_S, burst: 10 },
  signInIp: { perSecond: 100 / FIFTEEN_MINUTES_S, burst: 100 },
  passwordResetAccount: { perSecond: 5 / HOUR_S, burst: 5 },
  passwordResetIp: { perSecond: 100 / FIFTEEN_MINUTES_S, burst: 100 },
};
