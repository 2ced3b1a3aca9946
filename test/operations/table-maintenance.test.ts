/**
 * Where autovacuum does not run (PGlite always; a server with `autovacuum = off`, or a table with
 * `autovacuum_enabled = false`), a recurring job vacuums the tables (src/core/db/table-maintenance.ts),
 * so a table whose rows keep changing stops growing once its dead row versions can be reused.
 */
import { type Kysely, sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ManualClock } from '../../src/core/clock.js';
import {
  maintainTables,
  tablesDue,
  VACUUM_EVERY_MS,
  VACUUM_QUEUE,
} from '../../src/core/db/table-maintenance.js';
import { scheduleMaintenance } from '../../src/maintenance/jobs.js';
import { startTestApp, type TestApp } from '../support/app.js';
import { ENGINE } from '../support/databases.js';

const ROWS = 2_000;
const ROUNDS = 8;

describe('table maintenance where autovacuum does not run', () => {
  let t: TestApp;
  const clock = new ManualClock('2026-03-10T12:00:00.000Z');

  beforeAll(async () => {
    t = await startTestApp({ clock });
  });
  afterAll(() => t.close());

  const database = () => t.services.database;
  const db = () => database().db as Kysely<any>;

  /** A table autovacuum leaves alone on every server: `autovacuum_enabled = off`, and `options`. */
  async function createProbe(name: string, autovacuum = false, options = '') {
    const storage = [autovacuum ? '' : 'autovacuum_enabled = off', options].filter(Boolean).join(', ');
    await sql`
      CREATE TABLE ${sql.table(name)} (id integer PRIMARY KEY, payload text NOT NULL)
      ${storage ? sql`WITH (${sql.raw(storage)})` : sql``}`.execute(db());
    await sql`
      INSERT INTO ${sql.table(name)} SELECT g, repeat('x', 120) FROM generate_series(1, ${ROWS}) g`.execute(
      db(),
    );
  }

  /**
   * Rewrites the rows of `name` (all, or the first `rows`) on one connection and has its statistics
   * published at once (a server otherwise publishes a busy session's counts up to 10 s later).
   */
  async function churn(name: string, rows = ROWS) {
    await db()
      .connection()
      .execute(async (connection) => {
        await sql`UPDATE ${sql.table(name)} SET payload = payload WHERE id <= ${rows}`.execute(connection);
        if (ENGINE === 'postgres') await sql`SELECT pg_stat_force_next_flush()`.execute(connection);
      });
  }

  /** Waits until the server's statistics show `changed` rows modified in `name` since its last ANALYZE. */
  async function published(name: string, changed: number) {
    for (let tries = 0; tries < 100; tries++) {
      const result = await sql<{ n: string }>`
        SELECT n_mod_since_analyze AS n FROM pg_stat_user_tables WHERE relname = ${name}`.execute(db());
      if (Number(result.rows[0]?.n) >= changed) return;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`${name}: ${changed} changed rows never showed in the statistics`);
  }

  const sizeOf = async (name: string) =>
    Number(
      (await sql<{ size: string }>`SELECT pg_relation_size(${name}::regclass) AS size`.execute(db())).rows[0]
        .size,
    );

  /** The server's statistics arrive asynchronously: waits until `name` shows as due (PGlite: at once). */
  async function dueSoon(name: string) {
    for (let tries = 0; tries < 100; tries++) {
      const due = await tablesDue(database());
      const work = due.find((w) => w.table === name);
      if (work?.vacuum) return due;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
    throw new Error(`${name} never became due for a vacuum`);
  }

  it('a table whose rows keep changing stops growing once it is maintained, and grows without it', async () => {
    await createProbe('probe_unmaintained');
    const unmaintainedStart = await sizeOf('probe_unmaintained');
    for (let round = 0; round < ROUNDS; round++) await churn('probe_unmaintained');
    const unmaintainedGrowth = (await sizeOf('probe_unmaintained')) / unmaintainedStart;

    await createProbe('probe_maintained');
    const maintainedStart = await sizeOf('probe_maintained');
    for (let round = 0; round < ROUNDS; round++) {
      await churn('probe_maintained');
      await dueSoon('probe_maintained');
      const done = await maintainTables(database());
      expect(done.map((w) => w.table)).toContain('probe_maintained');
    }
    const maintainedGrowth = (await sizeOf('probe_maintained')) / maintainedStart;

    // Every round leaves a dead version of every row: nothing reuses their space without a vacuum.
    expect(unmaintainedGrowth).toBeGreaterThan(ROUNDS - 1);
    expect(maintainedGrowth).toBeLessThanOrEqual(2.5);
  });

  it.runIf(ENGINE === 'postgres')(
    'on a server, follows autovacuum: an ordinary table is left to it unless it is off, and a table it skips is vacuumed and analyzed by its rule',
    async () => {
      const autovacuum = (await sql<{ autovacuum: string }>`SHOW autovacuum`.execute(db())).rows[0]
        .autovacuum;
      await createProbe('probe_skipped');
      await createProbe('probe_ordinary', true);
      await churn('probe_ordinary');
      await churn('probe_skipped');
      const due = await dueSoon('probe_skipped');
      expect(due.find((w) => w.table === 'probe_skipped')).toEqual({
        table: 'probe_skipped',
        vacuum: true,
        analyze: true,
      });
      // With autovacuum on, the ordinary table is its business; with it off, ours.
      expect(due.some((w) => w.table === 'probe_ordinary')).toBe(autovacuum === 'off');
      // Below the threshold (50 + 20 % of the rows, the defaults) a table is not due.
      await maintainTables(database());
      await churn('probe_skipped', 10);
      await published('probe_skipped', 10);
      expect((await tablesDue(database())).some((w) => w.table === 'probe_skipped')).toBe(false);
    },
  );

  it.runIf(ENGINE === 'postgres')("a table's own thresholds come before the server's", async () => {
    await createProbe(
      'probe_own_thresholds',
      false,
      'autovacuum_vacuum_threshold = 5000, autovacuum_vacuum_insert_threshold = 5000, autovacuum_analyze_threshold = 5000',
    );
    await churn('probe_own_thresholds');
    await published('probe_own_thresholds', ROWS);
    // 2,000 rows inserted, then 2,000 dead: due by the defaults, not by the table's 5,000.
    expect((await tablesDue(database())).some((w) => w.table === 'probe_own_thresholds')).toBe(false);
    await sql`ALTER TABLE probe_own_thresholds RESET (autovacuum_vacuum_threshold, autovacuum_vacuum_insert_threshold, autovacuum_analyze_threshold)`.execute(
      db(),
    );
    expect((await tablesDue(database())).find((w) => w.table === 'probe_own_thresholds')).toMatchObject({
      vacuum: true,
      analyze: true,
    });
  });

  it('runs as a recurring maintenance job, every VACUUM_EVERY_MS', async () => {
    await createProbe('probe_recurring');
    await churn('probe_recurring');
    await dueSoon('probe_recurring');
    await scheduleMaintenance(t.services);
    await t.services.jobRunner.drain();
    const vacuumed = await sql<{ last_vacuum: Date | null }>`
      SELECT last_vacuum FROM pg_stat_user_tables WHERE relname = 'probe_recurring'`.execute(db());
    expect(vacuumed.rows[0].last_vacuum).not.toBeNull();
    const next = await db()
      .selectFrom('jobs')
      .select(['run_at'])
      .where('queue', '=', VACUUM_QUEUE)
      .where('status', '=', 'queued')
      .execute();
    expect(next).toHaveLength(1);
    expect(next[0].run_at.getTime()).toBe(clock.now().getTime() + VACUUM_EVERY_MS);
  });
});
