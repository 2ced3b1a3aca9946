/**
 * Configuration, read once from the environment and validated at boot.
 * Every variable is documented in the README's configuration table (docs/design-choices.md).
 */
import { isIP } from 'node:net';
import { parseSecretKey, type SecretKeys } from '../security/secrets.js';
import { type AgentCatalog, readAgentCatalog } from './agents.js';
import { type PlatformBrandConfig, readPlatformBrand } from './brand.js';
import { type RetellConfig, readEngines, type VapiConfig } from './engines.js';
import { ConfigError, type Env, readBoolean, readEnum, readInteger, readUrl } from './readers.js';

export type { AgentCatalog } from './agents.js';
export type { RetellConfig, VapiConfig } from './engines.js';
export { ConfigError } from './readers.js';

export interface Config {
  port: number;
  host: string;
  /** undefined: embedded PGlite under dataDir; 'memory://': embedded in memory; postgres://…: a server. */
  databaseUrl: string | undefined;
  dataDir: string;
  /** Time limits of PostgreSQL queries (the embedded database has none). */
  databaseTimeouts: DatabaseTimeouts;
  /** PostgreSQL connections this process opens at most (DB_POOL_SIZE); the embedded database has one. */
  databasePoolSize: number;
  redisUrl: string | undefined;
  /** Prefix of every rate-limit key in Redis (several deployments, or test runs, can share one Redis). */
  redisKeyPrefix: string;
  adminToken: string | undefined;
  /** Bearer token GET /metrics requires; without it the endpoint is open. */
  metricsToken: string | undefined;
  apiKeyPrefix: string;
  publicBaseUrl: string;
  /** The host name a custom portal domain's CNAME points at (PUBLIC_CNAME_TARGET; docs/white-label.md). */
  publicCnameTarget: string;
  processor: 'simulated' | 'stripe';
  stripeSecretKey: string | undefined;
  stripeApiBase: string | undefined;
  telephony: 'simulated' | 'vapi' | 'retell';
  /** The Vapi engine (TELEPHONY=vapi; docs/engines.md). */
  vapi: VapiConfig | undefined;
  /** The Retell engine (TELEPHONY=retell; docs/engines.md). */
  retell: RetellConfig | undefined;
  /** What agents may use on this engine, and the operator's default voice and model (core/config/agents.ts). */
  agents: AgentCatalog;
  simulatedCallSeconds: number;
  simulatedRealtime: boolean;
  seedDemo: boolean;
  /** Event webhooks may target http:// and private, loopback or link-local addresses (tests, on-premises). */
  webhookAllowPrivate: boolean;
  /** Tenants' SMTP servers may be loopback, private, link-local or metadata addresses (development, on-premises). */
  smtpAllowPrivate: boolean;
  /**
   * The platform's own SMTP server (PLATFORM_SMTP_URL, PLATFORM_EMAIL_FROM): sends console member
   * invitations of tenants without email settings of their own. Undefined: such invitations are
   * not emailed (the owner copies the link from the console).
   */
  platformEmail: { smtpUrl: string; from: string } | undefined;
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Job runners in this process (WORKERS; 0 turns them off: an API-only process). */
  jobRunners: number;
  /** Argon2id memory (KiB) of new password hashes; t = 2, p = 1 are fixed (src/core/security/passwords.ts). */
  passwordHashMemoryKib: number;
  /** Days a finished (done or failed) job is kept before the maintenance job deletes it. */
  jobRetentionDays: number;
  /** Jobs one claim takes (JOB_BATCH_SIZE); their steps run together (one statement per step). */
  jobBatchSize: number;
  /** Jobs a process runs at once (JOB_CONCURRENCY), claimed as slots free. */
  jobConcurrency: number;
  /** Milliseconds a job queued in this process waits so the next claim takes its neighbours too (JOB_WAKE_DELAY_MS). */
  jobWakeDelayMs: number;
  /** How long a claimed job is held before another process may take it (renewed while it runs). */
  jobLeaseMs: number;
  /**
   * Which proxies' X-Forwarded-For to believe for the client address (per-IP rate limits, logs):
   * false (the socket's address), a hop count, or proxy addresses / CIDR ranges.
   */
  trustProxy: false | number | string[];
  /**
   * Keys sealing stored third-party secrets (SECRETS_KEY, SECRETS_KEY_PREVIOUS). Undefined only on
   * the embedded database: the server then uses DATA_DIR/secrets.key (memory:// and tests: a key
   * of the process's own).
   */
  secretKeys: SecretKeys | undefined;
  /** The HTTP server's limits on slow and numerous clients (README, "Slow clients"). */
  http: HttpLimits;
  /** Default token buckets (docs/design-choices.md); a tenant may get its own partner numbers. */
  rateLimits: {
    partner: { perSecond: number; burst: number };
    webhook: { perSecond: number; burst: number };
  };
  /** The operator's brand by default (PLATFORM_NAME, PLATFORM_LOGO_URL, PLATFORM_COLOR; core/config/brand.ts). */
  platformBrand: PlatformBrandConfig;
}

