/** The benchmark's PostgreSQL: where it is, a fresh database per run, the job backlog. */
import { sql } from 'kysely';
import pg from 'pg';
import type { Database } from '../src/core/db/database.js';

const DEFAULT_POSTGRES_URL = 'postgres://postgres@127.0.0.1:5432/test';

export function postgresAdminUrl(): string {
  const fromEnv = process.env.BENCH_POSTGRES_URL ?? process.env.DATABASE_URL;
  return fromEnv && /^postgres(ql)?:/.test(fromEnv) ? fromEnv : DEFAULT_POSTGRES_URL;
}

export async function adminQuery(url: string, text: string): Promise<void> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 2000 });
  await client.connect();
  try {
    await client.query(text);
  } finally {
    await client.end().catch(() => {});
  }
}

export async function postgresAnswers(url: string): Promise<string | undefined> {
  try {
    await adminQuery(url, 'SELECT 1');
    return undefined;
  } catch (error) {
    return (error as Error).message || String(error);
  }
}

export function withDatabase(url: string, name: string): string {
  const parsed = new URL(url);
  parsed.pathname = `/${name}`;
  return parsed.toString();
}

/**
 * Jobs due or running: work the service still has to do now. Not every queued job: the
 * maintenance jobs always wait queued for their next run.
 */
export const JOBS_DUE_OR_RUNNING =
  "SELECT count(*)::int AS n FROM jobs WHERE status = 'running' OR (status = 'queued' AND run_at <= now())";

export async function queueBacklog(url: string): Promise<number> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const result = await client.query<{ n: number }>(JOBS_DUE_OR_RUNNING);
    return result.rows[0].n;
  } finally {
    await client.end().catch(() => {});
  }
}

/** The server runs without autovacuum (a CI server's setting): the service then vacuums its own tables. */
export async function autovacuumIsOff(database: Database): Promise<boolean> {
  const result = await sql<{ autovacuum: string }>`SHOW autovacuum`.execute(database.db);
  return result.rows[0]?.autovacuum === 'off';
}
