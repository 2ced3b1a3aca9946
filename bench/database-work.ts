/**
 * What the database did for a stretch of a run, per call or request: transactions committed
 * (`pg_stat_database`, this database only), statements run (`pg_stat_statements`, when the server
 * loads it: this database only) and WAL records and bytes written (`pg_stat_wal`: the whole
 * server, so on a server other work shares they include that work). Unlike a rate, these barely
 * move with the machine's load: they are how a change to the SQL is compared between runs.
 */
import type pg from 'pg';

export interface DatabaseWork {
  commits: number;
  /** null: pg_stat_statements is not loaded by the server (shared_preload_libraries). */
  statements: number | null;
  wal_records: number;
  wal_bytes: number;
}

/** The per-call figures between two readings, rounded to one decimal (bytes: whole). */
export interface DatabaseWorkPer {
  commits: number;
  statements: number | null;
  wal_records: number;
  wal_bytes: number;
}

async function statementsRun(client: pg.Client): Promise<number | null> {
  try {
    await client.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
    const result = await client.query<{ n: string | null }>(
      `SELECT sum(calls)::bigint AS n FROM pg_stat_statements
        WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database())`,
    );
    return Number(result.rows[0].n ?? 0);
  } catch {
    return null;
  }
}

export async function readDatabaseWork(client: pg.Client): Promise<DatabaseWork> {
  const result = await client.query<{ commits: string; wal_records: string; wal_bytes: string }>(
    `SELECT (SELECT xact_commit FROM pg_stat_database WHERE datname = current_database()) AS commits,
            wal_records, wal_bytes FROM pg_stat_wal`,
  );
  const row = result.rows[0];
  return {
    commits: Number(row.commits),
    statements: await statementsRun(client),
    wal_records: Number(row.wal_records),
    wal_bytes: Number(row.wal_bytes),
  };
}

/**
 * A backend passes its counters on at most once a second, and one left idle with some pending
 * passes them on 10 s later (PostgreSQL 15's pgstat): wait that long before a reading that must
 * include work just done.
 */
export const STATS_FLUSH_MS = 11_000;

export function databaseWorkPer(
  before: DatabaseWork,
  after: DatabaseWork,
  count: number,
): DatabaseWorkPer | null {
  if (count <= 0) return null;
  const per = (a: number, b: number) => Math.round(((b - a) / count) * 10) / 10;
  return {
    commits: per(before.commits, after.commits),
    statements:
      before.statements === null || after.statements === null
        ? null
        : per(before.statements, after.statements),
    wal_records: per(before.wal_records, after.wal_records),
    wal_bytes: Math.round((after.wal_bytes - before.wal_bytes) / count),
  };
}
