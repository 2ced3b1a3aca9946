/**
 * What the tenant billed its users in a period, per currency, from the rows that record each
 * charge: subscription periods (subscription_charges), succeeded top-ups (top_ups) and overage not
 * refused by the processor (overage_charges, as the usage report counts it). Each part is a range
 * of its table's (tenant_id, created_at) index: a month of one tenant, whatever its history.
 */
import { sql } from 'kysely';
import type { Executor } from '../core/db/database.js';

export interface RevenueTotals {
  currency: string;
  /** Minor units of the currency. */
  subscriptions: number;
  top_ups: number;
  overage: number;
}

export async function revenueBetween(
  db: Executor,
  tenantId: string,
  from: Date,
  to: Date,
): Promise<RevenueTotals[]> {
  const { rows } = await sql<{ currency: string; subscriptions: string; top_ups: string; overage: string }>`
    SELECT currency, sum(subscriptions) AS subscriptions, sum(top_ups) AS top_ups, sum(overage) AS overage
    FROM (
      SELECT currency, amount AS subscriptions, 0 AS top_ups, 0 AS overage
      FROM subscription_charges
      WHERE tenant_id = ${tenantId} AND created_at >= ${from} AND created_at < ${to}
      UNION ALL
      SELECT currency, 0, amount, 0
      FROM top_ups
      WHERE tenant_id = ${tenantId} AND status = 'succeeded' AND created_at >= ${from} AND created_at < ${to}
      UNION ALL
      SELECT currency, 0, 0, amount
      FROM overage_charges
      WHERE tenant_id = ${tenantId} AND status <> 'failed' AND created_at >= ${from} AND created_at < ${to}
    ) charged
    GROUP BY currency
    ORDER BY currency`.execute(db);
  return rows.map((row) => ({
    currency: row.currency,
    subscriptions: Number(row.subscriptions),
    top_ups: Number(row.top_ups),
    overage: Number(row.overage),
  }));
}
