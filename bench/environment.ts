/** The service's environment during a bench run, and the operator token the harness uses. */
import crypto from 'node:crypto';
import { RECOMMENDED_MMAP_THRESHOLD } from '../src/core/config/memory.js';
import type { BenchOptions, Storage } from './options.js';
import { API_KEY_PREFIX } from './seed.js';

export const ADMIN_TOKEN = `bench-admin-${crypto.randomBytes(16).toString('hex')}`;

/** Rate limits must not cap the run: the default buckets are raised far above what 32 connections send. */
export function rateLimitEnv(): { env: Record<string, string>; notes: string[] } {
  const env = {
    RATE_LIMIT_PARTNER_PER_SECOND: '1000000',
    RATE_LIMIT_PARTNER_BURST: '1000000',
    RATE_LIMIT_WEBHOOK_PER_SECOND: '1000000',
    RATE_LIMIT_WEBHOOK_BURST: '1000000',
  };
  const notes = [
    `rate limits raised via ${Object.entries(env)
      .map(([k, v]) => `${k}=${v}`)
      .join(' ')}`,
  ];
  return { env, notes };
}

export function serviceEnv(
  options: BenchOptions,
  storage: Storage,
  location: string,
  port: number,
  extra: Record<string, string>,
) {
  return {
    NODE_ENV: 'production',
    LOG_LEVEL: 'warn',
    HOST: '127.0.0.1',
    PORT: String(port),
    PUBLIC_BASE_URL: '',
    DATABASE_URL: storage === 'postgres' ? location : '',
    DATA_DIR: storage === 'embedded' ? location : '',
    ADMIN_TOKEN,
    API_KEY_PREFIX,
    // Required with PostgreSQL; the bench's databases are thrown away, so any fixed key does.
    SECRETS_KEY: 'be9c4'.padEnd(64, '0'),
    SEED_DEMO: 'false',
    REDIS_URL: '',
    WEB_CONCURRENCY: '',
    // The production setting docs/production.md recommends ("Memory"): without it glibc keeps a
    // freed password-hash buffer per libuv thread, ~60 MB of peak RSS after users_create.
    MALLOC_MMAP_THRESHOLD_: String(RECOMMENDED_MMAP_THRESHOLD),
    // call_pipeline: calls are over as soon as the simulated carrier answers them.
    SIMULATED_CALL_SECONDS: '0',
    SIMULATED_REALTIME: 'false',
    // event_delivery: the receiver is a server in the bench process, on 127.0.0.1.
    WEBHOOK_ALLOW_PRIVATE: 'true',
    ...extra,
    ...options.env,
  };
}
