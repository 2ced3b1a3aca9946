/**
 * Two worker processes on one PostgreSQL drain 500 queued calls: every call is dialled exactly
 * once (FOR UPDATE SKIP LOCKED claims; the carrier is never even asked twice), and both
 * processes take part. Needs PostgreSQL whatever TEST_DATABASE says; skipped when none answers.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/core/config.js';
import { type Database, openDatabase } from '../../src/core/db.js';
import { migrate } from '../../src/core/migrate.js';
import { addCreditEntry } from '../../src/credits/repository.js';
import { createServices, type Services } from '../../src/services.js';
import {
  dropPostgresDatabase,
  emptyPostgresDatabase,
  POSTGRES_URL,
  postgresAnswers,
} from '../support/databases.js';
import { type ServerProcess, startServerProcess } from '../support/server-process.js';

const CALLS = 500;
const available = await postgresAnswers();
if (!available) console.warn(`[calls/workers] skipped: no PostgreSQL answers at ${POSTGRES_URL}`);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!available)('two worker processes on one PostgreSQL', () => {
  let url: string;
  let database: Database;
  let services: Services;
  const workers: ServerProcess[] = [];

  beforeAll(async () => {
    ({ url } = await emptyPostgresDatabase());
    database = await openDatabase({ databaseUrl: url, dataDir: '', poolSize: 10 });
    await migrate(database);
    services = createServices({
      config: loadConfig({ PASSWORD_HASH_MEMORY_KIB: '1024', LOG_LEVEL: 'silent' }),
      database,
    });
  });

  afterAll(async () => {
    for (const worker of workers) await worker.kill('SIGKILL');
    await services?.close();
    await database?.close();
    if (url) await dropPostgresDatabase(url);
  });

  it(`dials each of ${CALLS} calls exactly once`, { timeout: 180_000 }, async () => {
    const db = database.db;
    const tenant = await services.tenants.create({ name: 'Workers Agency' });
    const { user } = await services.users.create(
      tenant.id,
      { email: 'owner@example.com', name: 'Owner', password: 'correct horse' },
      undefined,
    );
    await db.transaction().execute((tx) =>
      addCreditEntry(tx, {
        tenantId: tenant.id,
        userId: user.id,
        minutes: 10_000,
        reason: 'test',
        at: new Date(),
      }),
    );
    const agent = await services.agents.create(tenant.id, {
      user_id: user.id,
      name: 'Bulk',
      phone_number: '+14155550199',
      prompt: 'Call {name}.',
      welcome_message: 'Hi {name}.',
    });
    await services.agents.publish(tenant.id, agent.id);

    for (let i = 0; i < 2; i++) {
      workers.push(await startServerProcess({ env: { DATABASE_URL: url, WORKERS: '1', LOG_LEVEL: 'warn' } }));
    }

    const ids: string[] = [];
    let next = 0;
    await Promise.all(
      Array.from({ length: 10 }, async () => {
        while (next < CALLS) {
          const i = next++;
          const phone = `+1415555${String(1000 + i).padStart(4, '0')}`;
          const call = await services.calls.trigger(agent.webhook_id, { phone, name: `Callee ${i}` });
          ids.push(call.id);
        }
      }),
    );
    expect(ids).toHaveLength(CALLS);

    const deadline = Date.now() + 150_000;
    for (;;) {
      const pending = await db
        .selectFrom('calls')
        .select((eb) => eb.fn.countAll<number>().as('n'))
        .where('status', 'not in', ['completed', 'no_answer', 'failed'])
        .executeTakeFirstOrThrow();
      if (Number(pending.n) === 0) break;
      if (Date.now() > deadline) throw new Error(`${pending.n} calls still pending`);
      await sleep(250);
    }
    for (const worker of workers) expect(await worker.stop()).toBe(0);

    const dials = await db.selectFrom('telephony_simulated_dials').selectAll().execute();
    expect(dials).toHaveLength(CALLS);
    expect(new Set(dials.map((dial) => dial.call_id))).toEqual(new Set(ids));
    // Not even asked twice: no call was claimed by both processes.
    expect(dials.filter((dial) => dial.dial_requests !== 1)).toEqual([]);
    const byProcess: Record<string, number> = {};
    for (const dial of dials) byProcess[dial.dialled_by] = (byProcess[dial.dialled_by] ?? 0) + 1;
    const pids = workers.map((worker) => String(worker.pid));
    const shares = Object.entries(byProcess).map(
      ([dialer, count]) => [dialer.split(':').pop(), count] as const,
    );
    expect(shares.map(([pid]) => pid).sort()).toEqual([...pids].sort());
    const calls = await db.selectFrom('calls').select(['status']).execute();
    expect(calls.every((call) => call.status === 'completed')).toBe(true);
    const balance = await db
      .selectFrom('users')
      .select('credit_balance_minutes')
      .where('id', '=', user.id)
      .executeTakeFirstOrThrow();
    expect(balance.credit_balance_minutes).toBe(10_000 - CALLS);
    console.info(
      `[calls/workers] ${CALLS} calls dialled once each; per process: ${JSON.stringify(Object.fromEntries(shares))}`,
    );
  });
});
