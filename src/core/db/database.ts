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
import { type DatabaseTimeouts, DEFAULT_DATABASE_TIMEOUTS } from '../config/config.js';
import { traceQuery } from '../observability/tracing.js';
import { checkout, settleQuery, WritableServerClient } from './connections.js';
import { createDatabaseHealth, type DatabaseHealth, type HealthLogger } from './health.js';
import { acquireDirectoryLock, type DirectoryLock } from './lockfile.js';

export { isReportedOutage } from './health.js';

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
  /**
   * Resolves when the database answers a trivial query within `timeoutMs`, rejects otherwise
   * (readiness: a stalled database must be reported, not waited on).
   */
  ping(timeoutMs: number): Promise<void>;
  /** The database's health as this process sees it; logs when it is lost and when it is back. */
  health: DatabaseHealth;
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
  /** PostgreSQL only; DEFAULT_DATABASE_TIMEOUTS when absent. */
  timeouts?: DatabaseTimeouts;
  /** Where the health tracker logs an outage and its end (also settable later on `health.logger`). */
  logger?: HealthLogger;
}

export async function openDatabase(options: OpenDatabaseOptions): Promise<Database> {
  const url = options.databaseUrl;
  if (url && /^postgres(ql)?:/.test(url)) {
    const timeouts = options.timeouts ?? DEFAULT_DATABASE_TIMEOUTS;
    const health = createDatabaseHealth({ logger: options.logger, stalledAfterMs: timeouts.connectMs });
    return openPostgres(url, options.poolSize ?? 10, timeouts, health);
  }
  const inMemory = url?.startsWith('memory:') ?? false;
  return openEmbedded(
    inMemory ? undefined : path.resolve(options.dataDir),
    options.loadDataDir,
    options.logger,
  );
}

/**
 * A query the database did not answer within DB_QUERY_TIMEOUT_MS, or a ping past its deadline.
 * `ETIMEDOUT` like a network timeout: the request answers 503 service_unavailable.
 */
export class DatabaseTimeoutError extends Error {
  readonly code = 'ETIMEDOUT';
  constructor(what: string, timeoutMs: number) {
    super(`The database did not answer ${what} within ${timeoutMs} ms`);
    this.name = 'DatabaseTimeoutError';
  }
}

/** Rejects with DatabaseTimeoutError when `work` has not settled after `timeoutMs` (then `onTimeout` runs). */
function withDeadline<T>(
  work: Promise<T>,
  what: string,
  timeoutMs: number,
  onTimeout?: () => void,
): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      reject(new DatabaseTimeoutError(what, timeoutMs));
      onTimeout?.();
    }, timeoutMs);
  });
  // race() also handles `work`'s rejection when it comes after the deadline.
  return Promise.race([work, deadline]).finally(() => clearTimeout(timer));
}

async function openPostgres(
  connectionString: string,
  max: number,
  timeouts: DatabaseTimeouts,
  health: DatabaseHealth,
): Promise<Database> {
  const connection = {
    connectionString,
    // A server that does not answer (a dropped packet, not a refusal) fails within seconds instead
    // of holding start-up and requests; also the longest wait for a free connection of the pool.
    connectionTimeoutMillis: timeouts.connectMs,
    // An idle connection to a host that went away is noticed and dropped by the kernel.
    keepAlive: true,
    keepAliveInitialDelayMillis: 10_000,
  };
  const pool = new pg.Pool({
    ...connection,
    // Refuses a server that does not take writes (connections.ts).
    Client: WritableServerClient,
    max,
    // 0 (off) is not sent: the server's own setting applies.
    statement_timeout: timeouts.statementMs || undefined,
  });
  // An idle client's error (server restart) must not crash the process; the next query reconnects.
  pool.on('error', () => {});
  pool.on('connect', (client) => {
    survivesConnectionLoss(client);
    wrapQueries(client, timeouts.queryMs, health);
  });
  const db = kyselyOver(pool, () => checkout(pool, health, timeouts.connectMs));
  const probe = createProbe(connection, health);
  return {
    engine: 'postgres',
    db,
    health,
    async withScriptSession(work) {
      // A connection of its own, without the pool's time limits: a migration may build an index for
      // minutes, and waits on the migration lock while another process migrates.
      const client = new pg.Client(connection);
      survivesConnectionLoss(client);
      await client.connect();
      try {
        return await work(async (script) => {
          const result = (await client.query(script)) as pg.QueryResult | pg.QueryResult[];
          const last = Array.isArray(result) ? result[result.length - 1] : result;
          return last?.rows ?? [];
        });
      } finally {
        await client.end().catch(() => {});
      }
    },
    ping: (timeoutMs) => probe.ping(timeoutMs),
    async close() {
      probe.close();
      await db.destroy();
    },
  };
}

/**
 * Readiness asks on a connection of its own, outside the pool: "the database answers" must not
 * turn false because every pooled connection is busy under load (which would take a loaded
 * process out of its load balancer). Opened on the first ping, opened again after a failure.
 */
