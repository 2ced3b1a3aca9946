/**
 * The PostgreSQL pool's connections through a failover:
 *
 * - A new connection to a server that does not take writes (a standby, a demoted primary that a
 *   load balancer still routes to for a moment) is closed and another one tried, as libpq's
 *   `target_session_attrs=read-write` does (node-postgres has no such option). PostgreSQL 14 and
 *   later report `in_hot_standby` and `default_transaction_read_only` while the connection starts,
 *   so the check costs no round trip; an older server is asked `SHOW transaction_read_only` once
 *   per new connection. A connection taken from the pool is never checked again.
 * - A connection whose query failed with a connection failure (outages.ts: terminated, reset,
 *   read-only, shutting down, timed out) is released with that error, so the pool destroys it
 *   instead of handing it to the next request.
 * - Every checkout failure and every query outcome goes to the health tracker (health.ts).
 */
import pg from 'pg';
import type { DatabaseHealth } from './health.js';
import { isConnectionFailure } from './outages.js';

/** A new connection reached a server that does not take writes; SQLSTATE read_only_sql_transaction. */
export class ReadOnlyServerError extends Error {
  readonly code = '25006';
  constructor() {
    super('The database server does not take writes (a standby, or a primary being demoted)');
    this.name = 'ReadOnlyServerError';
  }
}

/** A pg.Client that refuses, once connected, a server that does not take writes. */
export class WritableServerClient extends pg.Client {
  /** The parameters the server reported while the connection started. */
  private readonly reported = new Map<string, string>();

  constructor(config?: string | pg.ClientConfig) {
    super(config);
    this.connection.on('parameterStatus', (message: { parameterName: string; parameterValue: string }) => {
      this.reported.set(message.parameterName, message.parameterValue);
    });
  }

  // The pool connects with a callback, a caller with a promise: both are honoured.
  override connect(): Promise<pg.Client>;
  override connect(callback: ((error: Error) => void) | ((error: null, client: pg.Client) => void)): void;
  override connect(callback?: (...args: any[]) => void): Promise<pg.Client> | undefined {
    const connected = super
      .connect()
      .then(() => this.refuseReadOnly())
      .then(() => this);
    if (!callback) return connected;
    connected.then((client) => callback(null, client), callback);
    return undefined;
  }

  private async refuseReadOnly(): Promise<void> {
    const hotStandby = this.reported.get('in_hot_standby');
    const readOnly = this.reported.get('default_transaction_read_only');
    let refused: boolean;
    if (hotStandby !== undefined || readOnly !== undefined) {
      refused = hotStandby === 'on' || readOnly === 'on';
    } else {
      const { rows } = await super.query('SHOW transaction_read_only');
      refused = rows[0]?.transaction_read_only === 'on';
    }
    if (refused) {
      await this.end().catch(() => {});
      throw new ReadOnlyServerError();
    }
  }
}

/** Why each pooled connection must not serve again: set by `settleQuery`, read on release. */
const broken = new WeakMap<pg.PoolClient, unknown>();

/** Records the outcome of a connection's query: its health, and whether the connection is broken. */
export function settleQuery<T>(
  client: pg.PoolClient,
  pending: Promise<T>,
  health: DatabaseHealth,
): Promise<T> {
  return pending.then(
    (result) => {
      health.answered();
      return result;
    },
    (error) => {
      if (isConnectionFailure(error)) broken.set(client, error);
      health.failed(error);
      throw error;
    },
  );
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Takes a connection from the pool, trying again while the database is momentarily away: a new
 * connection refused, cut, or reaching a server that is starting, stopping or read-only (the
 * moments of a failover) is tried again, a little later each time, within `connectMs` in all; a
 * failover shorter than that costs the request time, not a refusal. Then, or on any other
 * failure, it rejects (the request answers 503). The connection's `release()` destroys it when
 * one of its queries found it broken.
 */
export async function checkout(
  pool: pg.Pool,
  health: DatabaseHealth,
  connectMs: number,
): Promise<pg.PoolClient> {
  const deadline = Date.now() + connectMs;
  let failure: unknown;
  for (let pause = 25; ; pause = Math.min(2 * pause, 250)) {
    let client: pg.PoolClient;
    try {
      // The first attempt is bounded by the pool's own limit (connectMs), the next by what is left.
      client = await (failure === undefined ? pool.connect() : within(pool.connect(), deadline, failure));
    } catch (error) {
      failure = error;
      // Every failed attempt counts: the outage began at the first, even if a later one succeeds.
      health.failed(error);
      if (isConnectionFailure(error) && Date.now() + pause < deadline) {
        await sleep(pause);
        continue;
      }
      throw error;
    }
    const release = client.release;
    client.release = (error?: Error | boolean) => release(error || (broken.get(client) as Error | undefined));
    return client;
  }
}

/** `pending`, or `failure` once `deadline` has passed (a connection that arrives later goes back to the pool). */
function within(pending: Promise<pg.PoolClient>, deadline: number, failure: unknown): Promise<pg.PoolClient> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () => {
        pending.then(
          (client) => client.release(),
          () => {},
        );
        reject(failure);
      },
      Math.max(0, deadline - Date.now()),
    );
  });
  return Promise.race([pending, late]).finally(() => clearTimeout(timer));
}
