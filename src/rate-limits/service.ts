/**
 * The rate-limit rules: which bucket a request is counted in and with which numbers. Checks
 * return a Decision (a value); ./hooks.ts turns it into headers and 429 answers.
 *
 * Hot path: one bucket step (in-process, or one Redis round trip) and no database query; a
 * tenant's own partner limit is read at most once per `tenantCacheTtlMs` per process.
 */
import crypto from 'node:crypto';
import { BoundedMap } from '../core/bounded-map.js';
import type { Db } from '../core/db/database.js';
import type { ApiKeyPrincipal } from '../core/http/auth.js';
import { DEFAULT_POLICIES, type RateLimitPolicies } from './policies.js';
import type { StoreLogger } from './redis-store.js';
import { findTenantRateLimit } from './repository.js';
import { type BucketLimits, type BucketStore, createMemoryStore, type Decision } from './token-bucket.js';

/** A bucket a request was counted in, so it can be refunded (a sign-in that did not fail). */
export interface Charge {
  key: string;
  limits: BucketLimits;
}

export interface RateLimitsOptions {
  db: Db;
  /** Where buckets live; in this process when omitted. */
  store?: BucketStore;
  /** Milliseconds since the epoch; tests pass a hand-moved time to get exact numbers. */
  now?: () => number;
  policies?: Partial<RateLimitPolicies>;
  /** How long a tenant's own limit is cached per process (ms); a PATCH takes effect within it. */
  tenantCacheTtlMs?: number;
}

export interface RateLimits {
  readonly policies: RateLimitPolicies;
  readonly store: BucketStore;
  /** A partner request whose API key was verified: the key's bucket, at its tenant's numbers. */
  partnerKey(principal: ApiKeyPrincipal): Promise<Decision>;
  /** A partner request about to be refused with 401: the client IP's bucket. */
  unauthenticated(ip: string): Promise<Decision>;
  /** A webhook request: the webhook id's bucket. */
  webhook(webhookId: string): Promise<Decision>;
  /**
   * A sign-in attempt, counted up front (so parallel guesses cannot slip through) in the IP's
   * bucket and the tenant + email bucket; refund the charges when the attempt did not fail.
   */
  signInAttempt(
    ip: string,
    tenantId: string | undefined,
    email: string | undefined,
  ): Promise<{ decision: Decision; charges: Charge[] }>;
  refund(charges: Charge[]): Promise<void>;
  /**
   * A password-reset request, counted in the IP's bucket and the tenant + email bucket whatever
   * the answer (it is the same 202 for every email, so there is nothing to refund).
   */
  passwordReset(ip: string, tenantId: string | undefined, email: string | undefined): Promise<Decision>;
  /** The partner numbers of a tenant (its override or the default), cached. */
  tenantLimits(tenantId: string): Promise<BucketLimits>;
  /** Where store warnings go; the app sets its own logger when it is built. */
  setLogger(logger: StoreLogger): void;
  logger(): StoreLogger;
  close(): Promise<void>;
}

const TENANT_CACHE_MAX = 10_000;

/** Secrets and personal data (webhook ids, emails) never appear in bucket names. */
const digest = (value: string) => crypto.createHash('sha256').update(value).digest('base64url').slice(0, 22);

const consoleLogger: StoreLogger = {
  warn: (obj, msg) => console.warn(msg, obj),
  info: () => {},
};

export function createRateLimits(options: RateLimitsOptions): RateLimits {
  const { db } = options;
  const now = options.now ?? Date.now;
  const store = options.store ?? createMemoryStore();
  const policies: RateLimitPolicies = { ...DEFAULT_POLICIES, ...options.policies };
  const ttlMs = options.tenantCacheTtlMs ?? 1000;
  const tenantCache = new BoundedMap<string, { limits: BucketLimits; fetchedAt: number }>({
    maxEntries: TENANT_CACHE_MAX,
  });
  const inFlight = new Map<string, Promise<BucketLimits>>();
  let logger = consoleLogger;

  async function loadTenantLimits(tenantId: string): Promise<BucketLimits> {
    const row = await findTenantRateLimit(db, tenantId);
    const limits =
      row?.rate_limit_per_second && row.rate_limit_burst
        ? { perSecond: row.rate_limit_per_second, burst: row.rate_limit_burst }
        : policies.partner;
    tenantCache.set(tenantId, { limits, fetchedAt: now() });
    return limits;
  }

  async function tenantLimits(tenantId: string): Promise<BucketLimits> {
    const cached = tenantCache.get(tenantId);
    const age = cached ? now() - cached.fetchedAt : Number.POSITIVE_INFINITY;
    if (cached && age >= 0 && age < ttlMs) return cached.limits;
    let pending = inFlight.get(tenantId);
    if (!pending) {
      pending = loadTenantLimits(tenantId).finally(() => inFlight.delete(tenantId));
      inFlight.set(tenantId, pending);
    }
    return pending;
  }

  const take = (key: string, limits: BucketLimits, cost = 1) => store.consume(key, limits, now(), cost);

  return {
    policies,
    store,
    tenantLimits,
    async partnerKey(principal) {
      return take(`key:${principal.keyId}`, await tenantLimits(principal.tenantId));
    },
    unauthenticated: (ip) => take(`unauth:${ip}`, policies.unauthenticated),
    webhook: (webhookId) => take(`webhook:${digest(webhookId)}`, policies.webhook),
    async signInAttempt(ip, tenantId, email) {
      const ipCharge: Charge = { key: `signin-ip:${ip}`, limits: policies.signInIp };
      const byIp = await take(ipCharge.key, ipCharge.limits);
      if (!byIp.allowed) return { decision: byIp, charges: [] };
      if (tenantId === undefined || email === undefined) return { decision: byIp, charges: [ipCharge] };
      const accountCharge: Charge = {
        key: `signin:${digest(`${tenantId}\n${email.trim().toLowerCase()}`)}`,
        limits: policies.signInAccount,
      };
      const byAccount = await take(accountCharge.key, accountCharge.limits);
      if (!byAccount.allowed) {
        // A refused attempt checks no password, so it costs the IP nothing.
        await take(ipCharge.key, ipCharge.limits, -1);
        return { decision: byAccount, charges: [] };
      }
      const tighter = byAccount.remaining <= byIp.remaining ? byAccount : byIp;
      return { decision: tighter, charges: [ipCharge, accountCharge] };
    },
    async passwordReset(ip, tenantId, email) {
      const ipKey = `reset-ip:${ip}`;
      const byIp = await take(ipKey, policies.passwordResetIp);
      if (!byIp.allowed || tenantId === undefined || email === undefined) return byIp;
      const accountKey = `reset:${digest(`${tenantId}\n${email.trim().toLowerCase()}`)}`;
      const byAccount = await take(accountKey, policies.passwordResetAccount);
      // A refused request sends nothing, so it costs the IP nothing.
      if (!byAccount.allowed) await take(ipKey, policies.passwordResetIp, -1);
      return !byAccount.allowed || byAccount.remaining <= byIp.remaining ? byAccount : byIp;
    },
    async refund(charges) {
      for (const charge of charges) await take(charge.key, charge.limits, -1);
    },
    setLogger(next) {
      logger = next;
    },
    logger: () => logger,
    close: () => store.close(),
  };
}