export interface HttpLimits {
  /** A request's headers must have arrived within this time of its first byte. */
  headersTimeoutMs: number;
  /** The whole request (headers and body) must have arrived within this time. */
  requestTimeoutMs: number;
  /** How long an idle keep-alive connection stays open between requests. */
  keepAliveTimeoutMs: number;
  /** Open connections this process accepts at once; more are closed on arrival. */
  maxConnections: number;
}

/**
 * How long the service waits on PostgreSQL. A statement the server runs too long is cancelled by
 * the server (`statement_timeout`, the connection stays usable); a query the server does not
 * answer at all (a stalled network, a frozen host) is given up by the service after `queryMs` and
 * its connection discarded, which needs no answer from the peer. 0 turns a limit off.
 */
export interface DatabaseTimeouts {
  /** PostgreSQL's statement_timeout on every pooled connection (DB_STATEMENT_TIMEOUT_MS). */
  statementMs: number;
  /** How long a query may go unanswered before the service gives up on it (DB_QUERY_TIMEOUT_MS). */
  queryMs: number;
  /**
   * How long to wait for a connection: a new one's handshake, or a free one of the pool
   * (DB_CONNECT_TIMEOUT_MS). Short, so a database that is away (a failover, a lost host) is
   * answered with a 503 in about this time instead of holding requests.
   */
  connectMs: number;
}

export const DEFAULT_DATABASE_TIMEOUTS: DatabaseTimeouts = {
  statementMs: 10_000,
  queryMs: 15_000,
  connectMs: 2_000,
};

function readPlatformEmail(env: Env): Config['platformEmail'] {
  const smtpUrl = readUrl(env, 'PLATFORM_SMTP_URL', ['smtp:', 'smtps:']);
  const from = env.PLATFORM_EMAIL_FROM?.trim() || undefined;
  if (!smtpUrl && !from) return undefined;
  if (!smtpUrl) throw new ConfigError('PLATFORM_SMTP_URL', 'is required when PLATFORM_EMAIL_FROM is set');
  if (!from || !/@/.test(from)) {
    throw new ConfigError('PLATFORM_EMAIL_FROM', 'must be an email address when PLATFORM_SMTP_URL is set');
  }
  return { smtpUrl, from };
}

