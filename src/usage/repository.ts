/**
 * The usage report's reads: one tenant's month, every user or one (`userId`). Minutes come from the
 * credit ledger by reference (so they always agree with the balances), money from the top-ups and
 * overage charges settled in the month, outcomes from the calls that ended in it.
 */
import { sql } from 'kysely';
import type { Executor } from '../core/db/database.js';

export interface Month {
  start: Date;
  end: Date;
}

export interface LedgerTotals {
  user_id: string;
  included: number;
  used: number;
  topped_up: number;
  overage: number;
  adjustments: number;
  /** The balance at the end of the month: now, less what the ledger moved since. */
  balance: number;
}

export interface CallTotals {
  user_id: string;
  completed: number;
  no_answer: number;
  failed: number;
}

export interface MoneyTotals {
  user_id: string;
  currency: string;
  top_ups: number;
  overage: number;
}

export interface ReportUser {
  user_id: string;
  name: string | null;
  email: string;
  /** The plan's currency of the user's latest subscription started before the month's end. */
  currency: string | null;
}

/**
 * Calls are found by their creation (the indexed column), ended in the month: a call ended at most
 * this long after it was created (a scheduled retry included) is counted.
 */
const CALL_LOOKBACK = '92 days';

const userFilter = (column: string, userId: string | undefined) =>
  userId === undefined ? sql`` : sql`AND ${sql.ref(column)} = ${userId}`;

export async function ledgerTotals(
  db: Executor,
  tenantId: string,
  month: Month,
  userId?: string,
): Promise<LedgerTotals[]> {
  const { rows } = await sql<LedgerTotals>`
    WITH in_month AS (
      SELECT user_id,
        coalesce(sum(minutes) FILTER (WHERE reference LIKE 'period:%'), 0)::integer AS included,
        coalesce(-sum(minutes) FILTER (WHERE reference LIKE 'call:%'), 0)::integer AS used,
        coalesce(sum(minutes) FILTER (WHERE reference LIKE 'top\\_up:%'), 0)::integer AS topped_up,
        coalesce(sum(minutes) FILTER (WHERE reference LIKE 'overage:%'), 0)::integer AS overage,
        coalesce(sum(minutes) FILTER (WHERE reference IS NULL OR NOT (reference LIKE 'period:%'
          OR reference LIKE 'call:%' OR reference LIKE 'top\\_up:%' OR reference LIKE 'overage:%')), 0)::integer
          AS adjustments
      FROM credit_ledger
      WHERE tenant_id = ${tenantId} AND created_at >= ${month.start} AND created_at < ${month.end}
        ${userFilter('user_id', userId)}
      GROUP BY user_id
    ), since AS (
      SELECT user_id, sum(minutes)::integer AS minutes
      FROM credit_ledger
      WHERE tenant_id = ${tenantId} AND created_at >= ${month.end} ${userFilter('user_id', userId)}
      GROUP BY user_id
    )
    SELECT u.id AS user_id, coalesce(m.included, 0) AS included, coalesce(m.used, 0) AS used,
           coalesce(m.topped_up, 0) AS topped_up, coalesce(m.overage, 0) AS overage,
           coalesce(m.adjustments, 0) AS adjustments,
           u.credit_balance_minutes - coalesce(s.minutes, 0) AS balance
    FROM users u
    LEFT JOIN in_month m ON m.user_id = u.id
    LEFT JOIN since s ON s.user_id = u.id
    WHERE u.tenant_id = ${tenantId} ${userFilter('u.id', userId)}
      AND (u.deleted_at IS NULL OR m.user_id IS NOT NULL)`.execute(db);
  return rows;
}

export async function callTotals(
  db: Executor,
  tenantId: string,
  month: Month,
  userId?: string,
): Promise<CallTotals[]> {
  const { rows } = await sql<CallTotals>`
    SELECT user_id,
      count(*) FILTER (WHERE status = 'completed')::integer AS completed,
      count(*) FILTER (WHERE status = 'no_answer')::integer AS no_answer,
      count(*) FILTER (WHERE status = 'failed')::integer AS failed
    FROM calls
    WHERE tenant_id = ${tenantId} ${userFilter('user_id', userId)}
      AND created_at >= ${month.start}::timestamptz - ${CALL_LOOKBACK}::interval
      AND created_at < ${month.end}
      AND ended_at >= ${month.start} AND ended_at < ${month.end}
      AND status IN ('completed', 'no_answer', 'failed')
    GROUP BY user_id`.execute(db);
  return rows;
}

/** Succeeded top-ups and overage (not refused by the processor) settled in the month, per currency. */
export async function moneyTotals(
  db: Executor,
  tenantId: string,
  month: Month,
  userId?: string,
): Promise<MoneyTotals[]> {
  const { rows } = await sql<MoneyTotals>`
    SELECT user_id, currency, sum(top_ups)::bigint AS top_ups, sum(overage)::bigint AS overage
    FROM (
      SELECT user_id, currency, amount AS top_ups, 0 AS overage
      FROM top_ups
      WHERE tenant_id = ${tenantId} AND status = 'succeeded'
        AND created_at >= ${month.start} AND created_at < ${month.end} ${userFilter('user_id', userId)}
      UNION ALL
      SELECT user_id, currency, 0, amount
      FROM overage_charges
      WHERE tenant_id = ${tenantId} AND status <> 'failed'
        AND created_at >= ${month.start} AND created_at < ${month.end} ${userFilter('user_id', userId)}
    ) charged
    GROUP BY user_id, currency`.execute(db);
  return rows.map((row) => ({ ...row, top_ups: Number(row.top_ups), overage: Number(row.overage) }));
}

/** The users of the report (every live user, and deleted ones only when asked by id), with their currency. */
export async function reportUsers(
  db: Executor,
  tenantId: string,
  month: Month,
  userId?: string,
): Promise<ReportUser[]> {
  const { rows } = await sql<ReportUser>`
    SELECT u.id AS user_id, u.name, u.email, latest.currency
    FROM users u
    LEFT JOIN LATERAL (
      SELECT p.currency FROM subscriptions s JOIN plans p ON p.id = s.plan_id AND p.tenant_id = s.tenant_id
      WHERE s.tenant_id = u.tenant_id AND s.user_id = u.id AND s.created_at < ${month.end}
      ORDER BY s.created_at DESC, s.id DESC LIMIT 1
    ) latest ON true
    WHERE u.tenant_id = ${tenantId}
      ${userId === undefined ? sql`AND u.deleted_at IS NULL` : sql`AND u.id = ${userId}`}
    ORDER BY lower(u.email), u.id`.execute(db);
  return rows;
}

/**
 * The agency's wholesale cost of the month's calls (wallet_ledger, docs/wallets.md), in the
 * wallet's currency, as a decimal string of the major unit; undefined: the tenant has no wallet
 * (unmetered).
 */
export async function wholesaleCost(
  db: Executor,
  tenantId: string,
  month: Month,
): Promise<{ currency: string; cost: string } | undefined> {
  const { rows } = await sql<{ currency: string; cost: string }>`
    SELECT w.currency,
      (SELECT coalesce(sum(-l.minutes * l.wholesale_rate), 0)::text FROM wallet_ledger l
       WHERE l.tenant_id = w.tenant_id AND l.reason = 'call'
         AND l.created_at >= ${month.start} AND l.created_at < ${month.end}) AS cost
    FROM tenant_wallets w WHERE w.tenant_id = ${tenantId}`.execute(db);
  return rows[0];
}
