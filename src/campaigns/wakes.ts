/**
 * The SQL of waking campaigns out of their chain's turn (scheduler.ts `wake`): the campaigns a
 * balance coming back concerns, and pulling a chain's next tick forward.
 */
import { sql } from 'kysely';
import type { Executor } from '../core/db/database.js';

/** The campaigns of the tenant paused by itself for `reason`; of one owner's agents when given. */
export async function campaignsPausedFor(
  db: Executor,
  tenantId: string,
  reason: 'insufficient_credits' | 'tenant_balance_exhausted',
  ownerId?: string,
): Promise<string[]> {
  // The reason as a literal: the partial index campaigns_paused_for_balance (migration 0036) is
  // then provably usable by the plan.
  const result = await sql<{ id: string }>`
    SELECT c.id FROM campaigns c
    WHERE c.tenant_id = ${tenantId} AND c.status = 'paused'
      AND c.pause_reason IN ('insufficient_credits', 'tenant_balance_exhausted') AND c.pause_reason = ${sql.lit(reason)}
      AND (${ownerId ?? null}::text IS NULL
           OR EXISTS (SELECT 1 FROM agents a WHERE a.id = c.agent_id AND a.user_id = ${ownerId ?? null}::text))
    ORDER BY c.created_at, c.id`.execute(db);
  return result.rows.map((row) => row.id);
}

/**
 * Makes the chain's queued tick (its singleton key `tickKey`) due at `at` if it was due later.
 * False when the chain has no tick queued or running at all (then the caller arms one).
 */
export async function pullTickForward(tx: Executor, tickKey: string, at: Date): Promise<boolean> {
  const result = await sql<{ live: boolean }>`
    WITH pulled AS (
      UPDATE jobs SET run_at = ${at}
      WHERE singleton_key = ${tickKey} AND status = 'queued' AND run_at > ${at}
      RETURNING id
    )
    SELECT EXISTS (SELECT 1 FROM jobs WHERE singleton_key = ${tickKey} AND status IN ('queued', 'running')) AS live`.execute(
    tx,
  );
  return result.rows[0]?.live ?? false;
}
