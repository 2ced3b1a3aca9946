/**
 * The tenant's processor account (docs/processor-accounts.md). A tenant may name a connected Stripe
 * account (`acct_…`): every processor object of the tenant then lives there, and every processor
 * call made for the tenant goes through `bind`, which answers the processor bound to that account
 * (the platform's own, unbound, without one) and the application fee to ask for.
 *
 * The lookup is cached per process for a few seconds (it precedes every processor call, which
 * takes far longer); a change made in this process forgets the entry at once. The account can only
 * change while the tenant has no processor objects, checked under the tenant's row lock.
 */
import { BoundedMap } from '../core/bounded-map.js';
import type { Db, Tx } from '../core/db/database.js';
import { ApiError, validationFailed } from '../core/errors.js';
import type { PaymentProcessor } from './processor.js';
import { accountConnectedElsewhere, findProcessorAccount, hasProcessorObjects } from './repository.js';

export interface ProcessorAccount {
  /** The connected account (`acct_…`); null: the platform's own. */
  accountId: string | null;
  /** The platform's cut in percent (0 < x ≤ 100, two decimals); null: none. Needs a connected account. */
  applicationFeePercent: number | null;
}

/** The processor calls of one tenant: bound to its account, with the fees to ask for. */
export interface TenantProcessor {
  processor: PaymentProcessor;
  account: ProcessorAccount;
  /** The `application_fee_percent` of a subscription created now; null: none. */
  subscriptionFeePercent: number | null;
  /** The `application_fee_amount` of a charge of `amount` (minor units); null: none. */
  chargeFeeAmount(amount: number): number | null;
}

/** A change of the account or the fee (undefined: unchanged; null: cleared). */
export interface ProcessorAccountChange {
  processor_account_id?: string | null;
  application_fee_percent?: number | null;
}

const CACHE_TTL_MS = 5_000;
const MAX_ENTRIES = 10_000;

/** The tenant's fee applies only with a connected account (Stripe refuses one on the platform's). */
export function tenantProcessor(processor: PaymentProcessor, account: ProcessorAccount): TenantProcessor {
  const percent = account.accountId ? account.applicationFeePercent : null;
  return {
    processor: account.accountId ? processor.forAccount(account.accountId) : processor,
    account,
    subscriptionFeePercent: percent,
    chargeFeeAmount(amount) {
      if (percent === null) return null;
      // In hundredths of a percent, so the product is an exact integer before the one rounding.
      const fee = Math.round((amount * Math.round(percent * 100)) / 10_000);
      return fee > 0 ? fee : null;
    },
  };
}

export function createProcessorAccounts(deps: { db: Db; processorName: string }) {
  const cache = new BoundedMap<string, { account: ProcessorAccount; expires: number }>({
    maxEntries: MAX_ENTRIES,
  });
  // A read that began before a change must not store its older answer after the change forgot it.
  let generation = 0;

  async function of(tenantId: string): Promise<ProcessorAccount> {
    const cached = cache.get(tenantId);
    if (cached && cached.expires > performance.now()) return cached.account;
    const started = generation;
    const row = await findProcessorAccount(deps.db, tenantId);
    const account: ProcessorAccount = {
      accountId: row?.processor_account_id ?? null,
      applicationFeePercent:
        row?.application_fee_percent === null || row?.application_fee_percent === undefined
          ? null
          : Number(row.application_fee_percent),
    };
    if (started === generation) cache.set(tenantId, { account, expires: performance.now() + CACHE_TTL_MS });
    return account;
  }

  return {
    of,

    /** The processor bound to the tenant's account; `processor` is the caller's (tests wrap it). */
    async bind(processor: PaymentProcessor, tenantId: string): Promise<TenantProcessor> {
      return tenantProcessor(processor, await of(tenantId));
    },

    /**
     * In the caller's transaction: the tenant columns for `change`, after locking the tenant row.
     * Moving the account (set, changed or cleared) is refused with 409 once the tenant has objects
     * at the processor: objects cannot move between Stripe accounts. The caller calls `forget`
     * once the transaction committed.
     */
    async columnsFor(tx: Tx, tenantId: string, change: ProcessorAccountChange) {
      let fee = change.application_fee_percent;
      if (typeof fee === 'number') {
        // numeric(5,2): at least 0.01 (a smaller positive number would be stored as 0), two decimals.
        const hundredths = Math.round(fee * 100);
        if (hundredths < 1 || Math.abs(hundredths - fee * 100) > 1e-6) {
          throw validationFailed([
            {
              field: 'application_fee_percent',
              issue: 'must be at least 0.01 with at most two decimals, e.g. 2.5.',
            },
          ]);
        }
        fee = hundredths / 100;
      }
      const current = await findProcessorAccount(tx, tenantId, { forUpdate: true });
      const columns: ProcessorAccountChange = {};
      if (!current) return columns;
      const accountId = change.processor_account_id;
      if (accountId !== undefined && accountId !== current.processor_account_id) {
        if (await hasProcessorObjects(tx, tenantId, deps.processorName)) {
          throw new ApiError(
            'conflict',
            'The processor account cannot change: this agency already has customers, prices or subscriptions ' +
              'at the card processor, and they cannot move between Stripe accounts. The application fee can still change.',
          );
        }
        if (accountId !== null && (await accountConnectedElsewhere(tx, accountId, tenantId))) {
          throw new ApiError(
            'conflict',
            'This Stripe account is already connected to another agency; each agency needs its own, so that ' +
              'its clients never appear in another agency’s account.',
          );
        }
        columns.processor_account_id = accountId;
      }
      if (fee !== undefined) columns.application_fee_percent = fee;
      return columns;
    },

    /** Drops the cached account of the tenant (after a change committed). */
    forget(tenantId: string): void {
      generation++;
      cache.delete(tenantId);
    },
  };
}

export type ProcessorAccounts = ReturnType<typeof createProcessorAccounts>;
