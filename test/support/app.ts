/** Boots the real app on a fresh database for one test file, with helpers for both surfaces. */
import { Writable } from 'node:stream';
import type { FastifyInstance, FastifyPluginAsync, InjectOptions, LightMyRequestResponse } from 'fastify';
import { SCOPES } from '../../src/api-keys/service.js';
import { buildApp } from '../../src/app.js';
import type { Clock } from '../../src/core/clock.js';
import { type Config, loadConfig } from '../../src/core/config/config.js';
import type { Database } from '../../src/core/db/database.js';
import type { JobLogger } from '../../src/core/jobs/runner.js';
import { type Adapters, createServices, type Services } from '../../src/services.js';
import { createTestDatabase } from './databases.js';

export const ADMIN_TOKEN = 'test-admin-token-0123456789';

export type Method = 'GET' | 'POST' | 'PATCH' | 'PUT' | 'DELETE';

export interface TestResponse {
  status: number;
  headers: LightMyRequestResponse['headers'];
  body: any;
  raw: string;
}

export interface TestApp {
  app: FastifyInstance;
  services: Services;
  config: Config;
  /** Every log line the app wrote, parsed. */
  logs: string[];
  /** A raw request through app.inject. */
  inject(options: InjectOptions): Promise<TestResponse>;
  /** An operator request with the ADMIN_TOKEN. */
  admin(method: Method, url: string, body?: unknown, headers?: Record<string, string>): Promise<TestResponse>;
  /** A partner request with the given API key. */
  partner(
    key: string,
    method: Method,
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<TestResponse>;
  close(): Promise<void>;
}

export interface TestAppOptions {
  clock?: Clock;
  env?: Record<string, string>;
  /** Adapters replacing those the configuration picks (fakes, wrappers, hand-moved time). */
  adapters?: (context: { config: Config; database: Database }) => Partial<Adapters>;
  /** Test-only routes (e.g. handlers that fail on purpose), after each surface's own. */
  extraRoutes?: { partner?: FastifyPluginAsync[]; root?: FastifyPluginAsync[] };
  /** Logger for background jobs (the app's request logs are captured in `logs` regardless). */
  jobLogger?: JobLogger;
}

function toResponse(response: LightMyRequestResponse): TestResponse {
  let body: any;
  try {
    body = response.body ? JSON.parse(response.body) : undefined;
  } catch {
    body = undefined;
  }
  return { status: response.statusCode, headers: response.headers, body, raw: response.body };
}

export async function startTestApp(options: TestAppOptions = {}): Promise<TestApp> {
  const { database, drop } = await createTestDatabase();
  const config = loadConfig({
    ADMIN_TOKEN,
    LOG_LEVEL: 'info',
    PUBLIC_BASE_URL: 'http://voiceplane.test',
    // Tests hash many passwords: keep Argon2id cheap here (production default is 19456 KiB).
    PASSWORD_HASH_MEMORY_KIB: '1024',
    // Compressed simulated time: calls end as soon as they are answered (docs/engines.md).
    SIMULATED_REALTIME: 'false',
    // The tests' SMTP servers listen on 127.0.0.1; test/emails/smtp-guard.test.ts turns the guard on.
    SMTP_ALLOW_PRIVATE: 'true',
    ...options.env,
  });
  const logs: string[] = [];
  const logStream = new Writable({
    write(chunk, _encoding, callback) {
      logs.push(...String(chunk).split('\n').filter(Boolean));
      callback();
    },
  });
  const adapters = { ...options.adapters?.({ config, database }) };
  if (options.clock) adapters.clock = options.clock;
  const services = createServices({ config, database, adapters, logger: options.jobLogger });
  const app = await buildApp(services, { logStream, extraRoutes: options.extraRoutes });
  await app.ready();

  const inject = async (injectOptions: InjectOptions) => toResponse(await app.inject(injectOptions));
  const send = (
    method: Method,
    url: string,
    authorization: string,
    body?: unknown,
    headers: Record<string, string> = {},
  ) =>
    inject({
      method,
      url,
      headers: {
        authorization: `Bearer ${authorization}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      payload: body === undefined ? undefined : JSON.stringify(body),
    });

  return {
    app,
    services,
    config,
    logs,
    inject,
    admin: (method, url, body, headers) => send(method, url, ADMIN_TOKEN, body, headers),
    partner: (key, method, url, body, headers) => send(method, url, key, body, headers),
    async close() {
      await services.jobRunner.stop();
      await app.close();
      await drop();
    },
  };
}

export interface TestTenant {
  id: string;
  key: string;
  keyId: string;
  /** A partner request with this tenant's all-scope key. */
  request(
    method: Method,
    url: string,
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<TestResponse>;
}

/** A tenant with an API key (every scope unless given). */
export async function createTenant(
  t: TestApp,
  options: { name?: string; scopes?: string[] } = {},
): Promise<TestTenant> {
  const tenant = await t.admin('POST', '/admin/v1/tenants', { name: options.name ?? 'Acme Agency' });
  if (tenant.status !== 201) throw new Error(`tenant: ${tenant.raw}`);
  const key = await t.admin('POST', `/admin/v1/tenants/${tenant.body.data.id}/api-keys`, {
    scopes: options.scopes ?? [...SCOPES],
  });
  if (key.status !== 201) throw new Error(`key: ${key.raw}`);
  return {
    id: tenant.body.data.id,
    key: key.body.data.key,
    keyId: key.body.data.id,
    request: (method, url, body, headers) => t.partner(key.body.data.key, method, url, body, headers),
  };
}

export const planInput = (overrides: Record<string, unknown> = {}) => ({
  name: 'Starter',
  provider: 'agency',
  currency: 'usd',
  monthly_price: 2900,
  annual_price: 29000,
  included_minutes: 100,
  overage_rate: 0.12,
  topup_rate: 0.1,
  ...overrides,
});

export async function createPlan(t: TestApp, tenantId: string, overrides: Record<string, unknown> = {}) {
  const response = await t.admin('POST', `/admin/v1/tenants/${tenantId}/plans`, planInput(overrides));
  if (response.status !== 201) throw new Error(`plan: ${response.raw}`);
  return response.body.data;
}

let userCounter = 0;
export async function createUser(tenant: TestTenant, overrides: Record<string, unknown> = {}) {
  userCounter++;
  const response = await tenant.request('POST', '/api/v1/users', {
    email: `user${userCounter}-${Date.now()}@example.com`,
    name: `User ${userCounter}`,
    password: 'correct horse',
    ...overrides,
  });
  if (response.status !== 201) throw new Error(`user: ${response.raw}`);
  return response.body.data as { id: string; email: string; name: string; created_at: string };
}

export { SCOPES };
