/**
 * An agent with max_concurrent_calls 2, 50 triggers, two dispatching processes on one PostgreSQL,
 * calls that really last (SIMULATED_REALTIME): never more than 2 calls dialling or talking at once
 * (replayed from the timeline, whose dialing and end events are written under the agent's lock),
 * all 50 end, each dialled once. Needs PostgreSQL whatever TEST_DATABASE says; skipped when none answers.
 */
import { sql } from 'kysely';
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

const CALLS = 50;
const CAP = 2;
const available = await postgresAnswers();
if (!available) console.warn(`[calls/cap-workers] skipped: no PostgreSQL answers at ${POSTGRES_URL}`);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.skipIf(!available)('a concurrency cap with two dispatching processes', () => {
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

  it(`never has more than ${CAP} of ${CALLS} calls live, and ends each, dialled once`, {
    timeout: 180_000,
  }, async () => {
    const db = database.db;
    const tenant = await services.tenants.create({ name: 'Capped Agency' });
    const { user } = await services.users.create(
      tenant.id,
      { email: 'owner@example.com', name: 'Owner', password: 'correct horse' },
      undefined,
    );
    await db.transaction().execute((tx) =>
      addCreditEntry(tx, {
        tenantId: tenant.id,
        userId: user.id,
        minutes: 1_000,
        reason: 'test',
        at: new Date(),
      }),
    );
    const agent = await services.agents.create(tenant.id, {
      user_id: user.id,
      name: 'Paced',
      phone_number: '+14155550199',
      prompt: 'Call {name}.',
      welcome_message: 'Hi {name}.',
    });
    await services.agents.publish(tenant.id, agent.id);
    await sql`UPDATE agents SET settings = ${JSON.stringify({ max_concurrent_calls: CAP })}::jsonb WHERE id = ${agent.id}`.execute(
      db,
    );

    const ids: string[] = [];
    for (let i = 0; i < CALLS; i++) {
      const call = await services.calls.trigger(agent.webhook_id, {
        phone: `+1415555${String(2000 + i).padStart(4, '0')}`,
        name: `Callee ${i}`,
      });
      ids.push(call.id);
    }
    for (let i = 0; i < 2; i++) {
      workers.push(
        await startServerProcess({
          env: {
            DATABASE_URL: url,
            WORKERS: '1',
            LOG_LEVEL: 'warn',
            SIMULATED_REALTIME: 'true',
            SIMULATED_CALL_SECONDS: '1',
          },
        }),
      );
    }

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

    const events = await db.selectFrom('call_events').select(['call_id', 'status']).orderBy('id').execute();
    const live = new Set<string>();
    let peak = 0;
    for (const event of events) {
      if (event.status === 'dialing') live.add(event.call_id);
      else if (event.status !== 'in_progress' && event.status !== 'queued') live.delete(event.call_id);
      peak = Math.max(peak, live.size);
    }
    expect(peak).toBe(CAP);
    const calls = await db.selectFrom('calls').select(['status', 'attempts']).execute();
    expect(calls.map((call) => call.status)).toEqual(Array(CALLS).fill('completed'));
    const dials = await db.selectFrom('telephony_simulated_dials').selectAll().execute();
    expect(new Set(dials.map((dial) => dial.call_id))).toEqual(new Set(ids));
    expect(dials.filter((dial) => dial.dial_requests !== 1)).toEqual([]);
    const byProcess = new Set(dials.map((dial) => dial.dialled_by));
    console.info(
      `[calls/cap-workers] ${CALLS} calls, peak ${peak} live, dialled by ${byProcess.size} processes`,
    );
  });
});
