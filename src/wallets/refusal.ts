import { type ApiError, insufficientCredits, tenantBalanceExhausted } from '../core/errors.js';

/**
 * The balance refusals of a call, after the agent's own (calls/service.ts refusalOf): the agency's
 * wholesale wallet first (null: unmetered, never refused), since topping up the user would not
 * help, then the owner's credits (docs/wallets.md).
 */
export function balanceRefusal(walletMinutes: number | null, creditMinutes: number): ApiError | undefined {
  if (walletMinutes !== null && walletMinutes <= 0) return tenantBalanceExhausted();
  if (creditMinutes <= 0) return insufficientCredits();
  return undefined;
}
