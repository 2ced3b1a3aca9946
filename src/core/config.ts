/**
 * Configuration, read once from the environment and validated at boot.
 * Every variable is documented in the README's configuration table (decisions.md §1).
 */
import { isIP } from 'node:net';

export interface Config {
  port: number;
  host: string;
  /** undefined: embedded PGlite under dataDir; 'memory://': embedded in memory; postgres://…: a server. */
  databaseUrl: string | undefined;
  dataDir: string;
  redisUrl: string | undefined;
  /** Prefix of every rate-limit key in Redis (several deployments, or test runs, can share one Redis). */
  redisKeyPrefix: string;
  adminToken: string | undefined;
  apiKeyPrefix: string;
  publicBaseUrl: string;
  processor: 'simulated' | 'stripe';
  stripeSecretKey: string | undefined;
  stripeApiBase: string | undefined;
  telephony: 'simulated';
  simulatedCallSeconds: number;
  simulatedRealtime: boolean;
  seedDemo: boolean;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Background job workers in this process (0 turns them off: an API-only process). */
  workers: number;
  /** Argon2id memory (KiB) of new password hashes; t = 2, p = 1 are fixed (src/core/passwords.ts). */
  passwordHashMemoryKib: number;
  /** Days a finished (done or failed) job is kept before the maintenance job deletes it. */
  jobRetentionDays: number;
  /**
   * Which proxies' X-Forwarded-For to believe for the client address (per-IP rate limits, logs):
   * false (the socket's address), a hop count, or proxy addresses / CIDR ranges.
   */
  trustProxy: false | number | string[];
  /** Default token buckets (decisions.md §8); a tenant may get its own partner numbers. */
  rateLimits: {
    partner: { perSecond: number; burst: number };
    webhook: { perSecond: number; burst: number };
  };
}

export class ConfigError extends Error {
  constructor(
    readonly variable: string,
    problem: string,
  ) {
    super(`Invalid configuration: ${variable} ${problem}`);
    this.name = 'ConfigError';
  }
}

type Env = Record<string, string | undefined>;

function readInteger(env: Env, name: string, fallback: number, min: number, max: number): number {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!/^\d+$/.test(raw)) throw new ConfigError(name, `must be a whole number, got "${raw}"`);
  const value = Number(raw);
  if (value < min || value > max)
    throw new ConfigError(name, `must be between ${min} and ${max}, got ${value}`);
  return value;
}

function readBoolean(env: Env, name: string, fallback: boolean): boolean {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (raw === 'true' || raw === '1') return true;
  if (raw === 'false' || raw === '0') return false;
  throw new ConfigError(name, `must be true or false, got "${raw}"`);
}

function readEnum<T extends string>(env: Env, name: string, allowed: readonly T[], fallback: T): T {
  const raw = env[name];
  if (raw === undefined || raw === '') return fallback;
  if (!allowed.includes(raw as T))
    throw new ConfigError(name, `must be one of ${allowed.join(', ')}, got "${raw}"`);
  return raw as T;
}

function readUrl(env: Env, name: string, protocols: readonly string[]): string | undefined {
  const raw = env[name];
  if (raw === undefined || raw === '') return undefined;
  let url: URL;
  try {
    url = new URL(raw);
  } catch {
    throw new ConfigError(name, 'is not a valid URL');
  }
  if (!protocols.includes(url.protocol)) {
    throw new ConfigError(name, `must use one of ${protocols.join(', ')}`);
  }
  return raw;
}

/** Proxy addresses and CIDR ranges (`10.0.0.0/8`, `::1`), or a hop count. */
function readTrustProxy(env: Env): false | number | string[] {
  const raw = env.TRUST_PROXY?.trim();
  if (raw === undefined || raw === '' || raw === 'false') return false;
  if (/^\d+$/.test(raw)) return readInteger(env, 'TRUST_PROXY', 0, 1, 10);
  if (raw === 'true') {
    throw new ConfigError(
      'TRUST_PROXY',
      "true would let any client choose its address with X-Forwarded-For: give the number of proxy hops or the proxies' addresses",
    );
  }
  const entries = raw.split(',').map((entry) => entry.trim());
  for (const entry of entries) {
    const [address, bits, extra] = entry.split('/');
    const family = isIP(address);
    const maxBits = family === 6 ? 128 : 32;
    const validBits = bits === undefined || (/^\d+$/.test(bits) && Number(bits) <= maxBits);
    if (family === 0 || !validBits || extra !== undefined) {
      throw new ConfigError(
        'TRUST_PROXY',
        `must be a hop count or IP addresses / CIDR ranges, got "${entry}"`,
      );
    }
  }
  return entries;
}

