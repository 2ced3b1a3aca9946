/**
 * What a top-up costs: minutes × the plan's topup_rate (per minute, major unit, at most 6 decimal
 * places), in the currency's minor unit, rounded half up. Integer arithmetic throughout, so
 * 3 × 0.1 usd is 30 cents, never 29.
 */

/** Digits of the currency's minor unit (usd 2, jpy 0, kwd 3), as CLDR knows them; 2 when unknown. */
export function minorUnitDigits(currency: string): number {
  try {
    return (
      new Intl.NumberFormat('en-US', {
        style: 'currency',
        currency: currency.toUpperCase(),
      }).resolvedOptions().maximumFractionDigits ?? 2
    );
  } catch {
    return 2;
  }
}

const MICROS = 1_000_000n;

export function topUpAmount(minutes: number, topupRate: number, currency: string): number {
  const rateMicros = BigInt(Math.round(topupRate * 1_000_000));
  const scale = 10n ** BigInt(minorUnitDigits(currency));
  const micros = BigInt(minutes) * rateMicros * scale;
  return Number((micros + MICROS / 2n) / MICROS);
}
