/** Wallet rows as the operator API shows them. */
import type { WalletLedgerRow, WalletRow } from './repository.js';
import type { Wallet, WalletLedgerEntry } from './schemas.js';

export function toWallet(tenantId: string, row: WalletRow | undefined): Wallet {
  return {
    tenant_id: tenantId,
    metered: row !== undefined,
    balance_minutes: row?.balance_minutes ?? null,
    wholesale_rate: row?.wholesale_rate ?? null,
    currency: row?.currency ?? null,
    auto_refill:
      row?.auto_refill_threshold_minutes != null && row.auto_refill_minutes != null
        ? { threshold_minutes: row.auto_refill_threshold_minutes, refill_minutes: row.auto_refill_minutes }
        : null,
    refill_card:
      row?.refill_customer_id && row.refill_payment_method_id
        ? { customer_id: row.refill_customer_id, payment_method_id: row.refill_payment_method_id }
        : null,
    last_refill_error: row?.last_refill_error ?? null,
    last_refill_at: row?.last_refill_at?.toISOString() ?? null,
    created_at: row?.created_at.toISOString() ?? null,
    updated_at: row?.updated_at.toISOString() ?? null,
  };
}

export function toLedgerEntry(row: WalletLedgerRow): WalletLedgerEntry {
  return {
    id: row.id,
    minutes: row.minutes,
    wholesale_rate: row.wholesale_rate,
    reason: row.reason,
    reference: row.reference,
    user_id: row.user_id,
    call_id: row.call_id,
    note: row.note,
    created_at: row.created_at.toISOString(),
  };
}
