/**
 * The SQL of tenant wallets (docs/wallets.md): the wholesale minutes an agency holds with the
 * operator, and their ledger. A wallet's balance moves only together with a ledger row, in one
 * statement, so the two always agree. A tenant without a wallet row is unmetered.
 */
import { type Executor, runPrepared } from '../core/db/database.js';
import { newId } from '../core/ids.js';
import { INSERT_NEW_JOBS } from '../core/jobs/runner.js';

export interface TenantWalletsTable {
  tenant_id: string;
  balance_minutes: number;
  wholesale_rate: number;
  currency: string;
  auto_refill_threshold_minutes: number | null;
  auto_refill_minutes: number | null;
  refill_customer_id: string | null;
  refill_payment_method_id: string | null;
  last_refill_error: string | null;
  last_refill_at: Date | null;
  created_at: Date;
  updated_at: Date;
}

export type WalletReason = 'call' | 'credit' | 'refill' | 'adjustment';

export interface WalletLedgerTable {
  id: string;
  tenant_id: string;
  minutes: number;
  wholesale_rate: number;
  reason: WalletReason;
  reference: string | null;
  user_id: string | null;
  call_id: string | null;
  note: string | null;
  created_at: Date;
}

declare module '../core/db/database.js' {
  interface Tables {
    tenant_wallets: TenantWalletsTable;
    wallet_ledger: WalletLedgerTable;
  }
}

export type WalletRow = TenantWalletsTable;
export type WalletLedgerRow = WalletLedgerTable;

export const REFILL_QUEUE = 'wallets.refill';
const REFILL_MAX_ATTEMPTS = 10;
/**
 * A wallet (row `w` or a CTE's row with its columns) due for an auto-refill: below its threshold,
 * with a card, and not after a declined refill (a new card clears the error and refills).
 */
const REFILL_DUE = `auto_refill_threshold_minutes IS NOT NULL AND balance_minutes < auto_refill_threshold_minutes
      AND refill_payment_method_id IS NOT NULL AND last_refill_error IS NULL`;
/**
 * What a refill buys and charges, fixed when its job is queued, so a retried job charges the very
 * same amount under the same processor key (wallets/refills.ts).
 */
const REFILL_PLAN = `jsonb_build_object('minutes', auto_refill_minutes, 'rate', wholesale_rate, 'currency', currency,
      'customer_id', refill_customer_id, 'payment_method_id', refill_payment_method_id)`;

/**
 * The wholesale debit of finished calls, as CTEs for a statement that defines `wallet_call` before
 * them (columns id, tenant_id, user_id, call_id, minutes > 0, created_at): a call of a metered
 * tenant appends one ledger row at the wallet's rate (reference `call:<call id>`, so once), and
 * each wallet moves once, by the sum of its appended rows. Calls of unmetered tenants join no
 * wallet and write nothing. The wallet may go below zero: a call that was running still pays.
 * A wallet the debit leaves due for an auto-refill gets its refill job (one per tenant at a time).
 */
export const APPEND_WALLET_CALL_DEBITS = `
  wallet_debit AS (
    INSERT INTO wallet_ledger (id, tenant_id, minutes, wholesale_rate, reason, reference, user_id, call_id, created_at)
    SELECT c.id, c.tenant_id, -c.minutes, w.wholesale_rate, 'call', 'call:' || c.call_id, c.user_id, c.call_id, c.created_at
    FROM wallet_call c JOIN tenant_wallets w ON w.tenant_id = c.tenant_id
    ON CONFLICT (reference) DO NOTHING
    RETURNING tenant_id, minutes, created_at
  ), wallet_balance AS (
    UPDATE tenant_wallets w SET balance_minutes = w.balance_minutes + moved.minutes, updated_at = moved.at
    FROM (SELECT tenant_id, sum(minutes)::integer AS minutes, max(created_at) AS at
          FROM wallet_debit GROUP BY tenant_id) moved
    WHERE w.tenant_id = moved.tenant_id
    RETURNING w.*, moved.at
  ), wallet_refill_job AS (
    INSERT INTO jobs (tenant_id, queue, payload, status, run_at, max_attempts, singleton_key, created_at)
    SELECT tenant_id, '${REFILL_QUEUE}', ${REFILL_PLAN}, 'queued', at, ${REFILL_MAX_ATTEMPTS},
           'wallet-refill:' || tenant_id, at
    FROM wallet_balance
    WHERE ${REFILL_DUE}
    ON CONFLICT (singleton_key) WHERE singleton_key IS NOT NULL AND status IN ('queued', 'running') DO NOTHING
  )`;

