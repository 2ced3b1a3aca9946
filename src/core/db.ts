/**
 * Storage: one Kysely instance over a `pg` pool, for both engines.
 * - embedded: PGlite (PostgreSQL compiled to WASM) behind `createPgConfig`, a pool of one, so
 *   overlapping transactions run one after another (kysely-pglite loses rows; see platform notes);
 * - postgres: a real server from DATABASE_URL.
 * Tables are declared by each feature folder through declaration merging on `Tables`.
 */
import fs from 'node:fs';
import path from 'node:path';
import { PGlite } from '@electric-sql/pglite';
import { btree_gin } from '@electric-sql/pglite/contrib/btree_gin';
import { pg_trgm } from '@electric-sql/pglite/contrib/pg_trgm';
import { createPgConfig } from '@electric-sql/pglite/node-postgres';
import { CompiledQuery, Kysely, PostgresDialect, type Transaction } from 'kysely';
import pg from 'pg';
import { acquireDirectoryLock, type DirectoryLock } from './lockfile.js';

// int8 (counts, money in minor units) and numeric (per-minute rates) arrive as strings by default.
pg.types.setTypeParser(20, (value) => Number(value));
pg.types.setTypeParser(1700, (value) => Number(value));

/** Every table of the service; each feature adds its own tables by augmenting this interface. */
// biome-ignore lint/suspicious/noEmptyInterface: filled by declaration merging in the feature folders
export interface Tables {}

export type Db = Kysely<Tables>;
export type Tx = Transaction<Tables>;
/** A repository function's optional executor: the database or an open transaction. */
export type Executor = Db | Tx;

export interface Database {
  engine: 'embedded' | 'postgres';
  db: Db;
  /**
   * Runs `work` on one dedicated connection that executes parameterless scripts of several
   * statements (migrations, advisory locks); returns the rows of the script's last statement.
   */
  withScriptSession<T>(work: (exec: ScriptExec) => Promise<T>): Promise<T>;
  close(): Promise<void>;
  /** The embedded instance, when there is one (tests dump it as a template). */
  pglite?: PGlite;
}

export type ScriptExec = (script: string) => Promise<Record<string, unknown>[]>;

export interface OpenDatabaseOptions {
  databaseUrl: string | undefined;
  dataDir: string;
  /** A data directory tarball to start from (tests: a migrated template). */
  loadDataDir?: Blob;
  poolSize?: number;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const url = options.databaseUrl;
  if (url && /^postgres(ql)?:/.test(url)) return openPostgres(url, options.poolSize ?? 10);
  const inMemory = url?.startsWith('memory:') ?? false;
  return openEmbedded(inMemory ? undefined : path.resolve(options.dataDir), options.loadDataDir);
}

async function openPostgres(connectionString: string, max: number): Promise<Database> {
  // A server that does not answer (a dropped packet, not a refusal) fails within seconds instead
  // of holding start-up, /readyz and every request forever.
  const pool = new pg.Pool({ connectionString, max, connectionTimeoutMillis: 10_000 });
  // An idle client's error (server restart) must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  pool.on('connect', usePreparedStatements);
  const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
  return {
    engine: 'postgres',
    db,
    async withScriptSession(work) {
      const client = await pool.connect();
      try {
        return await work(async (script) => {
          const result = (await client.query(script)) as pg.QueryResult | pg.QueryResult[];
          const last = Array.isArray(result) ? result[result.length - 1] : result;
          return last?.rows ?? [];
        });
      } finally {
        client.release();
      }
    },
    async close() {
      await db.destroy();
    },
  };
}