function readRedisKeyPrefix(env: Env): string {
  const raw = env.REDIS_KEY_PREFIX;
  if (raw === undefined || raw === '') return 'vp:rl:';
  if (!/^[\x21-\x7e]{1,64}$/.test(raw)) {
    throw new ConfigError('REDIS_KEY_PREFIX', 'must be 1-64 printable ASCII characters without spaces');
  }
  return raw;
}

export function loadConfig(env: Env = process.env): Config {
  const port = readInteger(env, 'PORT', 3000, 0, 65535);
  const host = env.HOST || '127.0.0.1';
  const databaseUrl = readUrl(env, 'DATABASE_URL', ['postgres:', 'postgresql:', 'memory:']);
  const apiKeyPrefix = env.API_KEY_PREFIX || 'vp';
  if (!/^[a-z][a-z0-9]{0,15}$/.test(apiKeyPrefix)) {
    throw new ConfigError(
      'API_KEY_PREFIX',
      'must be 1-16 lowercase letters or digits, starting with a letter',
    );
  }
  const adminToken = env.ADMIN_TOKEN || undefined;
  if (adminToken !== undefined && adminToken.length < 16) {
    throw new ConfigError('ADMIN_TOKEN', 'must be at least 16 characters long');
  }
  const processor = readEnum(env, 'PROCESSOR', ['simulated', 'stripe'] as const, 'simulated');
  const stripeSecretKey = env.STRIPE_SECRET_KEY || undefined;
  if (processor === 'stripe' && !stripeSecretKey) {
    throw new ConfigError('STRIPE_SECRET_KEY', 'is required when PROCESSOR=stripe');
  }

  return {
    port,
    host,
    databaseUrl,
    dataDir: env.DATA_DIR || './data',
    redisUrl: readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisKeyPrefix: readRedisKeyPrefix(env),
    adminToken,
    apiKeyPrefix,
    publicBaseUrl: (
      readUrl(env, 'PUBLIC_BASE_URL', ['http:', 'https:']) ??
      `http://${host.includes(':') ? `[${host}]` : host}:${port}`
    ).replace(/\/+$/, ''),
    processor,
    stripeSecretKey,
    stripeApiBase: readUrl(env, 'STRIPE_API_BASE', ['http:', 'https:']),
    telephony: readEnum(env, 'TELEPHONY', ['simulated'] as const, 'simulated'),
    simulatedCallSeconds: readInteger(env, 'SIMULATED_CALL_SECONDS', 30, 0, 86400),
    simulatedRealtime: readBoolean(env, 'SIMULATED_REALTIME', false),
    seedDemo: readBoolean(env, 'SEED_DEMO', true),
    logLevel: readEnum(
      env,
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
      'info',
    ),
    workers: readInteger(env, 'WORKERS', 1, 0, 64),
    // 19456 KiB: OWASP's first Argon2id configuration (DEFAULT_PASSWORD_MEMORY_KIB).
    passwordHashMemoryKib: readInteger(env, 'PASSWORD_HASH_MEMORY_KIB', 19456, 1024, 4194304),
    trustProxy: readTrustProxy(env),
    jobRetentionDays: readInteger(env, 'JOB_RETENTION_DAYS', 7, 1, 3650),
    rateLimits: {
      partner: {
        perSecond: readInteger(env, 'RATE_LIMIT_PARTNER_PER_SECOND', 100, 1, 1_000_000_000),
        burst: readInteger(env, 'RATE_LIMIT_PARTNER_BURST', 200, 1, 1_000_000_000),
      },
      webhook: {
        perSecond: readInteger(env, 'RATE_LIMIT_WEBHOOK_PER_SECOND', 10, 1, 1_000_000_000),
        burst: readInteger(env, 'RATE_LIMIT_WEBHOOK_BURST', 20, 1, 1_000_000_000),
      },
    },
  };
}
