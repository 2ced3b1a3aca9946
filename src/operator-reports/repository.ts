/**
 * The operator's reads across tenants (docs/operator-console.md): the tenant search, each
 * tenant's counts, the engines' calls and the calls that look stuck, the job queues. Read-only
 * aggregates over the other capabilities' tables; the one write is a failed job put back in line.
 */
import { sql } from 'kysely';
import type { Executor } from '../core/db/database.js';

export interface TenantSearchRow {
  id: string;
  name: string;
  created_at: Date;
  balance_minutes: number | null;
  users: number;
}

export async function searchTenants(
  db: Executor,
  query: string | undefined,
  limit: number,
  offset: number,
): Promise<{ rows: TenantSearchRow[]; total: number }> {
  const pattern = query ? `%${query.replace(/[\\%_]/g, (c) => `\\${c}`)}%` : null;
  const where = pattern ? sql`WHERE t.name ILIKE ${pattern} OR t.id = ${query}` : sql``;
  const { rows } = await sql<TenantSearchRow>`
    SELECT t.id, t.name, t.created_at, w.balance_minutes,
      (SELECT count(*)::int FROM users u WHERE u.tenant_id = t.id AND u.deleted_at IS NULL) AS users
    FROM tenants t LEFT JOIN tenant_wallets w ON w.tenant_id = t.id
    ${where}
    ORDER BY t.created_at DESC, t.id DESC
    LIMIT ${limit} OFFSET ${offset}`.execute(db);
  const count = await sql<{ n: number }>`SELECT count(*)::int AS n FROM tenants t ${where}`.execute(db);
  return { rows, total: count.rows[0]?.n ?? 0 };
}

export async function tenantCounts(db: Executor, tenantId: string, monthStart: Date) {
  const { rows } = await sql<{ users: number; calls_this_month: number; engine_cost_usd: number | null }>`
    SELECT
      (SELECT count(*)::int FROM users WHERE tenant_id = ${tenantId} AND deleted_at IS NULL) AS users,
      (SELECT count(*)::int FROM calls WHERE tenant_id = ${tenantId} AND created_at >= ${monthStart}) AS calls_this_month,
      (SELECT sum(engine_cost_usd) FROM calls WHERE tenant_id = ${tenantId} AND created_at >= ${monthStart}) AS engine_cost_usd`.execute(
    db,
  );
  return rows[0];
}

/** Each tenant's engine cost (USD, as engines report it) of the calls made in [from, to). */
export async function engineCostByTenant(db: Executor, from: Date, to: Date): Promise<Map<string, number>> {
  const { rows } = await sql<{ tenant_id: string; cost: number }>`
    SELECT tenant_id, sum(engine_cost_usd)::float8 AS cost FROM calls
    WHERE created_at >= ${from} AND created_at < ${to} AND engine_cost_usd IS NOT NULL
    GROUP BY tenant_id`.execute(db);
  return new Map(rows.map((row) => [row.tenant_id, Number(row.cost)]));
}

export interface EngineEndingRow {
  engine: string;
  status: string;
  ended_reason: string | null;
  calls: number;
}

export async function callsByEngine(db: Executor, since: Date): Promise<EngineEndingRow[]> {
  const { rows } = await sql<EngineEndingRow>`
    SELECT coalesce(engine, 'simulator') AS engine, status, ended_reason, count(*)::int AS calls
    FROM calls WHERE created_at >= ${since}
    GROUP BY 1, 2, 3 ORDER BY 1, 4 DESC`.execute(db);
  return rows;
}

export interface WaitingCallRow {
  id: string;
  tenant_id: string;
  engine: string | null;
  engine_call_id: string | null;
  status: string;
  updated_at: Date;
}

/** Calls not final whose last news is older than `before` (with `placedOnly`: placed with an engine). */
export async function silentCalls(
  db: Executor,
  statuses: readonly string[],
  before: Date,
  placedOnly: boolean,
  limit: number,
): Promise<WaitingCallRow[]> {
  let query = db
    .selectFrom('calls')
    .select(['id', 'tenant_id', 'engine', 'engine_call_id', 'status', 'updated_at'])
    .where('status', 'in', statuses as never[])
    .where('updated_at', '<', before);
  if (placedOnly) query = query.where('engine_call_id', 'is not', null);
  return query.orderBy('updated_at').limit(limit).execute();
}

export interface QueueRow {
  queue: string;
  queued: number;
  running: number;
  due: number;
  oldest_due: Date | null;
  failed: number;
}

export async function queueDepths(db: Executor, now: Date): Promise<QueueRow[]> {
  const { rows } = await sql<QueueRow>`
    SELECT queue,
      count(*) FILTER (WHERE status = 'queued')::int AS queued,
      count(*) FILTER (WHERE status = 'running')::int AS running,
      count(*) FILTER (WHERE status = 'queued' AND run_at <= ${now})::int AS due,
      min(run_at) FILTER (WHERE status = 'queued' AND run_at <= ${now}) AS oldest_due,
      count(*) FILTER (WHERE status = 'failed')::int AS failed
    FROM jobs GROUP BY queue ORDER BY queue`.execute(db);
  return rows;
}

export interface FailedJobRow {
  id: string;
  queue: string;
  tenant_id: string | null;
  attempts: number;
  last_error: string | null;
  finished_at: Date | null;
}

export async function failedJobs(db: Executor, limit: number): Promise<FailedJobRow[]> {
  const { rows } = await sql<FailedJobRow>`
    SELECT id::text AS id, queue, tenant_id, attempts, last_error, finished_at FROM jobs
    WHERE status = 'failed' ORDER BY finished_at DESC NULLS LAST, id DESC LIMIT ${limit}`.execute(db);
  return rows;
}

/** Puts a failed job back in line, due now, with its attempts counted from zero; false when it is not failed. */
export async function requeueFailedJob(db: Executor, jobId: string, now: Date): Promise<boolean> {
  const { rows } = await sql<{ id: string }>`
    UPDATE jobs SET status = 'queued', run_at = ${now}, attempts = 0, finished_at = NULL,
      locked_by = NULL, locked_until = NULL
    WHERE id = ${jobId}::bigint AND status = 'failed' RETURNING id`.execute(db);
  return rows.length > 0;
}
