/**
 * Keeps the idempotency keys this process is executing (src/core/idempotency/store.ts) owned: one timer,
 * running only while there are any, pushes their leases forward every third of a lease. A process
 * that dies stops renewing, which is how another takes its keys over within one lease.
 */
import { sql } from 'kysely';
import type { Clock } from '../clock.js';
import type { Db } from '../db/database.js';

export interface LeasedKey {
  tenantId: string;
  key: string;
  owner: string;
}

export function createLeaseRenewer(options: { db: Db; clock: Clock; leaseMs: number }) {
  const { db, clock, leaseMs } = options;
  // The keys this process executes, renewed together by one timer while there are any.
  const live = new Map<string, LeasedKey>();
  const liveId = (c: LeasedKey) => `${c.tenantId}\n${c.key}\n${c.owner}`;
  let renewer: NodeJS.Timeout | undefined;

  function track(claim: LeasedKey) {
    live.set(liveId(claim), { tenantId: claim.tenantId, key: claim.key, owner: claim.owner });
    if (!renewer) {
      renewer = setInterval(() => void renewLeases(), Math.max(1, Math.floor(leaseMs / 3)));
      renewer.unref();
    }
  }

  function untrack(claim: LeasedKey) {
    live.delete(liveId(claim));
    if (live.size === 0 && renewer) {
      clearInterval(renewer);
      renewer = undefined;
    }
  }

  async function renewLeases() {
    const claims = [...live.values()];
    if (claims.length === 0) return;
    const lockedUntil = new Date(clock.now().getTime() + leaseMs);
    try {
      // SKIP LOCKED: a row locked right now belongs to its owner's open transaction (recording the
      // answer); waiting for it here could join a deadlock, and the owner is plainly alive.
      await sql`
        UPDATE idempotency_keys AS k SET locked_until = ${lockedUntil}
        FROM (
          SELECT tenant_id, key FROM idempotency_keys
          WHERE (tenant_id, key, owner) IN (
            SELECT * FROM unnest(${claims.map((c) => c.tenantId)}::text[], ${claims.map((c) => c.key)}::text[],
                                 ${claims.map((c) => c.owner)}::text[]))
            AND status = 'executing'
          FOR UPDATE SKIP LOCKED
        ) AS owned
        WHERE k.tenant_id = owned.tenant_id AND k.key = owned.key`.execute(db);
    } catch {
      // A failed renewal (database away) only shortens the lease; the next tick tries again.
    }
  }

  return { track, untrack };
}
