/**
 * Tenant wallets (docs/wallets.md): the operator meters an agency by giving it a wallet with a
 * wholesale rate, credits it, and reads its ledger and usage. Calls debit it in the pipeline's own
 * finish statement (calls/dispatch-repository.ts) and are refused at zero (calls/service.ts); this
 * service is the operator's and the console's side.
 */

import type { PaymentProcessor } from '../billing/processor.js';
import { type AuditChange, recordAudit, writeAudited } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import { listPage } from '../core/db/pagination.js';
import { notFound, unprocessable, validationFailed } from '../core/errors.js';
import { type AnswerRecorder, recordAnswer } from '../core/idempotency/answer.js';
import type { IdempotencyStore } from '../core/idempotency/store.js';
import { minorUnitDigits } from '../core/money.js';
import { findTenant } from '../tenants/repository.js';
import { createWalletRefills } from './refills.js';
import {
  appendWalletEntry,
  countWalletLedger,
  enqueueRefillIfDue,
  findWallet,
  hasWalletEntries,
  listWalletLedger,
  upsertWallet,
  walletUsage,
} from './repository.js';
import type {
  PutWalletBody,
  Wallet,
  WalletCredit,
  WalletCreditBody,
  WalletLedgerQuery,
  WalletUsage,
  WalletUsageQuery,
} from './schemas.js';
import { toLedgerEntry, toWallet } from './serializers.js';

const RATE_DECIMALS = 6;

/** The UTC month `YYYY-MM` as [start, end). */
export function monthOf(period: string): { from: Date; to: Date } {
  const [year, month] = period.split('-').map(Number);
  return { from: new Date(Date.UTC(year, month - 1, 1)), to: new Date(Date.UTC(year, month, 1)) };
}

export function createWalletService(deps: {
  db: Db;
  clock: Clock;
  idempotency: IdempotencyStore;
  /** The platform's own processor account: the agencies' cards for auto-refill. */
  processor: PaymentProcessor;
}) {
  const { db, clock } = deps;
  const refills = createWalletRefills(deps);

  async function requireTenant(tenantId: string): Promise<void> {
    if (!(await findTenant(db, tenantId))) throw notFound('Tenant');
  }

  return {
    /** The tenant's wallet; `metered: false` (and nulls) when it has none. */
    async get(tenantId: string): Promise<Wallet> {
      await requireTenant(tenantId);
      return toWallet(tenantId, await findWallet(db, tenantId));
    },

    /** Creates the wallet (metering starts, balance 0) or changes its rate and auto-refill. */
    async put(tenantId: string, body: PutWalletBody): Promise<{ wallet: Wallet; created: boolean }> {
      if (Number(body.wholesale_rate.toFixed(RATE_DECIMALS)) !== body.wholesale_rate) {
        throw validationFailed([
          { field: 'wholesale_rate', issue: `must have at most ${RATE_DECIMALS} decimal places.` },
        ]);
      }
      await requireTenant(tenantId);
      const existing = await findWallet(db, tenantId);
      if (existing && existing.currency !== body.currency && (await hasWalletEntries(db, tenantId))) {
        throw unprocessable('The wallet’s currency cannot change once its ledger has entries.');
      }
      const autoRefill = body.auto_refill
        ? {
            thresholdMinutes: body.auto_refill.threshold_minutes,
            refillMinutes: body.auto_refill.refill_minutes,
          }
        : null;
      const now = clock.now();
      const { wallet, created } = await writeAudited(
        db,
        (executor) =>
          upsertWallet(
            executor,
            tenantId,
            { wholesaleRate: body.wholesale_rate, currency: body.currency, autoRefill },
            now,
          ),
        (saved) =>
          walletChange(saved.created ? 'wallet.created' : 'wallet.updated', tenantId, Object.keys(body), now),
      );
      // A new threshold may make a refill due now.
      await enqueueRefillIfDue(db, tenantId, clock.now());
      return { wallet: toWallet(tenantId, wallet), created };
    },

    /** Stores the agency's card for auto-refill (wallets/refills.ts). */
    setRefillCard: refills.setCard,
    /** The `wallets.refill` job. */
    refill: refills.refill,

    /**
     * Credits (or, negative, takes back) wholesale minutes: one ledger entry at the wallet's rate.
     * With an Idempotency-Key the answer is stored in the same transaction, so a retry credits once.
     */
    async credit(
      tenantId: string,
      body: WalletCreditBody,
      recorder?: AnswerRecorder<WalletCredit>,
    ): Promise<WalletCredit> {
      if (body.minutes === 0) throw validationFailed([{ field: 'minutes', issue: 'must not be 0.' }]);
      await requireTenant(tenantId);
      const unmetered = () =>
        unprocessable('The tenant is unmetered: create its wallet (PUT its wallet) before crediting it.');
      return db.transaction().execute(async (tx) => {
        const appended = await appendWalletEntry(tx, {
          tenantId,
          minutes: body.minutes,
          reason: body.minutes > 0 ? 'credit' : 'adjustment',
          note: body.reason ?? null,
          at: clock.now(),
        });
        if (!appended) throw unmetered();
        await recordAudit(
          tx,
          walletChange('wallet.credited', tenantId, Object.keys(body), appended.entry.created_at),
        );
        const result = { entry: toLedgerEntry(appended.entry), balance_minutes: appended.balance_minutes };
        await recordAnswer(deps.idempotency, tx, recorder, result);
        return result;
      });
    },

    /** The wallet's ledger, newest first (empty for an unmetered tenant). */
    async ledger(tenantId: string, query: WalletLedgerQuery) {
      await requireTenant(tenantId);
      return listPage(
        query,
        (limit, offset) => listWalletLedger(db, tenantId, limit, offset),
        () => countWalletLedger(db, tenantId),
        toLedgerEntry,
      );
    },

    /** What the tenant's calls used at wholesale in a UTC month, in minutes and money. */
    async usage(tenantId: string, query: WalletUsageQuery): Promise<WalletUsage> {
      await requireTenant(tenantId);
      const wallet = await findWallet(db, tenantId);
      const period = monthOf(query.period);
      const used = wallet
        ? await walletUsage(db, tenantId, period, minorUnitDigits(wallet.currency))
        : { calls: 0, minutes: 0, amount: 0 };
      return {
        tenant_id: tenantId,
        period: query.period,
        period_start: period.from.toISOString(),
        period_end: period.to.toISOString(),
        metered: wallet !== undefined,
        calls: used.calls,
        minutes: used.minutes,
        amount: used.amount,
        currency: wallet?.currency ?? null,
      };
    },
  };
}

export type WalletService = ReturnType<typeof createWalletService>;

function walletChange(action: string, tenantId: string, fields: string[], at: Date): AuditChange {
  return { action, tenantId, objectType: 'wallet', objectId: tenantId, fields, at };
}