function createProbe(connection: pg.ClientConfig, health: DatabaseHealth) {
  let current: { client: pg.Client; connected: Promise<unknown> } | undefined;
  let closed = false;
  const drop = () => {
    current?.client.connection.stream.destroy();
    current = undefined;
  };
  return {
    async ping(timeoutMs: number): Promise<void> {
      if (closed) throw new Error('The database is closed');
      const run = async () => {
        if (!current) {
          const client = new WritableServerClient({ ...connection, connectionTimeoutMillis: timeoutMs });
          survivesConnectionLoss(client);
          // Lost while idle (a database restart): the next ping connects again instead of failing once.
          client.on('end', () => {
            if (current?.client === client) current = undefined;
          });
          current = { client, connected: client.connect() };
        }
        const { client, connected } = current;
        try {
          await connected;
          await client.query('SELECT 1');
        } catch (error) {
          if (current?.client === client) drop();
          throw error;
        }
      };
      await withDeadline(run(), 'a ping', timeoutMs, drop).then(
        () => health.answered(),
        (error) => {
          health.failed(error);
          throw error;
        },
      );
    },
    close() {
      closed = true;
      drop();
    },
  };
}

/**
 * node-postgres emits 'error' on a client whose connection dies (a backend terminated, a network
 * reset, a database restart); the pool listens only while the client is idle, and an 'error'
 * nobody listens to ends the process. The query in flight is rejected by the client itself (the
 * request answers 503), any later query on it fails with "not queryable", and the pool discards
 * it when it is released: nothing is left to do here but not crash.
 */
function survivesConnectionLoss(client: pg.Client): void {
  client.on('error', () => {});
}

async function openEmbedded(
  dataDir: string | undefined,
  loadDataDir: Blob | undefined,
  logger: HealthLogger | undefined,
): Promise<Database> {
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
    pool.on('connect', (client) => wrapQueries(client, 0));
    const db = kyselyOver(pool, () => pool.connect());
    return {
      engine: 'embedded',
      db,
      // In the process: nothing to lose but the process itself.
      health: createDatabaseHealth({ logger }),
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
      // One connection, shared with the requests: the ping waits its turn.
      ping: async (timeoutMs) => {
        await withDeadline(db.selectNoFrom((eb) => eb.val(1).as('ok')).execute(), 'a ping', timeoutMs);
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

/**
 * How each root Kysely instance takes a connection from its pool (connections.ts `checkout`). A
 * prepared statement outside a transaction (the read of nearly every GET) takes one directly:
 * Kysely's connection provider and executor layers were ~7 % of the CPU profile of
 * GET /api/v1/subscriptions/{id} (bench/README.md), for a query that needs none of them.
 * Transactions still run through Kysely, on their own connection.
 */
const checkoutsOf = new WeakMap<object, () => Promise<pg.PoolClient>>();

function kyselyOver(pool: pg.Pool, take: () => Promise<pg.PoolClient>): Kysely<Tables> {
  const db = new Kysely<Tables>({
    dialect: new PostgresDialect({ pool: { connect: take, end: () => pool.end() } }),
  });
  checkoutsOf.set(db, take);
  return db;
}

/** Statement names by SQL text: what `wrapQueries` sends each text as. */
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
  const take = checkoutsOf.get(executor);
  if (take) {
    // As Kysely does: a failed statement leaves the connection usable (pool.query would drop it),
    // unless it failed for a connection failure (then release() destroys it).
    const client = await take();
    try {
      return (await client.query<Row & pg.QueryResultRow>(text, values)).rows;
    } finally {
      client.release();
    }
  }
  return (await executor.executeQuery<Row>(CompiledQuery.raw(text, values))).rows;
}

/**
 * Kysely's driver sends every query as `client.query(text, values)`, with no way to pass a
 * statement name: on this connection, a text that `runPrepared` has named goes out as
 * `client.query({ name, text, values })`. Any other text goes through unchanged.
 *
 * With `queryTimeoutMs`, a query unanswered after that long rejects with DatabaseTimeoutError and
 * the connection is discarded: whether its statement ran, or a transaction is still open on it,
 * is unknown, so it must serve nobody else (node-postgres's own `query_timeout` leaves it in the
 * pool). The server's statement_timeout, set below this limit, cancels a merely slow statement
 * first and keeps the connection.
 */
function wrapQueries(client: pg.PoolClient, queryTimeoutMs: number, health?: DatabaseHealth): void {
  // The class's own query, looked up on each call (instrumentation may wrap the prototype's).
  const query = (...args: unknown[]) => Object.getPrototypeOf(client).query.apply(client, args);
  const discard = () => client.connection.stream.destroy();
  client.query = ((textOrConfig: unknown, values?: unknown, callback?: unknown) => {
    if (callback !== undefined) return query(textOrConfig, values, callback);
    const name = typeof textOrConfig === 'string' ? statementNames.get(textOrConfig) : undefined;
    const pending = traceQuery(textOrConfig, name, () =>
      name ? query({ name, text: textOrConfig, values }) : query(textOrConfig, values),
    );
    const limited = queryTimeoutMs > 0 ? withDeadline(pending, 'a query', queryTimeoutMs, discard) : pending;
    return health ? settleQuery(client, limited, health) : limited;
  }) as typeof client.query;
}
