/**
 * An agent with max_concurrent_calls 2, 20 triggers, two dispatching processes on one PostgreSQL,
 * calls that really last (SIMULATED_REALTIME): never more than 2 calls dialling or talking at once
 * (replayed from the timeline, whose dialing and end events are written under the agent's lock),
 * all 20 end, each dialled once. Needs PostgreSQL whatever TEST_DATABASE says; skipped when none answers.
 */
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { POSTGRES_URL, postgresAnswers } from '../support/databases.js';
import { startServerProcess } from '../support/server-process.js';
import { publishedAgent, useDispatchDatabase, waitForCallsToEnd } from './dispatch-processes.js';

// Calls last a second and two at a time: 20 take ten rounds of both processes contending.
const CALLS = 20;
const CAP = 2;
const available = await postgresAnswers();
if (!available) console.warn(`[calls/cap-workers] skipped: no PostgreSQL answers at ${POSTGRES_URL}`);

describe.skipIf(!available)('a concurrency cap with two dispatching processes', () => {
  const fixture = useDispatchDatabase();

  it(`never has more than ${CAP} of ${CALLS} calls live, and ends each, dialled once`, {
    timeout: 180_000,
  }, async () => {
    const { database, services, url, processes: workers } = fixture;
    const db = database.db;
    const { agent } = await publishedAgent(fixture, {
      tenantName: 'Capped Agency',
      agentName: 'Paced',
      credits: 1_000,
    });
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

    await waitForCallsToEnd(database);
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
