/**
 * /healthz (the process is up) and /readyz (the database answers): 503 once the database is
 * closed, dropped or unreachable, while /healthz stays 200 and the API answers 5xx in the envelope.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { buildApp } from '../../src/app.js';
import { loadConfig } from '../../src/core/config/config.js';
import { openDatabase } from '../../src/core/db/database.js';
import { migrate } from '../../src/core/db/migrate.js';
import { createServices } from '../../src/services.js';
import { createTenant, startTestApp } from '../support/app.js';
import { adminQuery } from '../support/databases.js';
import { freePort, TEST_SECRETS_KEY } from '../support/server-process.js';
import { emptyPostgresDatabase, postgresAvailable, warnWithoutPostgres } from './postgres.js';

warnWithoutPostgres('test/operations/health.test.ts');

async function appOn(databaseUrl: string) {
  const config = loadConfig({
    DATABASE_URL: databaseUrl,
    SECRETS_KEY: TEST_SECRETS_KEY,
    LOG_LEVEL: 'silent',
    ADMIN_TOKEN: 'health-admin-token-0123456789',
  });
  const database = await openDatabase({ databaseUrl, dataDir: '', poolSize: 2 });
  const services = createServices({ config, database });
  const app = await buildApp(services);
  await app.ready();
  return { app, database, services };
}

describe('on the database under test', () => {
  it('/healthz and /readyz answer 200, then /readyz 503 once the database is closed', async () => {
    const t = await startTestApp();
    try {
      const tenant = await createTenant(t);
      expect((await t.inject({ method: 'GET', url: '/healthz' })).status).toBe(200);
      const ready = await t.inject({ method: 'GET', url: '/readyz' });
      expect(ready.status).toBe(200);
      expect(ready.headers['x-request-id']).toBeTruthy();

      await t.services.database.close();
      const notReady = await t.inject({ method: 'GET', url: '/readyz' });
      expect(notReady.status).toBe(503);
      expect((await t.inject({ method: 'GET', url: '/healthz' })).status).toBe(200);
      const api = await tenant.request('GET', '/api/v1/users');
      expect(api.status).toBeGreaterThanOrEqual(500);
      expect(api.body.error.code).toMatch(/^(internal_error|service_unavailable)$/);
      expect(api.body.request_id).toBe(api.headers['x-request-id']);
      expect(api.raw).not.toMatch(/PGlite|pg_|SELECT|at \//);
    } finally {
      await t.close();
    }
  });
});

describe.skipIf(!postgresAvailable)('on PostgreSQL', () => {
  const cleanup: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const step of cleanup) await step().catch(() => {});
  });

  it('/readyz answers 503 when the server is unreachable, and the API 503 service_unavailable', async () => {
    const { app, database } = await appOn(`postgres://postgres@127.0.0.1:${await freePort()}/nothing`);
    cleanup.push(async () => {
      await app.close();
      await database.close();
    });
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
    const api = await app.inject({
      method: 'GET',
      url: '/admin/v1/tenants/ten_x',
      headers: { authorization: 'Bearer health-admin-token-0123456789' },
    });
    expect(api.statusCode).toBe(503);
    expect(api.json().error.code).toBe('service_unavailable');
  });

  it('/readyz answers 503 once the database is dropped under it', async () => {
    const fresh = await emptyPostgresDatabase();
    cleanup.push(fresh.drop);
    const migrator = await openDatabase({ databaseUrl: fresh.url, dataDir: '' });
    await migrate(migrator);
    await migrator.close();
    const { app, database } = await appOn(fresh.url);
    cleanup.push(async () => {
      await app.close();
      await database.close();
    });
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(200);
    await adminQuery(`DROP DATABASE ${new URL(fresh.url).pathname.slice(1)} WITH (FORCE)`);
    expect((await app.inject({ method: 'GET', url: '/readyz' })).statusCode).toBe(503);
    expect((await app.inject({ method: 'GET', url: '/healthz' })).statusCode).toBe(200);
  });
});
