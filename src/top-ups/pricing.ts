/**
 * What a top-up costs: minutes × the plan's topup_rate, in the currency's minor unit, rounded half
 * up (core/money.ts `amountForMinutes`, shared with overage).
 */
import { amountForMinutes } from '../core/money.js';

export function topUpAmount(minutes: number, topupRate: number, currency: string): number {
  return amountForMinutes(minutes, topupRate, currency);
}