function readHttpLimits(env: Env): HttpLimits {
  const headersTimeoutMs = readInteger(env, 'HTTP_HEADERS_TIMEOUT_MS', 10_000, 100, 600_000);
  const requestTimeoutMs = readInteger(env, 'HTTP_REQUEST_TIMEOUT_MS', 30_000, 100, 3_600_000);
  // Node refuses a headers timeout longer than the request timeout.
  if (headersTimeoutMs > requestTimeoutMs) {
    throw new ConfigError(
      'HTTP_HEADERS_TIMEOUT_MS',
      `must not exceed HTTP_REQUEST_TIMEOUT_MS (${requestTimeoutMs}), got ${headersTimeoutMs}`,
    );
  }
  return {
    headersTimeoutMs,
    requestTimeoutMs,
    // Longer than the idle timeout of the load balancers usually in front (60 s), so a balancer
    // never sends a request on a connection this server is closing at that moment.
    keepAliveTimeoutMs: readInteger(env, 'HTTP_KEEP_ALIVE_TIMEOUT_MS', 72_000, 100, 3_600_000),
    maxConnections: readInteger(env, 'HTTP_MAX_CONNECTIONS', 4096, 1, 1_000_000),
  };
}

function readDatabaseTimeouts(env: Env): DatabaseTimeouts {
  const day = 86_400_000;
  const defaults = DEFAULT_DATABASE_TIMEOUTS;
  const statementMs = readInteger(env, 'DB_STATEMENT_TIMEOUT_MS', defaults.statementMs, 0, day);
  const queryMs = readInteger(env, 'DB_QUERY_TIMEOUT_MS', defaults.queryMs, 0, day);
  const connectMs = readInteger(env, 'DB_CONNECT_TIMEOUT_MS', defaults.connectMs, 100, day);
  // The server must get to cancel a slow statement first: giving up client-side discards the
  // connection, and would do so for every statement that is merely slow.
  if (queryMs !== 0 && statementMs === 0) {
    throw new ConfigError('DB_QUERY_TIMEOUT_MS', 'must be 0 (off) when DB_STATEMENT_TIMEOUT_MS is 0 (off)');
  }
  if (queryMs !== 0 && queryMs <= statementMs) {
    throw new ConfigError(
      'DB_QUERY_TIMEOUT_MS',
      `must be greater than DB_STATEMENT_TIMEOUT_MS (${statementMs}), got ${queryMs}`,
    );
  }
  return { statementMs, queryMs, connectMs };
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

const SECRET_KEY_FORMAT = 'must be 32 random bytes as 64 hex digits or base64 (openssl rand -base64 32)';

function readSecretKeys(env: Env, databaseUrl: string | undefined): SecretKeys | undefined {
  const previous = (env.SECRETS_KEY_PREVIOUS ?? '')
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry, index) => {
      const key = parseSecretKey(entry);
      if (!key) throw new ConfigError('SECRETS_KEY_PREVIOUS', `entry ${index + 1} ${SECRET_KEY_FORMAT}`);
      return key;
    });
  const raw = env.SECRETS_KEY;
  if (raw === undefined || raw === '') {
    if (databaseUrl && /^postgres(ql)?:/.test(databaseUrl)) {
      throw new ConfigError(
        'SECRETS_KEY',
        `is required with a PostgreSQL DATABASE_URL (it seals stored SMTP passwords): ${SECRET_KEY_FORMAT.replace('must be ', '')}`,
      );
    }
    if (previous.length > 0)
      throw new ConfigError('SECRETS_KEY', 'is required when SECRETS_KEY_PREVIOUS is set');
    return undefined;
  }
  const current = parseSecretKey(raw);
  if (!current) throw new ConfigError('SECRETS_KEY', SECRET_KEY_FORMAT);
  return { current, previous };
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
  const metricsToken = env.METRICS_TOKEN || undefined;
  if (metricsToken !== undefined && metricsToken.length < 16) {
    throw new ConfigError('METRICS_TOKEN', 'must be at least 16 characters long');
  }
  const processor = readEnum(env, 'PROCESSOR', ['simulated', 'stripe'] as const, 'simulated');
  const telephony = readEnum(env, 'TELEPHONY', ['simulated', 'vapi', 'retell'] as const, 'simulated');
  const stripeSecretKey = env.STRIPE_SECRET_KEY || undefined;
  if (processor === 'stripe' && !stripeSecretKey) {
    throw new ConfigError('STRIPE_SECRET_KEY', 'is required when PROCESSOR=stripe');
  }

  const engines = readEngines(env, telephony);

  return {
    port,
    host,
    databaseUrl,
    dataDir: env.DATA_DIR || './data',
    databaseTimeouts: readDatabaseTimeouts(env),
    databasePoolSize: readInteger(env, 'DB_POOL_SIZE', 10, 1, 1000),
    redisUrl: readUrl(env, 'REDIS_URL', ['redis:', 'rediss:']),
    redisKeyPrefix: readRedisKeyPrefix(env),
    adminToken,
    metricsToken,
    apiKeyPrefix,
    publicBaseUrl: (
      readUrl(env, 'PUBLIC_BASE_URL', ['http:', 'https:']) ??
      `http://${host.includes(':') ? `[${host}]` : host}:${port}`
    ).replace(/\/+$/, ''),
    publicCnameTarget: readCnameTarget(env, host, port),
    processor,
    stripeSecretKey,
    stripeApiBase: readUrl(env, 'STRIPE_API_BASE', ['http:', 'https:']),
    telephony,
    ...engines,
    agents: readAgentCatalog(env, telephony, engines.retell?.voiceId),
    simulatedCallSeconds: readInteger(env, 'SIMULATED_CALL_SECONDS', 30, 0, 86400),
    simulatedRealtime: readBoolean(env, 'SIMULATED_REALTIME', true),
    seedDemo: readBoolean(env, 'SEED_DEMO', true),
    webhookAllowPrivate: readBoolean(env, 'WEBHOOK_ALLOW_PRIVATE', false),
    smtpAllowPrivate: readBoolean(env, 'SMTP_ALLOW_PRIVATE', false),
    platformEmail: readPlatformEmail(env),
    logLevel: readEnum(
      env,
      'LOG_LEVEL',
      ['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'] as const,
      'info',
    ),
    jobRunners: readInteger(env, 'WORKERS', 1, 0, 64),
    // 19456 KiB: OWASP's first Argon2id configuration (DEFAULT_PASSWORD_MEMORY_KIB).
    passwordHashMemoryKib: readInteger(env, 'PASSWORD_HASH_MEMORY_KIB', 19456, 1024, 4194304),
    trustProxy: readTrustProxy(env),
    secretKeys: readSecretKeys(env, databaseUrl),
    http: readHttpLimits(env),
    jobRetentionDays: readInteger(env, 'JOB_RETENTION_DAYS', 7, 1, 3650),
    jobBatchSize: readInteger(env, 'JOB_BATCH_SIZE', 25, 1, 500),
    jobConcurrency: readInteger(env, 'JOB_CONCURRENCY', 100, 1, 2000),
    jobWakeDelayMs: readInteger(env, 'JOB_WAKE_DELAY_MS', 5, 0, 1000),
    jobLeaseMs: readInteger(env, 'JOB_LEASE_SECONDS', 15, 3, 600) * 1000,
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
    platformBrand: readPlatformBrand(env),
  };
}

/**
 * What a custom domain's CNAME record points at: PUBLIC_CNAME_TARGET (a DNS name), else the host
 * name of PUBLIC_BASE_URL (without its port: a DNS record names no port).
 */
function readCnameTarget(env: Env, host: string, port: number): string {
  const raw = env.PUBLIC_CNAME_TARGET?.trim().toLowerCase().replace(/\.$/, '');
  if (raw) {
    if (!/^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$/.test(raw)) {
      throw new ConfigError(
        'PUBLIC_CNAME_TARGET',
        `must be a DNS name such as portals.example.com, got "${raw}"`,
      );
    }
    return raw;
  }
  const base =
    readUrl(env, 'PUBLIC_BASE_URL', ['http:', 'https:']) ??
    `http://${host.includes(':') ? `[${host}]` : host}:${port}`;
  return new URL(base).hostname.replace(/^\[(.*)\]$/, '$1');
}
