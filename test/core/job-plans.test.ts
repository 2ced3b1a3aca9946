/**
 * The job runner's statements stay cheap behind a burst of queued jobs, whatever the table's
 * statistics say (migration 0021, src/core/jobs/statements.ts). The statistics here are stale on
 * purpose, as a live database's are in the first minute of a burst: the table is analysed while
 * its queue is empty, then 100,000 jobs arrive. A claim must touch about the pages of the jobs it
 * takes (and their index entries), not the backlog's; an acknowledgement must reach its jobs by
 * primary key, not by a scan of the due-jobs index.
 */
import { type RawBuilder, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Executor } from '../../src/core/db/database.js';
import { claimJobs, handBackJobs, markJobsDone } from '../../src/core/jobs/statements.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { genericPlan, pagesTouched, statementOf } from '../support/plans.js';

let t: TestApp;
const BACKLOG = 100_000;
const QUEUE = 'test.backlog';
const CLAIM_TYPES = ['text', 'timestamptz', 'text[]', 'timestamptz', 'integer'];
/**
 * A claim of 25 touches ~400 pages: the walk, and for each job its row and its new entries in two
 * indexes. The backlog's rows alone fill ~1,300 pages: a plan that reads them all touches >2,000.
 */
const CLAIM_PAGES = 800;

/**
 * A burst of jobs due `minutesAgo`, written inside a test's transaction and rolled back with it.
 * Each test's burst is due before the previous test's: a claim walks due jobs in time order, and
 * the earlier burst's rows, dead but not yet known to be, would otherwise be stepped over first.
 */
const backlog = (minutesAgo: number): RawBuilder<unknown> => sql`
  INSERT INTO jobs (queue, payload, status, run_at, created_at)
  SELECT ${QUEUE}, jsonb_build_object('n', g), 'queued', now() - make_interval(mins => ${minutesAgo}::int), now()
  FROM generate_series(1, ${BACKLOG}::int) g`;

beforeAll(async () => {
  t = await startTestApp();
  await sql`ANALYZE jobs`.execute(t.services.database.db);
});
afterAll(() => t.close());

function claimStatement() {
  return statementOf((executor) =>
    claimJobs(executor, 'wrk_probe', [QUEUE], new Date(), new Date(Date.now() + 15_000), 25),
  );
}

describe('job statements behind a burst, with statistics from before it', () => {
  const claimCases = [
    { plan: 'kept', minutesAgo: 1, name: 'a claim planned while the queue was empty' },
    {
      plan: 'first',
      minutesAgo: 60,
      name: 'a claim planned in the burst, from the statistics of before it,',
    },
  ] as const;
  for (const { plan, minutesAgo, name } of claimCases) {
    it(`${name} does not read the whole burst`, async () => {
      const statement = await claimStatement();
      const pages = await pagesTouched(
        t.services.database.db,
        statement.sql,
        CLAIM_TYPES,
        statement.parameters,
        {
          plan,
          meanwhile: async (tx: Executor) => {
            await backlog(minutesAgo).execute(tx);
          },
        },
      );
      expect(pages).toBeGreaterThan(0);
      expect(pages, `pages touched by one claim: ${pages}`).toBeLessThan(CLAIM_PAGES);
    });
  }

  const heldJobWrites = [
    {
      name: 'an acknowledgement',
      run: (executor: Executor) => markJobsDone(executor, 'wrk_probe', [1, 2, 3], new Date()),
      types: ['bigint[]', 'text', 'timestamptz'],
    },
    {
      name: 'a hand-back',
      run: (executor: Executor) => handBackJobs(executor, 'wrk_probe', [{ id: 1, runAt: new Date() }]),
      types: ['bigint[]', 'timestamptz[]', 'text'],
    },
  ];
  for (const write of heldJobWrites) {
    it(`${write.name} reaches its jobs by primary key, not through the due-jobs index`, async () => {
      const statement = await statementOf(write.run);
      const plan = await genericPlan(
        t.services.database.db,
        statement.sql,
        write.types,
        statement.parameters,
        async (tx) => {
          await backlog(120).execute(tx);
        },
      );
      expect(plan).toContain('jobs_pkey');
      expect(plan).not.toContain('jobs_due');
    });
  }
});
