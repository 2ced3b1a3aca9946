/** The next opening of an agent's calling hours, in its own time zone, across DST changes. */
import { describe, expect, it } from 'vitest';
import { nextOpening } from '../../src/calls/calling-hours.js';

const at = (iso: string) => new Date(iso);
const weekdays = { timezone: 'America/New_York', days: [1, 2, 3, 4, 5], start: '09:00', end: '17:00' };

describe('nextOpening', () => {
  it('answers now inside the window', () => {
    // Tuesday 2026-03-03 10:00 EST = 15:00Z
    expect(nextOpening(at('2026-03-03T15:00:00.000Z'), weekdays).toISOString()).toBe(
      '2026-03-03T15:00:00.000Z',
    );
  });

  it('opens at 09:00 local on the next weekday, after the spring-forward weekend', () => {
    // Friday 2026-03-06 18:00 EST (23:00Z); DST starts Sunday 2026-03-08; Monday 09:00 EDT = 13:00Z.
    expect(nextOpening(at('2026-03-06T23:00:00.000Z'), weekdays).toISOString()).toBe(
      '2026-03-09T13:00:00.000Z',
    );
  });

  it('opens at 09:00 local after the fall-back weekend', () => {
    // Friday 2026-10-30 18:00 EDT (22:00Z); DST ends Sunday 2026-11-01; Monday 09:00 EST = 14:00Z.
    expect(nextOpening(at('2026-10-30T22:00:00.000Z'), weekdays).toISOString()).toBe(
      '2026-11-02T14:00:00.000Z',
    );
  });

  it('opens a window that starts in the spring-forward gap at the end of the gap', () => {
    const sunday = { timezone: 'America/New_York', days: [7], start: '02:30', end: '05:00' };
    // Sunday 2026-03-08 00:00 EST (05:00Z): 02:30 does not exist; 03:00 EDT = 07:00Z.
    expect(nextOpening(at('2026-03-08T05:00:00.000Z'), sunday).toISOString()).toBe(
      '2026-03-08T07:00:00.000Z',
    );
  });

  it('opens a window that starts in the repeated hour at its first occurrence', () => {
    const sunday = { timezone: 'America/New_York', days: [7], start: '01:30', end: '04:00' };
    // Sunday 2026-11-01 00:00 EDT (04:00Z): 01:30 EDT = 05:30Z (01:30 EST would be 06:30Z).
    expect(nextOpening(at('2026-11-01T04:00:00.000Z'), sunday).toISOString()).toBe(
      '2026-11-01T05:30:00.000Z',
    );
  });

  it('keeps a window that crosses midnight open into the next day, which belongs to the day it opens', () => {
    const saturdayNight = { timezone: 'America/New_York', days: [6], start: '22:00', end: '02:00' };
    // Sunday 2026-06-07 01:00 EDT (05:00Z): inside Saturday's window.
    expect(nextOpening(at('2026-06-07T05:00:00.000Z'), saturdayNight).toISOString()).toBe(
      '2026-06-07T05:00:00.000Z',
    );
    // Sunday 03:00 EDT (07:00Z): closed; next Saturday 2026-06-13 22:00 EDT = 2026-06-14T02:00Z.
    expect(nextOpening(at('2026-06-07T07:00:00.000Z'), saturdayNight).toISOString()).toBe(
      '2026-06-14T02:00:00.000Z',
    );
    // Friday 23:00 EDT: Friday is not a calling day, though Saturday's window hours match.
    expect(nextOpening(at('2026-06-06T03:00:00.000Z'), saturdayNight).toISOString()).toBe(
      '2026-06-07T02:00:00.000Z',
    );
  });

  it('crosses midnight across the fall-back change (a 5-hour window lasts 6 hours of real time)', () => {
    const night = { timezone: 'America/New_York', days: [6], start: '22:00', end: '03:00' };
    // Saturday 2026-10-31 22:00 EDT = 2026-11-01T02:00Z; ends Sunday 03:00 EST = 08:00Z.
    expect(nextOpening(at('2026-11-01T07:30:00.000Z'), night).toISOString()).toBe('2026-11-01T07:30:00.000Z');
    expect(nextOpening(at('2026-11-01T08:00:00.000Z'), night).toISOString()).toBe('2026-11-08T03:00:00.000Z');
  });
});
