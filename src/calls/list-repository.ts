/** The calls lists' filters, pages and totals (partner, console, portal and operator lists). */
import { sql } from 'kysely';
import type { Executor } from '../core/db/database.js';
import { offsetOf, type PageRequest } from '../core/db/pagination.js';
import { CALL_COLUMNS, CALL_ITEM_PAIRS, type CallRow } from './repository.js';
import type { CallDirection, CallStatus, ListPartnerCallsQuery } from './schemas.js';

export interface CallFilter {
  /** Operator lists may span tenants; partner-facing reads always pass one. */
  tenantId?: string;
  agentId?: string;
  userId?: string;
  status?: CallStatus;
  createdAfter?: Date;
  createdBefore?: Date;
  direction?: CallDirection;
  /** The callee's number: on an inbound call, the tenant's number rung (the console's calls per number). */
  toNumber?: string;
}

/**
 * A list's total counts at most this many calls past the end of the page asked for: below that it
 * is exact, above it a lower bound that still promises a next page (docs/calls.md, "Listing at
 * scale"). Measured (bench/README.md, "Tuning constants"): counting 10,000 index entries takes
 * ~1.8 ms of database time, more than the page of 100 itself (~0.7 ms).
 */
export const COUNTED_PAST_PAGE = 10_000;

/** The filter of GET /api/v1/calls (and the consoles' lists, which add the number rung). */
export function partnerCallFilter(
  tenantId: string,
  query: ListPartnerCallsQuery,
  extra: { to?: string } = {},
): CallFilter {
  return {
    ...{ tenantId, agentId: query.agent_id, userId: query.user_id, status: query.status },
    createdAfter: query.created_after ? new Date(query.created_after) : undefined,
    createdBefore: query.created_before ? new Date(query.created_before) : undefined,
    direction: query.direction,
    toNumber: extra.to,
  };
}

export function filteredCalls(db: Executor, filter: CallFilter) {
  let query = db.selectFrom('calls');
  if (filter.tenantId !== undefined) query = query.where('tenant_id', '=', filter.tenantId);
  if (filter.agentId !== undefined) query = query.where('agent_id', '=', filter.agentId);
  if (filter.userId !== undefined) query = query.where('user_id', '=', filter.userId);
  if (filter.status !== undefined) query = query.where('status', '=', filter.status);
  if (filter.createdAfter !== undefined) query = query.where('created_at', '>', filter.createdAfter);
  if (filter.createdBefore !== undefined) query = query.where('created_at', '<', filter.createdBefore);
  if (filter.direction !== undefined) query = query.where('direction', '=', filter.direction);
  if (filter.toNumber !== undefined) query = query.where('to_number', '=', filter.toNumber);
  return query;
}

/**
 * A page of calls, newest first unless `order` is asc, ties broken by id. The page's ids are
 * found first, from the listing indexes alone (migration 0014), and only those rows are read
 * from the table: rows skipped by a deep page cost an index entry each, not a table read. The
 * total is counted apart (countCalls): a window count would read every matching row.
 */
export async function listCalls(
  db: Executor,
  filter: CallFilter,
  limit: number,
  offset: number,
  order: 'asc' | 'desc' = 'desc',
): Promise<CallRow[]> {
  const page = pageIds(db, filter, limit, offset, order);
  return db
    .selectFrom(page.as('page'))
    .innerJoin('calls', 'calls.id', 'page.id')
    .select(CALL_COLUMNS.map((column) => `calls.${column}` as const))
    .orderBy('page.created_at', order)
    .orderBy('page.id', order)
    .execute();
}

/** The page's ids and times, from an index alone (the two lists join the rows to them). */
function pageIds(db: Executor, filter: CallFilter, limit: number, offset: number, order: 'asc' | 'desc') {
  return filteredCalls(db, filter)
    .select(['id', 'created_at'])
    .orderBy('created_at', order)
    .orderBy('id', order)
    .limit(limit)
    .offset(offset);
}

/**
 * The same page as listCalls, as the JSON text of its items the way GET /api/v1/calls shows them
 * (CallListItem), with their number. Built by PostgreSQL in the statement that reads the rows: a
 * page of 100 whole calls then costs the service no row parsing, no objects and no serialising,
 * which were most of its CPU time per list (bench/README.md, "Lists at scale").
 */
export async function listCallsJson(
  db: Executor,
  filter: CallFilter,
  limit: number,
  offset: number,
  order: 'asc' | 'desc',
  engine: string,
): Promise<{ items: string; count: number }> {
  const page = pageIds(db, filter, limit, offset, order);
  const direction = sql.raw(order === 'asc' ? 'ASC' : 'DESC');
  const row = await db
    .selectFrom(page.as('page'))
    .innerJoin('calls as c', 'c.id', 'page.id')
    .select([
      sql<string>`coalesce(json_agg(json_build_object(${sql.raw(CALL_ITEM_PAIRS)}, 'engine', coalesce(c.engine, ${engine}))
        ORDER BY page.created_at ${direction}, page.id ${direction}), '[]')::text`.as('items'),
      sql<string>`count(*)`.as('count'),
    ])
    .executeTakeFirstOrThrow();
  return { items: row.items, count: Number(row.count) };
}

/**
 * Calls matching the filter, counted from an index, but never more than `atMost` of them: a
 * count over a million rows per request would cost more than the page (docs/calls.md, "Listing
 * at scale"). Without `atMost` the count is exact.
 */
export async function countCalls(db: Executor, filter: CallFilter, atMost?: number): Promise<number> {
  if (atMost === undefined) {
    const row = await filteredCalls(db, filter)
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .executeTakeFirstOrThrow();
    return Number(row.count);
  }
  const matched = filteredCalls(db, filter).select('id').limit(atMost);
  const row = await db
    .selectFrom(matched.as('matched'))
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/** A list's total: counted up to COUNTED_PAST_PAGE calls past the page, exact below that. */
export function countCallsPastPage(db: Executor, filter: CallFilter, request: PageRequest): Promise<number> {
  const atMost = Math.min(Number.MAX_SAFE_INTEGER, offsetOf(request) + request.limit + COUNTED_PAST_PAGE);
  return countCalls(db, filter, atMost);
}
