/**
 * The database's health as this process sees it, from the outcome of its own queries and
 * connection attempts: one log line when the database is lost, one when it is back (with how long
 * the outage lasted), instead of a stack per request and a line per job poll.
 *
 * Lost: a query or a connection attempt failed with a connection failure (outages.ts), or the
 * pool's wait for a connection ran out while nothing had answered for that long (a stalled
 * server). Back: a query answered after `quietMs` without any failure (a failover's last broken
 * connections fail for a moment after the first answers: one outage, not several).
 *
 * Errors counted as part of an outage are remembered (`isReportedOutage`), so the places that log
 * failures (the error handler, the job runner) leave them out: the tracker has said it once.
 */
import { isConnectionFailure, isPoolWaitTimeout } from './outages.js';

/** Where the two state changes go (a pino logger fits). */
export interface HealthLogger {
  error(obj: object, msg: string): void;
  info(obj: object, msg: string): void;
}

export interface DatabaseHealth {
  /** False from the first failure of an outage until the database answers again. */
  readonly available: boolean;
  /** A query or a connection attempt failed; true when the failure is (part of) an outage. */
  failed(error: unknown): boolean;
  /** A query was answered. */
  answered(): void;
  /** Where the state changes are logged; none until set (the process sets its logger at start). */
  logger: HealthLogger | undefined;
}

export interface HealthOptions {
  logger?: HealthLogger;
  /** A pool wait that ran out counts as an outage when nothing answered for this long (DB_CONNECT_TIMEOUT_MS). */
  stalledAfterMs?: number;
  /** Back only once a query answers this long after the last failure. */
  quietMs?: number;
  now?: () => number;
}

const reported = new WeakSet<object>();

/** True when the health tracker counted `error` in an outage it has logged: do not log it again. */
export function isReportedOutage(error: unknown): boolean {
  return typeof error === 'object' && error !== null && reported.has(error);
}

export function createDatabaseHealth(options: HealthOptions = {}): DatabaseHealth {
  const now = options.now ?? Date.now;
  const stalledAfterMs = options.stalledAfterMs ?? 2_000;
  const quietMs = options.quietMs ?? 1_000;
  let downSince: number | undefined;
  let lastFailure = 0;
  let lastAnswer = now();
  /** The first answer since the last failure: when the outage ended, once it stays quiet. */
  let backSince: number | undefined;

  const health: DatabaseHealth = {
    logger: options.logger,
    get available() {
      return downSince === undefined;
    },
    failed(error) {
      const at = now();
      const outage =
        isConnectionFailure(error) || (isPoolWaitTimeout(error) && at - lastAnswer >= stalledAfterMs);
      if (!outage) return false;
      if (typeof error === 'object' && error !== null) reported.add(error);
      lastFailure = at;
      backSince = undefined;
      if (downSince === undefined) {
        downSince = at;
        const e = error as { code?: unknown; message?: unknown };
        health.logger?.error(
          { code: typeof e?.code === 'string' ? e.code : undefined, reason: String(e?.message ?? error) },
          'database unavailable: requests wait for it, then answer 503, until it is back',
        );
      }
      return true;
    },
    answered() {
      const at = now();
      lastAnswer = at;
      if (downSince === undefined) return;
      backSince ??= at;
      if (at - lastFailure < quietMs) return;
      const outageMs = backSince - downSince;
      downSince = undefined;
      backSince = undefined;
      health.logger?.info(
        { outage_ms: outageMs },
        `database available again after ${(outageMs / 1000).toFixed(1)} s`,
      );
    },
  };
  return health;
}
