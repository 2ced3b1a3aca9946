/** The plans the database makes for the service's statements, as a live database keeps them. */
import { sql } from 'kysely';
import type { Db, Executor } from '../../src/core/db/database.js';

/** The statement `run` sends, as text and values, without running it. */
export async function statementOf(run: (executor: Executor) => Promise<unknown>) {
  let captured: { sql: string; parameters: readonly unknown[] } | undefined;
  const capture = {
    executeQuery: async (query: { sql: string; parameters: readonly unknown[] }) => {
      captured = query;
      return { rows: [] };
    },
  } as unknown as Executor;
  await run(capture);
  if (!captured) throw new Error('no statement was sent');
  return captured;
}

/** A value as an SQL literal (EXECUTE takes no bound parameters). */
function literal(value: unknown): string {
  if (Array.isArray(value)) return `ARRAY[${value.map(literal).join(', ')}]`;
  if (value instanceof Date) return `'${value.toISOString()}'`;
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  return `'${String(value).replaceAll("'", "''")}'`;
}

let probes = 0;

/** Prepares `text` as `name` for `types` and gives `EXECUTE name(…values…)` to `use`. */
async function withPrepared<T>(
  tx: Executor,
  text: string,
  types: string[],
  values: readonly unknown[],
  use: (execute: string) => Promise<T>,
): Promise<T> {
  const name = `plan_probe_${++probes}`;
  const args = values.map((value, i) => `${literal(value)}::${types[i]}`).join(', ');
  // A statement without parameters is prepared and executed without the parentheses.
  const list = (items: string) => (types.length ? `(${items})` : '');
  await sql.raw(`PREPARE ${name}${list(types.join(', '))} AS ${text}`).execute(tx);
  const result = await use(`EXECUTE ${name}${list(args)}`);
  await sql.raw(`DEALLOCATE ${name}`).execute(tx);
  return result;
}

class RolledBack<T> extends Error {
  constructor(readonly value: T) {
    super('rolled back on purpose');
  }
}

/** The generic plan (the one a prepared statement keeps) of `text` for these parameter types. */
export async function genericPlan(
  db: Db,
  text: string,
  types: string[],
  values: readonly unknown[],
  meanwhile?: (tx: Executor) => Promise<void>,
): Promise<string> {
  return db
    .transaction()
    .execute(async (tx) => {
      await sql`SET LOCAL plan_cache_mode = force_generic_plan`.execute(tx);
      // Rows written here first are seen by the planner (the table's size), and undone afterwards.
      await meanwhile?.(tx);
      const plan = await withPrepared(tx, text, types, values, async (execute) => {
        const rows = await sql.raw<{ 'QUERY PLAN': string }>(`EXPLAIN ${execute}`).execute(tx);
        return rows.rows.map((row) => row['QUERY PLAN']).join('\n');
      });
      if (meanwhile) throw new RolledBack(plan);
      return plan;
    })
    .catch((error: unknown) => {
      if (error instanceof RolledBack) return error.value as string;
      throw error;
    });
}

/**
 * The pages (shared buffers hit or read) one run of `text` touches with these values; whatever the
 * transaction changes is undone. `first`: the plan the server makes for a statement's first run.
 * `kept`: the generic plan made at a run before `meanwhile` (as a prepared statement keeps it, for
 * instance from a calm hour into a burst), reused after it.
 */
export async function pagesTouched(
  db: Db,
  text: string,
  types: string[],
  values: readonly unknown[],
  options: { plan: 'first' | 'kept'; meanwhile?: (tx: Executor) => Promise<void> },
): Promise<number> {
  try {
    await db.transaction().execute(async (tx) => {
      if (options.plan === 'kept') await sql`SET LOCAL plan_cache_mode = force_generic_plan`.execute(tx);
      const pages = await withPrepared(tx, text, types, values, async (execute) => {
        if (options.plan === 'kept') await sql.raw(execute).execute(tx);
        await options.meanwhile?.(tx);
        const rows = await sql
          .raw<{ 'QUERY PLAN': [{ Plan: Record<string, number> }] }>(
            `EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${execute}`,
          )
          .execute(tx);
        const top = rows.rows[0]['QUERY PLAN'][0].Plan;
        return top['Shared Hit Blocks'] + top['Shared Read Blocks'];
      });
      throw new RolledBack(pages);
    });
  } catch (error) {
    if (error instanceof RolledBack) return error.value as number;
    throw error;
  }
  throw new Error('unreachable');
}
