/**
 * Amounts are integers in the currency's minor unit, as the card processor counts them. The
 * digits are Stripe's, not CLDR's: Stripe counts HUF, IDR, ISK and a few others in hundredths
 * although they have no coins (Intl says 0 digits for them), so one table serves pricing and display.
 */
const ZERO_DECIMAL = new Set([
  'BIF',
  'CLP',
  'DJF',
  'GNF',
  'JPY',
  'KMF',
  'KRW',
  'MGA',
  'PYG',
  'RWF',
  'UGX',
  'VND',
  'VUV',
  'XAF',
  'XOF',
  'XPF',
]);
const THREE_DECIMAL = new Set(['BHD', 'JOD', 'KWD', 'OMR', 'TND']);

/** Digits of the currency's minor unit as the processor counts them (usd 2, jpy 0, kwd 3). */
export function minorUnitDigits(currency: string): number {
  const code = currency.toUpperCase();
  if (ZERO_DECIMAL.has(code)) return 0;
  if (THREE_DECIMAL.has(code)) return 3;
  return 2;
}

/** An amount in minor units as people read it: "$49.00", "¥2,980", "KWD 1.250". */
export function formatMoney(minorUnits: number, currency: string): string {
  const digits = minorUnitDigits(currency);
  const major = minorUnits / 10 ** digits;
  try {
    return new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency: currency.toUpperCase(),
      minimumFractionDigits: Math.min(digits, 3),
      maximumFractionDigits: Math.min(digits, 3),
    }).format(major);
  } catch {
    return `${major.toFixed(digits)} ${currency.toUpperCase()}`;
  }
}

/** A per-minute rate (major unit, up to 6 decimals) in its currency: "$0.10", "€0.085". */
export function formatRate(perMinute: number, currency: string): string {
  const digits = minorUnitDigits(currency);
  try {
    return new Intl.NumberFormat('en-US', {
      style: 'currency',
      currency: currency.toUpperCase(),
      minimumFractionDigits: digits,
      maximumFractionDigits: Math.max(digits, 6),
    }).format(perMinute);
  } catch {
    return `${perMinute} ${currency.toUpperCase()}`;
  }
}

const MICROS = 1_000_000n;

/**
 * What `minutes` cost at `rate` per minute (major unit, at most 6 decimal places), in the currency's
 * minor unit, rounded half up. Integer arithmetic throughout, so 3 × 0.1 usd is 30 cents, never 29.
 * Three-decimal currencies (BHD, JOD, KWD, OMR, TND) are rounded to a multiple of 10 minor units,
 * as Stripe accepts only such amounts in them.
 */
export function amountForMinutes(minutes: number, rate: number, currency: string): number {
  const rateMicros = BigInt(Math.round(rate * 1_000_000));
  const digits = minorUnitDigits(currency);
  const step = digits === 3 ? 10n : 1n;
  const unit = MICROS * step;
  const micros = BigInt(minutes) * rateMicros * 10n ** BigInt(digits);
  return Number(((micros + unit / 2n) / unit) * step);
}
