/**
 * Two server processes on one PostgreSQL database (docs/design-choices.md): a key revoked through one
 * fails on the other within 1 s, even though the other had just verified (and cached) it; and
 * once refused, it stays refused.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { emptyPostgresDatabase, postgresAvailable, warnWithoutPostgres } from '../operations/postgres.js';
import { type ServerProcess, startServerProcess } from '../support/server-process.js';

warnWithoutPostgres('test/security/revocation-processes.test.ts');

const ADMIN_TOKEN = 'revocation-admin-token-0123456789';
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!postgresAvailable)('revocation across processes', { timeout: 120_000 }, () => {
  let drop: () => Promise<void>;
  let one: ServerProcess;
  let two: ServerProcess;

  beforeAll(async () => {
    const fresh = await emptyPostgresDatabase();
    drop = fresh.drop;
    const env = { DATABASE_URL: fresh.url, ADMIN_TOKEN, LOG_LEVEL: 'warn' };
    // Both start (and migrate) at once, as a deployment would.
    [one, two] = await Promise.all([startServerProcess({ env }), startServerProcess({ env })]);
  }, 120_000);

  afterAll(async () => {
    await Promise.all([one?.stop(), two?.stop()]);
    await drop?.();
  });

  it('a key revoked through one process fails on the other within 1 s', async () => {
    const tenant = await one.request('POST', '/admin/v1/tenants', {
      token: ADMIN_TOKEN,
      body: { name: 'Two Processes' },
    });
    expect(tenant.status, tenant.raw).toBe(201);
    const key = await one.request('POST', `/admin/v1/tenants/${tenant.body.data.id}/api-keys`, {
      token: ADMIN_TOKEN,
      body: { scopes: ['plans:read'] },
    });
    expect(key.status).toBe(201);
    const secret: string = key.body.data.key;

    // The other process verifies the key, so a cache would now hold it as valid.
    for (let i = 0; i < 3; i++)
      expect((await two.request('GET', '/api/v1/plans', { token: secret })).status).toBe(200);

    const revoked = await one.request('DELETE', `/admin/v1/api-keys/${key.body.data.id}`, {
      token: ADMIN_TOKEN,
    });
    expect(revoked.status).toBe(200);
    const revokedAt = Date.now();
    expect((await one.request('GET', '/api/v1/plans', { token: secret })).status).toBe(401);

    const observations: { sentAfterMs: number; status: number }[] = [];
    while (Date.now() - revokedAt < 1_400) {
      const sentAfterMs = Date.now() - revokedAt;
      const answer = await two.request('GET', '/api/v1/plans', { token: secret });
      observations.push({ sentAfterMs, status: answer.status });
      if (answer.status === 401) expect(answer.body.error.code).toBe('authentication_failed');
      await sleep(25);
    }
    const firstRefusal = observations.find((o) => o.status === 401);
    console.info(
      `revocation seen by the other process after ${firstRefusal?.sentAfterMs ?? 'never'} ms (bound: 1000 ms)`,
    );
    // Every request sent 1 s or more after the revocation is refused...
    const late = observations.filter((o) => o.sentAfterMs >= 1_000);
    expect(late.length).toBeGreaterThan(0);
    expect(
      late.every((o) => o.status === 401),
      JSON.stringify(observations),
    ).toBe(true);
    // ...and once refused, the key never works again.
    const index = observations.findIndex((o) => o.status === 401);
    expect(
      observations.slice(index).every((o) => o.status === 401),
      JSON.stringify(observations),
    ).toBe(true);
  });
});
