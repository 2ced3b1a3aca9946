/**
 * The key verifier records when a key was last used without the request waiting for it: a failed
 * write is logged and the request is still authenticated.
 */
import { afterAll, beforeAll, expect, it, vi } from 'vitest';
import { createKeyVerifier } from '../../src/api-keys/service.js';
import { ManualClock } from '../../src/core/clock.js';
import type { Db } from '../../src/core/db/database.js';
import { createTenant, startTestApp, type TestApp, type TestTenant } from '../support/app.js';

const clock = new ManualClock('2026-09-15T09:30:00.000Z');
let t: TestApp;
let tenant: TestTenant;

beforeAll(async () => {
  t = await startTestApp({ clock });
  tenant = await createTenant(t);
});
afterAll(() => t.close());

it('authenticates the request and only logs it when writing last_used_at fails', async () => {
  const db = t.services.database.db;
  // Reads go through; the write of last_used_at fails.
  const failingWrites = new Proxy(db, {
    get(target, property) {
      if (property === 'updateTable') {
        return () => {
          throw new Error('the database refused the write');
        };
      }
      const value = Reflect.get(target, property);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  }) as Db;
  const warn = vi.fn();
  const verifier = createKeyVerifier({
    db: failingWrites,
    clock,
    prefix: t.config.apiKeyPrefix,
    logger: { warn },
  });
  const result = await verifier.verify(tenant.key);
  expect(result).toMatchObject({ ok: true, principal: { keyId: tenant.keyId, tenantId: tenant.id } });
  await vi.waitFor(() =>
    expect(warn).toHaveBeenCalledWith(
      expect.objectContaining({ keyId: tenant.keyId }),
      'could not record when the API key was last used',
    ),
  );
  // Within the minute the write is not tried again, failed or not.
  await verifier.verify(tenant.key);
  expect(warn).toHaveBeenCalledTimes(1);
});