async function openEmbedded(dataDir: string | undefined, loadDataDir: Blob | undefined): Promise<Database> {
  let lock: DirectoryLock | undefined;
  if (dataDir) {
    fs.mkdirSync(dataDir, { recursive: true });
    lock = acquireDirectoryLock(dataDir);
  }
  try {
    const pglite = await PGlite.create({
      dataDir: dataDir ? path.join(dataDir, 'pgdata') : undefined,
      extensions: { btree_gin, pg_trgm },
      loadDataDir,
    });
    const pool = new pg.Pool({ ...createPgConfig(pglite), max: 1 });
    pool.on('connect', usePreparedStatements);
    const db = new Kysely<Tables>({ dialect: new PostgresDialect({ pool }) });
    return {
      engine: 'embedded',
      db,
      pglite,
      async withScriptSession(work) {
        // Multi-statement scripts go through PGlite's own exec while this holds the pool's single
        // connection, so no other query interleaves with them.
        const client = await pool.connect();
        try {
          return await work(async (script) => {
            const results = await pglite.exec(script);
            return (results[results.length - 1]?.rows ?? []) as Record<string, unknown>[];
          });
        } finally {
          client.release();
        }
      },
      async close() {
        await db.destroy();
        await pglite.close();
        lock?.release();
      },
    };
  } catch (error) {
    lock?.release();
    throw error;
  }
}

/** True when the error is PostgreSQL's unique_violation, optionally on a named constraint. */
export function isUniqueViolation(error: unknown, constraint?: string): boolean {
  const e = error as { code?: string; constraint?: string } | undefined;
  return e?.code === '23505' && (constraint === undefined || e.constraint === constraint);
}

/**
 * A statement sent as a named prepared statement, written where it runs (graphile-worker's
 * `client.query({ name, text, values })`): the server parses it once per connection and, after a
 * few runs, may keep one generic plan instead of planning every run, which for a join or a CTE
 * costs more than running it (bench/README.md, "Hot statements compiled once and prepared").
 *
 * Only for statements whose best plan is the same for every value: a generic plan is made for
 * average statistics (the average tenant, an unknown LIMIT as a tenth of the table). A statement
 * whose plan must follow its values (a large tenant among small ones, a narrow search term) runs
 * unnamed, as the users list does for searches through all matches. Every value is a parameter
 * and columns are explicit (a prepared `SELECT *` fails once a migration adds a column).
 */
export interface PreparedStatement {
  /**
   * The statement's name on the server. A query built in a few shapes (by sort order, filters,
   * access path) passes its one name with each shape's text: the first text prepared under a name
   * keeps it, the next ones are `name/2`, `name/3`, …
   */
  name: string;
  /** The SQL, with `$1`, `$2`, … for `values`. */
  text: string;
  values: unknown[];
}

/** Statement names by SQL text: what `usePreparedStatements` sends each text as. */
const statementNames = new Map<string, string>();
/** How many texts have been prepared under each name. */
const shapesPerName = new Map<string, number>();
/** Beyond this many texts, statements run unnamed: SQL built from data by mistake must not grow every connection's statement cache without bound. */
const MAX_PREPARED_STATEMENTS = 500;

/** Runs `statement` as a named prepared statement (see `PreparedStatement`), in `executor`'s connection or transaction. */
export async function runPrepared<Row>(executor: Executor, statement: PreparedStatement): Promise<Row[]> {
  const { name, text, values } = statement;
  if (!statementNames.has(text) && statementNames.size < MAX_PREPARED_STATEMENTS) {
    const shape = (shapesPerName.get(name) ?? 0) + 1;
    shapesPerName.set(name, shape);
    statementNames.set(text, shape === 1 ? name : `${name}/${shape}`);
  }
  return (await executor.executeQuery<Row>(CompiledQuery.raw(text, values))).rows;
}

/**
 * Kysely's driver sends every query as `client.query(text, values)`, with no way to pass a
 * statement name: on this connection, a text that `runPrepared` has named goes out as
 * `client.query({ name, text, values })`. Any other text goes through unchanged.
 */
function usePreparedStatements(client: pg.PoolClient): void {
  // The class's own query, looked up on each call (instrumentation may wrap the prototype's).
  const query = (...args: unknown[]) => Object.getPrototypeOf(client).query.apply(client, args);
  client.query = ((textOrConfig: unknown, values?: unknown, callback?: unknown) => {
    const name = typeof textOrConfig === 'string' ? statementNames.get(textOrConfig) : undefined;
    if (name && callback === undefined) return query({ name, text: textOrConfig, values });
    return query(textOrConfig, values, callback);
  }) as typeof client.query;
}