export async function findWallet(db: Executor, tenantId: string): Promise<WalletRow | undefined> {
  return db.selectFrom('tenant_wallets').selectAll().where('tenant_id', '=', tenantId).executeTakeFirst();
}

export interface WalletSettings {
  wholesaleRate: number;
  currency: string;
  autoRefill: { thresholdMinutes: number; refillMinutes: number } | null;
}

/** Creates the wallet (balance 0) or changes its settings; `created` tells which. */
export async function upsertWallet(
  db: Executor,
  tenantId: string,
  settings: WalletSettings,
  at: Date,
): Promise<{ wallet: WalletRow; created: boolean }> {
  const rows = await runPrepared<WalletRow & { created: boolean }>(db, {
    name: 'wallets_upsert',
    text: `
      INSERT INTO tenant_wallets (tenant_id, balance_minutes, wholesale_rate, currency, auto_refill_threshold_minutes,
                                  auto_refill_minutes, created_at, updated_at)
      VALUES ($1, 0, $2, $3, $4, $5, $6, $6)
      ON CONFLICT (tenant_id) DO UPDATE SET
        wholesale_rate = EXCLUDED.wholesale_rate, currency = EXCLUDED.currency,
        auto_refill_threshold_minutes = EXCLUDED.auto_refill_threshold_minutes,
        auto_refill_minutes = EXCLUDED.auto_refill_minutes, updated_at = EXCLUDED.updated_at
      RETURNING *, (xmax = 0) AS created`,
    values: [
      tenantId,
      settings.wholesaleRate,
      settings.currency,
      settings.autoRefill?.thresholdMinutes ?? null,
      settings.autoRefill?.refillMinutes ?? null,
      at,
    ],
  });
  const { created, ...wallet } = rows[0];
  return { wallet, created };
}

export interface WalletEntry {
  tenantId: string;
  minutes: number;
  reason: Exclude<WalletReason, 'call'>;
  /** Makes the entry happen at most once; a repeat changes nothing. */
  reference?: string;
  note?: string | null;
  /** The rate the minutes were bought at (a refill's); the wallet's current rate otherwise. */
  wholesaleRate?: number;
  at: Date;
}

/**
 * The job queued when a wallet's balance comes back above zero (from zero or less): whatever
 * waits for the tenant's wholesale minutes (campaigns paused for them) is told by its handler,
 * which the composition root hands in (jobs.ts). The job's tenant is the wallet's; no payload.
 */
export const WALLET_RESTORED_QUEUE = 'wallets.restored';
const WALLET_RESTORED_MAX_ATTEMPTS = 10;

/**
 * Appends a ledger row at the wallet's current rate and moves the balance by it, in one
 * statement, queuing `wallets.restored` in it when the balance comes back above zero. Undefined
 * when the tenant has no wallet or the reference was already used.
 */
export async function appendWalletEntry(
  db: Executor,
  entry: WalletEntry,
): Promise<{ entry: WalletLedgerRow; balance_minutes: number } | undefined> {
  const rows = await runPrepared<WalletLedgerRow & { balance_minutes: number }>(db, {
    name: 'wallets_append_entry',
    text: `
      WITH appended AS (
        INSERT INTO wallet_ledger (id, tenant_id, minutes, wholesale_rate, reason, reference, note, created_at)
        SELECT $1, w.tenant_id, $3, coalesce($8::numeric, w.wholesale_rate), $4, $5, $6, $7
        FROM tenant_wallets w WHERE w.tenant_id = $2
        ON CONFLICT (reference) DO NOTHING
        RETURNING *
      ), moved AS (
        UPDATE tenant_wallets w SET balance_minutes = w.balance_minutes + a.minutes, updated_at = a.created_at
        FROM appended a WHERE w.tenant_id = a.tenant_id
        RETURNING w.tenant_id, w.balance_minutes, w.balance_minutes - a.minutes AS previous_minutes, a.created_at
      ), new_job AS (
        SELECT tenant_id, '${WALLET_RESTORED_QUEUE}'::text AS queue, '{}'::jsonb AS payload, created_at AS run_at,
               ${WALLET_RESTORED_MAX_ATTEMPTS} AS max_attempts, NULL::text AS singleton_key
        FROM moved WHERE previous_minutes <= 0 AND balance_minutes > 0
      ), restored AS (
        ${INSERT_NEW_JOBS}
      )
      SELECT appended.*, moved.balance_minutes FROM appended, moved`,
    values: [
      newId('wled'),
      entry.tenantId,
      entry.minutes,
      entry.reason,
      entry.reference ?? null,
      entry.note ?? null,
      entry.at,
      entry.wholesaleRate ?? null,
    ],
  });
  const row = rows[0];
  if (!row) return undefined;
  const { balance_minutes, ...ledgerRow } = row;
  return { entry: ledgerRow, balance_minutes };
}

