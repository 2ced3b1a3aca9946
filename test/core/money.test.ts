/**
 * Prices in the processor's minor units (Stripe's): exact integer arithmetic, half up, and the
 * currencies whose minor unit is not the cent.
 */
import { describe, expect, it } from 'vitest';
import { amountForMinutes, minorUnitDigits } from '../../src/core/money.js';

describe('amountForMinutes', () => {
  it.each([
    [3, 0.1, 'usd', 30],
    [7, 0.015, 'usd', 11],
    [1, 0.005, 'eur', 1],
    [250, 0.12, 'usd', 3000],
    [10, 12.5, 'jpy', 125],
    [10, 0.15, 'idr', 150],
    // Three decimals, in multiples of 10 (Stripe refuses other amounts in these currencies).
    [1, 0.1234, 'kwd', 120],
    [1, 0.1235, 'bhd', 120],
    [1, 0.125, 'jod', 130],
    [40, 0.05, 'omr', 2000],
  ])('%i minutes at %d %s cost %i minor units', (minutes, rate, currency, amount) => {
    expect(amountForMinutes(minutes, rate, currency)).toBe(amount);
  });

  it('knows the minor units of the currencies it prices', () => {
    expect([minorUnitDigits('usd'), minorUnitDigits('jpy'), minorUnitDigits('kwd')]).toEqual([2, 0, 3]);
  });
});
