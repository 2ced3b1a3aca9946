/**
 * A scrape of /metrics reads the backlog, not the history: its two statements are served by the
 * partial indexes of live rows (jobs_due; calls_tenant_waiting and calls_tenant_active), never
 * by reading the whole table. The plans are made with sequential scans disabled: a statement no
 * index can serve keeps its Seq Scan whatever it costs, so the check holds on an empty table too.
 */
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Executor } from '../../src/core/db/database.js';
import { countLiveCalls, readQueueStates } from '../../src/metrics/repository.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { genericPlan, statementOf } from '../support/plans.js';

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

const statements: [string, (executor: Executor) => Promise<unknown>][] = [
  ['the calls not yet final', (executor) => countLiveCalls(executor)],
  ['the job queues', (executor) => readQueueStates(executor, new Date())],
];

describe('the scrape statements', () => {
  for (const [name, run] of statements) {
    it(`read ${name} through a partial index, never the whole table`, async () => {
      const statement = await statementOf(run);
      const plan = await genericPlan(
        t.services.database.db,
        statement.sql,
        statement.parameters.map(() => 'timestamptz'),
        statement.parameters,
        async (tx) => {
          await sql`SET LOCAL enable_seqscan = off`.execute(tx);
        },
      );
      expect(plan).toMatch(/Index|Bitmap/);
      expect(plan).not.toMatch(/Seq Scan/);
    });
  }
});
