/**
 * Which failures mean "the database cannot serve right now": the one list, read by the error
 * handler (503 `service_unavailable` with Retry-After, never 500), by the pool (a connection that
 * failed this way is discarded, never handed out again) and by the health tracker (health.ts).
 */

/** Network failures of a connection (DatabaseTimeoutError is `ETIMEDOUT`), and writes to its closed socket. */
const CONNECTION_ERRNOS = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'ETIMEDOUT',
  'EPIPE',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EADDRNOTAVAIL',
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_WRITE_AFTER_END',
]);

/**
 * SQLSTATEs of a server that cannot serve this connection any more: 25006 read_only_sql_transaction
 * (a standby, or a primary being demoted in a failover), 57P01 admin_shutdown (terminated, or the
 * server shutting down), 57P02 crash_shutdown, 57P03 cannot_connect_now (starting up, in recovery);
 * and class 08, connection exceptions.
 */
const CONNECTION_SQLSTATES = new Set(['25006', '57P01', '57P02', '57P03']);

/**
 * node-postgres's own errors, which carry no code: a connection that died under a query or before
 * it ("not queryable"), or that was not completed in time (the client's "timeout expired", the
 * pool's "Connection terminated due to connection timeout").
 */
const CONNECTION_MESSAGES =
  /Connection terminated|not queryable|timeout expired|Connection ended unexpectedly/i;

/**
 * Faults that pass by themselves without the connection being at fault: class 53 insufficient
 * resources (too many connections, disk full), class 57 operator intervention (a statement
 * cancelled by statement_timeout, 57014), 3D000 (the database itself is gone).
 */
const TRANSIENT_SQLSTATE_CLASSES = new Set(['53', '57', '3D']);

/** The pool had no free connection within DB_CONNECT_TIMEOUT_MS. */
const POOL_WAIT_TIMEOUT = /timeout exceeded when trying to connect/i;

function codeOf(error: unknown): string | undefined {
  const code = (error as { code?: unknown } | null | undefined)?.code;
  return typeof code === 'string' ? code : undefined;
}

function messageOf(error: unknown): string {
  const message = (error as { message?: unknown } | null | undefined)?.message;
  return typeof message === 'string' ? message : '';
}

/**
 * The connection, or the server behind it, cannot serve: the connection must be discarded, and
 * the database counts as unavailable until one answers again.
 */
export function isConnectionFailure(error: unknown): boolean {
  // Node's connection attempts to several addresses fail with all of their errors.
  if (error instanceof AggregateError) return error.errors.some(isConnectionFailure);
  const code = codeOf(error);
  if (code !== undefined) {
    if (CONNECTION_SQLSTATES.has(code) || CONNECTION_ERRNOS.has(code)) return true;
    if (/^08[0-9A-Z]{3}$/.test(code)) return true;
  }
  return CONNECTION_MESSAGES.test(messageOf(error));
}

/** The pool's wait for a free connection ran out (every connection busy, or stuck on a stalled server). */
export function isPoolWaitTimeout(error: unknown): boolean {
  return POOL_WAIT_TIMEOUT.test(messageOf(error));
}

/** Anything that passes by itself: answered 503 `service_unavailable` with Retry-After. */
export function isTemporarilyUnavailable(error: unknown): boolean {
  if (isConnectionFailure(error) || isPoolWaitTimeout(error)) return true;
  const code = codeOf(error);
  return code !== undefined && /^[0-9A-Z]{5}$/.test(code) && TRANSIENT_SQLSTATE_CLASSES.has(code.slice(0, 2));
}