/** A page of the wallet's ledger, newest first, with the total (count(*) over ()). */
export async function listWalletLedger(
  db: Executor,
  tenantId: string,
  limit: number,
  offset: number,
): Promise<(WalletLedgerRow & { total: number })[]> {
  return db
    .selectFrom('wallet_ledger')
    .selectAll()
    .select((eb) => eb.fn.countAll<number>().over().as('total'))
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at', 'desc')
    .orderBy('id', 'desc')
    .limit(limit)
    .offset(offset)
    .execute();
}

export async function countWalletLedger(db: Executor, tenantId: string): Promise<number> {
  const row = await db
    .selectFrom('wallet_ledger')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .where('tenant_id', '=', tenantId)
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

export interface WalletUsageRow {
  calls: number;
  minutes: number;
  /** sum(-minutes × wholesale_rate), in minor units of `10^digits`, rounded half away from zero. */
  amount: number;
}

/** What the tenant's calls cost at wholesale in [from, to): the rows of reason 'call'. */
export async function walletUsage(
  db: Executor,
  tenantId: string,
  period: { from: Date; to: Date },
  minorDigits: number,
): Promise<WalletUsageRow> {
  const rows = await runPrepared<WalletUsageRow>(db, {
    name: 'wallets_usage',
    text: `
      SELECT count(*)::integer AS calls, coalesce(sum(-minutes), 0)::bigint AS minutes,
             coalesce(round(sum(-minutes * wholesale_rate) * power(10::numeric, $4::integer)), 0)::bigint AS amount
      FROM wallet_ledger
      WHERE tenant_id = $1 AND created_at >= $2 AND created_at < $3 AND reason = 'call'`,
    values: [tenantId, period.from, period.to, minorDigits],
  });
  return rows[0];
}

/** Whether any ledger row exists: a wallet's currency is fixed once money moved in it. */
export async function hasWalletEntries(db: Executor, tenantId: string): Promise<boolean> {
  const row = await db
    .selectFrom('wallet_ledger')
    .select('id')
    .where('tenant_id', '=', tenantId)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}

/** Stores the agency's card for refills (and clears a decline: the new card gets its chance). */
export async function setRefillCard(
  db: Executor,
  tenantId: string,
  card: { customerId: string; paymentMethodId: string },
  at: Date,
): Promise<WalletRow | undefined> {
  return db
    .updateTable('tenant_wallets')
    .set({
      refill_customer_id: card.customerId,
      refill_payment_method_id: card.paymentMethodId,
      last_refill_error: null,
      updated_at: at,
    })
    .where('tenant_id', '=', tenantId)
    .returningAll()
    .executeTakeFirst();
}

/** The outcome of a refill attempt: the decline, or null after a successful one. */
export async function recordRefillOutcome(
  db: Executor,
  tenantId: string,
  error: string | null,
  at: Date,
): Promise<void> {
  await db
    .updateTable('tenant_wallets')
    .set({ last_refill_error: error, last_refill_at: at })
    .where('tenant_id', '=', tenantId)
    .execute();
}

/** Queues the wallet's refill job when it is due and none is queued or running. */
export async function enqueueRefillIfDue(db: Executor, tenantId: string, at: Date): Promise<void> {
  await runPrepared(db, {
    name: 'wallets_enqueue_refill',
    text: `
      INSERT INTO jobs (tenant_id, queue, payload, status, run_at, max_attempts, singleton_key, created_at)
      SELECT tenant_id, '${REFILL_QUEUE}', ${REFILL_PLAN}, 'queued', $2, ${REFILL_MAX_ATTEMPTS},
             'wallet-refill:' || tenant_id, $2
      FROM tenant_wallets WHERE tenant_id = $1 AND ${REFILL_DUE}
      ON CONFLICT (singleton_key) WHERE singleton_key IS NOT NULL AND status IN ('queued', 'running') DO NOTHING`,
    values: [tenantId, at],
  });
}
