/**
 * Shared set-up of the suites that dispatch calls from several server processes on one
 * PostgreSQL (workers.test.ts, cap-workers.test.ts): a fresh database with services in the test
 * process to place calls, an owner with credits and a published agent, and a wait until every
 * call has ended.
 */
import { afterAll, beforeAll } from 'vitest';
import type { Agent } from '../../src/agents/schemas.js';
import { loadConfig } from '../../src/core/config/config.js';
import { type Database, openDatabase } from '../../src/core/db/database.js';
import { migrate } from '../../src/core/db/migrate.js';
import { addCreditEntry } from '../../src/credits/repository.js';
import { createServices, type Services } from '../../src/services.js';
import { dropPostgresDatabase, emptyPostgresDatabase } from '../support/databases.js';
import type { ServerProcess } from '../support/server-process.js';

/** Set by the suite's beforeAll (`useDispatchDatabase`), so read only inside tests. */
export class DispatchFixture {
  url!: string;
  database!: Database;
  services!: Services;
  /** Server processes the test started; SIGKILLed after the suite. */
  processes: ServerProcess[] = [];
}

/** Registers the suite's set-up and tear-down; read the fixture inside tests. */
export function useDispatchDatabase(): DispatchFixture {
  const fixture = new DispatchFixture();
  beforeAll(async () => {
    ({ url: fixture.url } = await emptyPostgresDatabase());
    fixture.database = await openDatabase({ databaseUrl: fixture.url, dataDir: '', poolSize: 10 });
    await migrate(fixture.database);
    fixture.services = createServices({
      config: loadConfig({
        PASSWORD_HASH_MEMORY_KIB: '1024',
        LOG_LEVEL: 'silent',
        SIMULATED_REALTIME: 'false',
      }),
      database: fixture.database,
    });
  });
  afterAll(async () => {
    for (const process of fixture.processes) await process.kill('SIGKILL');
    await fixture.services?.close();
    await fixture.database?.close();
    if (fixture.url) await dropPostgresDatabase(fixture.url);
  });
  return fixture;
}

/** A tenant, an owner with `credits` minutes and a published agent of theirs. */
export async function publishedAgent(
  { services, database }: DispatchFixture,
  options: { tenantName: string; agentName: string; credits: number },
): Promise<{ tenantId: string; userId: string; agent: Agent }> {
  const tenant = await services.tenants.create({ name: options.tenantName });
  const { user } = await services.users.create(
    tenant.id,
    { email: 'owner@example.com', name: 'Owner', password: 'correct horse' },
    undefined,
  );
  await database.db.transaction().execute((tx) =>
    addCreditEntry(tx, {
      tenantId: tenant.id,
      userId: user.id,
      minutes: options.credits,
      reason: 'test',
      at: new Date(),
    }),
  );
  const agent = await services.agents.create(tenant.id, {
    user_id: user.id,
    name: options.agentName,
    phone_number: '+14155550199',
    prompt: 'Call {name}.',
    welcome_message: 'Hi {name}.',
  });
  await services.agents.publish(tenant.id, agent.id);
  return { tenantId: tenant.id, userId: user.id, agent };
}

/** Waits until no call is queued, dialling or talking; fails after `timeoutMs`. */
export async function waitForCallsToEnd(database: Database, timeoutMs = 150_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const pending = await database.db
      .selectFrom('calls')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('status', 'not in', ['completed', 'no_answer', 'failed'])
      .executeTakeFirstOrThrow();
    if (Number(pending.n) === 0) return;
    if (Date.now() > deadline) throw new Error(`${pending.n} calls still pending`);
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}
