/**
 * Which failures are a database outage (src/core/db/outages.ts) and how the health tracker turns
 * them into one line when the database is lost and one when it is back (src/core/db/health.ts).
 */
import { describe, expect, it } from 'vitest';
import { ReadOnlyServerError } from '../../src/core/db/connections.js';
import { createDatabaseHealth, isReportedOutage } from '../../src/core/db/health.js';
import { isConnectionFailure, isTemporarilyUnavailable } from '../../src/core/db/outages.js';
import { toApiError } from '../../src/core/http/error-handler.js';

const withCode = (code: string, message = 'failed') => Object.assign(new Error(message), { code });

describe('database failures', () => {
  it.each([
    ['read-only (a demoted primary)', withCode('25006')],
    ['terminated or shutting down', withCode('57P01')],
    ['crash of another backend', withCode('57P02')],
    ['starting up, in recovery', withCode('57P03')],
    ['a connection exception', withCode('08006')],
    ['connection refused', withCode('ECONNREFUSED')],
    ['connection reset', withCode('ECONNRESET')],
    ['no route to the host', withCode('EHOSTUNREACH')],
    ['a query unanswered in time', withCode('ETIMEDOUT')],
    ['the connection died under the query', new Error('Connection terminated unexpectedly')],
    ['the pool could not connect in time', new Error('Connection terminated due to connection timeout')],
    ['the client could not connect in time', new Error('timeout expired')],
    [
      'a client that lost its connection',
      new Error('Client has encountered a connection error and is not queryable'),
    ],
    ['every address refused', new AggregateError([withCode('ECONNREFUSED'), withCode('ECONNREFUSED')])],
    ['a new connection to a read-only server', new ReadOnlyServerError()],
  ])('%s: the connection is discarded, and the answer is 503 with Retry-After', (_, error) => {
    expect(isConnectionFailure(error)).toBe(true);
    const { apiError } = toApiError(error);
    expect(apiError.status).toBe(503);
    expect(apiError.code).toBe('service_unavailable');
    expect(apiError.headers?.['retry-after']).toBe('1');
  });

  it.each([
    ['a statement timeout', withCode('57014')],
    ['too many connections', withCode('53300')],
    ['the database is gone', withCode('3D000')],
    ['no free connection of the pool in time', new Error('timeout exceeded when trying to connect')],
  ])('%s: 503, but the connection (if any) is not at fault', (_, error) => {
    expect(isConnectionFailure(error)).toBe(false);
    expect(isTemporarilyUnavailable(error)).toBe(true);
    expect(toApiError(error).apiError.status).toBe(503);
  });

  it.each([
    ['a unique violation', withCode('23505')],
    ['a bug', new Error('undefined is not a function')],
    ['a syntax error', withCode('42601')],
  ])('%s is no outage', (_, error) => {
    expect(isConnectionFailure(error)).toBe(false);
    expect(isTemporarilyUnavailable(error)).toBe(false);
  });
});

describe('the database health tracker', () => {
  function tracker(stalledAfterMs = 2_000) {
    let now = 0;
    const lines: { level: string; obj: any; msg: string }[] = [];
    const health = createDatabaseHealth({
      now: () => now,
      stalledAfterMs,
      logger: {
        error: (obj, msg) => lines.push({ level: 'error', obj, msg }),
        info: (obj, msg) => lines.push({ level: 'info', obj, msg }),
      },
    });
    return { health, lines, at: (ms: number) => (now = ms) };
  }

  it('logs one line when the database is lost and one when it is back, with the outage', () => {
    const { health, lines, at } = tracker();
    health.answered();
    const failures = Array.from({ length: 50 }, () => withCode('ECONNREFUSED', 'connect ECONNREFUSED'));
    at(1_000);
    for (const error of failures) expect(health.failed(error)).toBe(true);
    expect(health.available).toBe(false);
    at(2_500);
    health.failed(withCode('57P03'));
    // The first answer after the last failure ends the outage once a second passes without another.
    at(3_000);
    health.answered();
    expect(health.available).toBe(false);
    at(3_600);
    health.answered();
    at(4_100);
    health.answered();
    expect(health.available).toBe(true);
    expect(lines.map((l) => [l.level, l.msg])).toEqual([
      ['error', 'database unavailable: requests wait for it, then answer 503, until it is back'],
      ['info', 'database available again after 2.0 s'],
    ]);
    expect(lines[0].obj).toEqual({ code: 'ECONNREFUSED', reason: 'connect ECONNREFUSED' });
    expect(lines[1].obj).toEqual({ outage_ms: 2_000 });
    // What it counted is not logged again elsewhere.
    expect(failures.every(isReportedOutage)).toBe(true);
  });

  it('a failure just after the first answer keeps the outage open: one outage, not several', () => {
    const { health, lines, at } = tracker();
    at(1_000);
    health.failed(withCode('57P01'));
    at(1_200);
    health.answered();
    at(1_300);
    health.failed(new Error('Connection terminated unexpectedly'));
    at(1_400);
    health.answered();
    at(2_500);
    health.answered();
    expect(lines.map((l) => l.level)).toEqual(['error', 'info']);
    expect(lines[1].obj).toEqual({ outage_ms: 400 });
  });

  it('failures that are no outage change nothing and stay for the caller to log', () => {
    const { health, lines } = tracker();
    const unique = withCode('23505');
    expect(health.failed(unique)).toBe(false);
    expect(health.failed(withCode('57014'))).toBe(false);
    expect(isReportedOutage(unique)).toBe(false);
    expect(health.available).toBe(true);
    expect(lines).toEqual([]);
  });

  it("the pool's wait running out is an outage only when nothing answered for as long", () => {
    const { health, lines, at } = tracker(2_000);
    const busy = new Error('timeout exceeded when trying to connect');
    at(1_000);
    health.answered();
    at(2_500);
    // Busy, not gone: queries are being answered.
    expect(health.failed(busy)).toBe(false);
    at(3_100);
    expect(health.failed(busy)).toBe(true);
    expect(lines.map((l) => l.level)).toEqual(['error']);
  });
});
