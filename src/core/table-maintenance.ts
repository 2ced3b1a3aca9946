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
import type { Database } from './db.js';

export const VACUUM_QUEUE = 'maintenance.vacuum';
/** How often the tables are looked at; autovacuum's own round is a minute (`autovacuum_naptime`). */
export const VACUUM_EVERY_MS = 15_000;

export interface TableWork {
  table: string;
  vacuum: boolean;
  analyze: boolean;
}

/** A table's storage parameter `name` as a number, else the server's setting of the same name. */
const setting = (name: string) => `coalesce(
    (SELECT split_part(o, '=', 2) FROM unnest(c.reloptions) o WHERE split_part(o, '=', 1) = '${name}')::float8,
    current_setting('${name}')::float8)`;

/**
 * The tables of the current schema that autovacuum would vacuum or analyze now but will not (it
 * is off, for the server or the table), by its own rule: dead rows above threshold + scale factor
 * × rows (vacuum), rows changed since the last ANALYZE above the analyze pair (analyze).
 */
async function dueOnServer(database: Database): Promise<TableWork[]> {
  const result = await sql<TableWork>`
    SELECT s.relname AS "table",
           s.n_dead_tup > ${sql.raw(setting('autovacuum_vacuum_threshold'))}
             + ${sql.raw(setting('autovacuum_vacuum_scale_factor'))} * greatest(c.reltuples, 0) AS vacuum,
           s.n_mod_since_analyze > ${sql.raw(setting('autovacuum_analyze_threshold'))}
             + ${sql.raw(setting('autovacuum_analyze_scale_factor'))} * greatest(c.reltuples, 0) AS analyze
    FROM pg_stat_user_tables s
    JOIN pg_class c ON c.oid = s.relid
    WHERE s.schemaname = current_schema()
      AND (current_setting('autovacuum') = 'off'
           OR EXISTS (SELECT 1 FROM unnest(c.reloptions) o WHERE o = 'autovacuum_enabled=false'))
    ORDER BY s.n_dead_tup DESC, s.relname`.execute(database.db);
  return result.rows.filter((work) => work.vacuum || work.analyze);
}

async function everyTable(database: Database): Promise<TableWork[]> {
  const result = await sql<{ table: string }>`
    SELECT tablename AS "table" FROM pg_tables WHERE schemaname = current_schema() ORDER BY tablename`.execute(
    database.db,
  );
  return result.rows.map(({ table }) => ({ table, vacuum: true, analyze: false }));
}

/** What this round must do: nothing where autovacuum runs. */
export function tablesDue(database: Database): Promise<TableWork[]> {
  return database.engine === 'embedded' ? everyTable(database) : dueOnServer(database);
}

function statementFor(work: TableWork): string {
  const table = `"${work.table.replaceAll('"', '""')}"`;
  if (!work.vacuum) return `ANALYZE (SKIP_LOCKED) ${table}`;
  return `VACUUM (SKIP_LOCKED${work.analyze ? ', ANALYZE' : ''}) ${table}`;
}

/**
 * Runs this round's VACUUM and ANALYZE statements, each on a connection without the pool's time
 * limits (the first vacuum of a large table may take longer than any request), one table at a
 * time (on PGlite every request waits while a statement runs). SKIP_LOCKED: a table another
 * process is vacuuming is left to it. Answers what was done; a table that failed (dropped
 * meanwhile) is reported to `onError` and skipped.
 */
export async function maintainTables(
  database: Database,
  onError: (table: string, error: unknown) => void = () => {},
): Promise<TableWork[]> {
  const done: TableWork[] = [];
  for (const work of await tablesDue(database)) {
    try {
      await database.withScriptSession((exec) => exec(statementFor(work)));
      done.push(work);
    } catch (error) {
      onError(work.table, error);
    }
  }
  return done;
}
