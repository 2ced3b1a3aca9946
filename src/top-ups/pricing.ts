/**
 * What a top-up costs: minutes × the plan's topup_rate (per minute, major unit, at most 6 decimal
 * places), in the currency's minor unit, rounded half up. Integer arithmetic throughout, so
 * 3 × 0.1 usd is 30 cents, never 29. The minor unit is the processor's (core/money.ts).
 */
import { minorUnitDigits } from '../core/money.js';

const MICROS = 1_000_000n;

export function topUpAmount(minutes: number, topupRate: number, currency: string): number {
  const rateMicros = BigInt(Math.round(topupRate * 1_000_000));
  const scale = 10n ** BigInt(minorUnitDigits(currency));
  const micros = BigInt(minutes) * rateMicros * scale;
  return Number((micros + MICROS / 2n) / MICROS);
}
