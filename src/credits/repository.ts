import { type Executor, runPrepared } from '../core/db/database.js';
import { newId } from '../core/ids.js';
import { INSERT_NEW_JOBS } from '../core/jobs/runner.js';
import { recordEventsFrom } from '../events/repository.js';

export interface CreditLedgerTable {
  id: string;
  tenant_id: string;
  user_id: string;
  minutes: number;
  reason: string | null;
  reference: string | null;
  created_at: Date;
}

declare module '../core/db/database.js' {
  interface Tables {
    credit_ledger: CreditLedgerTable;
  }
}

export interface CreditEntry {
  tenantId: string;
  userId: string;
  /** Positive grants, negative debits. */
  minutes: number;
  reason: string | null;
  /** Makes the entry happen at most once (e.g. `call:<id>`); a repeat is ignored. */
  reference?: string;
  at: Date;
}

/**
 * The one way credits move, as CTEs for a statement that defines `credit_entry` before them
 * (columns id, tenant_id, user_id, minutes, reason, reference, created_at): each entry is appended
 * to the ledger unless its reference is already there, and each user's balance moves once, by the
 * sum of their appended entries. In the same statement (so in the caller's transaction, whoever
 * the caller is: `addCreditEntry`, or finishing calls with one entry per completed call) a
 * balance that crossed below the tenant's `low_balance_minutes` records `credits.low`, and one that
 * went from above zero to zero or less records `credits.exhausted` (docs/events.md). The balance
 * row is locked by the UPDATE, so concurrent moves of one balance see each other's result and a
 * crossing is seen by exactly one of them.
 */
export const APPEND_CREDIT_ENTRIES = `
  credited AS (
    INSERT INTO credit_ledger (id, tenant_id, user_id, minutes, reason, reference, created_at)
    SELECT id, tenant_id, user_id, minutes, reason, reference, created_at FROM credit_entry
    ON CONFLICT (reference) DO NOTHING
    RETURNING tenant_id, user_id, minutes, created_at
  ), balance AS (
    UPDATE users u SET credit_balance_minutes = u.credit_balance_minutes + moved.minutes
    FROM (SELECT tenant_id, user_id, sum(minutes)::integer AS minutes, max(created_at) AS at
          FROM credited GROUP BY tenant_id, user_id) moved
    WHERE u.tenant_id = moved.tenant_id AND u.id = moved.user_id
    RETURNING u.tenant_id, u.id AS user_id, u.credit_balance_minutes,
              u.credit_balance_minutes - moved.minutes AS previous_minutes, moved.at
  ), credit_event AS (
    SELECT b.tenant_id, crossing.type, b.at AS created_at,
           jsonb_build_object('object', jsonb_build_object('user_id', b.user_id,
             'balance_minutes', b.credit_balance_minutes, 'threshold_minutes', t.low_balance_minutes)) AS data
    FROM balance b
    JOIN tenants t ON t.id = b.tenant_id
    CROSS JOIN LATERAL (VALUES
      ('credits.low', b.previous_minutes >= t.low_balance_minutes AND b.credit_balance_minutes < t.low_balance_minutes),
      ('credits.exhausted', b.previous_minutes > 0 AND b.credit_balance_minutes <= 0)
    ) AS crossing(type, crossed)
    WHERE crossing.crossed
  ), ${recordEventsFrom('credit_event')}`;

/**
 * The job queued when a user's balance comes back above zero (from zero or less): whatever waits
 * for the user's credits (campaigns paused for them) is told by its handler, which the composition
 * root hands in (jobs.ts). Payload: `{ user_id }`, the job's tenant the user's.
 */
export const CREDITS_RESTORED_QUEUE = 'credits.restored';
const CREDITS_RESTORED_MAX_ATTEMPTS = 10;

/**
 * Appends a ledger entry and moves the user's balance (one statement, in the caller's transaction),
 * queuing `credits.restored` in the same statement when the balance comes back above zero.
 * Returns the new balance, or undefined when an entry with the same reference already exists.
 */
export async function addCreditEntry(db: Executor, entry: CreditEntry): Promise<number | undefined> {
  const rows = await runPrepared<{ credit_balance_minutes: number }>(db, {
    name: 'credits_add_entry',
    text: `
      WITH credit_entry AS (
        SELECT $1::text AS id, $2::text AS tenant_id, $3::text AS user_id, $4::integer AS minutes,
               $5::text AS reason, $6::text AS reference, $7::timestamptz AS created_at
      ), ${APPEND_CREDIT_ENTRIES},
      new_job AS (
        SELECT tenant_id, '${CREDITS_RESTORED_QUEUE}'::text AS queue, jsonb_build_object('user_id', user_id) AS payload,
               at AS run_at, ${CREDITS_RESTORED_MAX_ATTEMPTS} AS max_attempts, NULL::text AS singleton_key
        FROM balance WHERE previous_minutes <= 0 AND credit_balance_minutes > 0
      ), restored AS (
        ${INSERT_NEW_JOBS}
      )
      SELECT credit_balance_minutes FROM balance`,
    values: [
      newId('cred'),
      entry.tenantId,
      entry.userId,
      entry.minutes,
      entry.reason,
      entry.reference ?? null,
      entry.at,
    ],
  });
  return rows[0]?.credit_balance_minutes;
}

export async function creditBalance(
  db: Executor,
  tenantId: string,
  userId: string,
): Promise<number | undefined> {
  const row = await db
    .selectFrom('users')
    .select('credit_balance_minutes')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', userId)
    .executeTakeFirst();
  return row?.credit_balance_minutes;
}

/** The user's latest ledger entries, newest first (the console's user page). */
export async function latestCreditEntries(db: Executor, tenantId: string, userId: string, limit: number) {
  return db
    .selectFrom('credit_ledger')
    .select(['id', 'minutes', 'reason', 'created_at'])
    .where('tenant_id', '=', tenantId)
    .where('user_id', '=', userId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .execute();
}
