/**
 * Vacuums the service's tables where nothing else does. An UPDATE or DELETE leaves the old row
 * version behind until VACUUM removes it and the index entries pointing at it; PostgreSQL's
 * autovacuum does that in the background. The service churns: every job is inserted, claimed,
 * finished and later deleted (thousands a minute under load), every call changes status three
 * times. Two setups have no autovacuum:
 * - PGlite, the embedded default: one process and no autovacuum launcher, although
 *   `SHOW autovacuum` says `on`; its statistics views do not count dead rows either;
 * - a server run with `autovacuum = off` (common for CI servers, this project's included), or a
 *   table with `autovacuum_enabled = false`.
 * There the dead versions stayed forever: the job claim stepped over the dead index entries of
 * every job finished before it, and the data only grew. A recurring job (src/services.ts) now does
 * autovacuum's work there: on a server, autovacuum's own rule per table (its thresholds and scale
 * factors, a table's storage parameters first) on the server's statistics; on PGlite, a VACUUM of
 * every table, which costs well under a millisecond for a table with nothing to remove (the
 * visibility map lets it skip clean pages). Where autovacuum runs, nothing is done.
 */
import { sql } from 'kysely';
import type { Database, ScriptExec } from './database.js';

export const VACUUM_QUEUE = 'maintenance.vacuum';
/** How often the tables are looked at; autovacuum's own round is a minute (`autovacuum_naptime`). */
export const VACUUM_EVERY_MS = 15_000;

export interface TableWork {
  table: string;
  vacuum: boolean;
  analyze: boolean;
}

/** A table's work with what its statements need: the schema-qualified name, the vacuum's pacing. */
interface DueTable extends TableWork {
  qualified: string;
  /** The table's (or the server's) autovacuum cost delay in ms; null: vacuum_cost_delay's own. */
  costDelayMs: number | null;
}

/** A table's storage parameter `name` as a number, else the server's setting of the same name. */
const setting = (name: string) => `coalesce(
    (SELECT split_part(o, '=', 2) FROM unnest(c.reloptions) o WHERE split_part(o, '=', 1) = '${name}')::float8,
    current_setting('${name}')::float8)`;

/** The rows autovacuum's rule multiplies: the planner's estimate, -1 (never counted) as 0. */
const greatestRows = 'greatest(c.reltuples, 0)';

/**
 * The tables of the current schema that autovacuum would vacuum or analyze now but will not (it
 * is off, for the server or the table), by its own rule: dead rows, or rows inserted since the last
 * vacuum (unless its insert threshold is -1), above threshold + scale factor × rows (vacuum); rows changed since the last ANALYZE above
 * the analyze pair (analyze).
 */
async function dueOnServer(database: Database): Promise<DueTable[]> {
  const result = await sql<Omit<DueTable, 'costDelayMs'> & { cost_delay_ms: number | null }>`
    SELECT s.relname AS "table", format('%I.%I', s.schemaname, s.relname) AS qualified,
           (s.n_dead_tup > ${sql.raw(setting('autovacuum_vacuum_threshold'))}
              + ${sql.raw(setting('autovacuum_vacuum_scale_factor'))} * ${sql.raw(greatestRows)}
            OR ${sql.raw(setting('autovacuum_vacuum_insert_threshold'))} >= 0
               AND s.n_ins_since_vacuum > ${sql.raw(setting('autovacuum_vacuum_insert_threshold'))}
              + ${sql.raw(setting('autovacuum_vacuum_insert_scale_factor'))} * ${sql.raw(greatestRows)}) AS vacuum,
           s.n_mod_since_analyze > ${sql.raw(setting('autovacuum_analyze_threshold'))}
             + ${sql.raw(setting('autovacuum_analyze_scale_factor'))} * ${sql.raw(greatestRows)} AS analyze,
           nullif(coalesce(
             (SELECT split_part(o, '=', 2) FROM unnest(c.reloptions) o
              WHERE split_part(o, '=', 1) = 'autovacuum_vacuum_cost_delay')::float8,
             (SELECT setting::float8 FROM pg_settings WHERE name = 'autovacuum_vacuum_cost_delay')), -1) AS cost_delay_ms
    FROM pg_stat_user_tables s
    JOIN pg_class c ON c.oid = s.relid
    WHERE s.schemaname = current_schema()
      AND (current_setting('autovacuum') = 'off'
           OR EXISTS (SELECT 1 FROM unnest(c.reloptions) o
                      WHERE split_part(o, '=', 1) = 'autovacuum_enabled' AND NOT split_part(o, '=', 2)::boolean))
    ORDER BY s.n_dead_tup DESC, s.relname`.execute(database.db);
  return result.rows
    .filter((work) => work.vacuum || work.analyze)
    .map(({ cost_delay_ms, ...work }) => ({ ...work, costDelayMs: cost_delay_ms }));
}

async function everyTable(database: Database): Promise<DueTable[]> {
  const result = await sql<{ table: string; qualified: string }>`
    SELECT tablename AS "table", format('%I.%I', schemaname, tablename) AS qualified
    FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`.execute(database.db);
  return result.rows.map((row) => ({ ...row, vacuum: true, analyze: false, costDelayMs: null }));
}

/** What this round must do: nothing where autovacuum runs. */
export async function tablesDue(database: Database): Promise<TableWork[]> {
  const due = await dueTables(database);
  return due.map(({ table, vacuum, analyze }) => ({ table, vacuum, analyze }));
}

function dueTables(database: Database): Promise<DueTable[]> {
  return database.engine === 'embedded' ? everyTable(database) : dueOnServer(database);
}

function statementFor(work: DueTable): string {
  if (!work.vacuum) return `ANALYZE (SKIP_LOCKED) ${work.qualified}`;
  return `VACUUM (SKIP_LOCKED${work.analyze ? ', ANALYZE' : ''}) ${work.qualified}`;
}

/**
 * Runs this round's VACUUM and ANALYZE statements on one connection without the pool's time limits
 * (the first vacuum of a large table may take longer than any request, and a statement_timeout of
 * the role or database is lifted for it), paced like autovacuum (its cost delay), one table at a
 * time. On PGlite each table gets the connection on its own, so requests run between tables; a
 * table's first vacuum there (an install upgraded to this version) holds every request while it
 * runs, ~40 ms per 200,000 rows measured. SKIP_LOCKED: a table another process is vacuuming is
 * left to it. Answers what was done; a table that failed (dropped meanwhile) is reported to
 * `onError` and skipped.
 */
export async function maintainTables(
  database: Database,
  onError: (table: string, error: unknown) => void = () => {},
): Promise<TableWork[]> {
  const due = await dueTables(database);
  const done: TableWork[] = [];
  const run = async (exec: ScriptExec, work: DueTable) => {
    try {
      if (database.engine === 'postgres') {
        // Separate statements: in one script PostgreSQL would run them as a transaction block,
        // which VACUUM refuses.
        await exec('SET statement_timeout = 0');
        await exec(`SET vacuum_cost_delay = ${work.costDelayMs ?? 0}`);
      }
      await exec(statementFor(work));
      done.push({ table: work.table, vacuum: work.vacuum, analyze: work.analyze });
    } catch (error) {
      onError(work.table, error);
    }
  };
  if (due.length === 0) return done;
  if (database.engine === 'embedded') {
    for (const work of due) await database.withScriptSession((exec) => run(exec, work));
  } else {
    await database.withScriptSession(async (exec) => {
      for (const work of due) await run(exec, work);
    });
  }
  return done;
}
