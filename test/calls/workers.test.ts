/**
 * Two worker processes on one PostgreSQL drain 500 queued calls: every call is dialled exactly
 * once (FOR UPDATE SKIP LOCKED claims; the carrier is never even asked twice), and both
 * processes take part. Needs PostgreSQL whatever TEST_DATABASE says; skipped when none answers.
 */
import { describe, expect, it } from 'vitest';
import { POSTGRES_URL, postgresAnswers } from '../support/databases.js';
import { startServerProcess } from '../support/server-process.js';
import { publishedAgent, useDispatchDatabase, waitForCallsToEnd } from './dispatch-processes.js';

const CALLS = 500;
const available = await postgresAnswers();
if (!available) console.warn(`[calls/workers] skipped: no PostgreSQL answers at ${POSTGRES_URL}`);

describe.skipIf(!available)('two worker processes on one PostgreSQL', () => {
  const fixture = useDispatchDatabase();

  it(`dials each of ${CALLS} calls exactly once`, { timeout: 180_000 }, async () => {
    const { database, services, url, processes: workers } = fixture;
    const db = database.db;
    const { userId, agent } = await publishedAgent(fixture, {
      tenantName: 'Workers Agency',
      agentName: 'Bulk',
      credits: 10_000,
    });

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

    await waitForCallsToEnd(database);
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
      .where('id', '=', userId)
      .executeTakeFirstOrThrow();
    expect(balance.credit_balance_minutes).toBe(10_000 - CALLS);
    console.info(
      `[calls/workers] ${CALLS} calls dialled once each; per process: ${JSON.stringify(Object.fromEntries(shares))}`,
    );
  });
});
