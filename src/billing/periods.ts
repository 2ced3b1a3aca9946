/**
 * Calendar arithmetic for billing periods (docs/design-choices.md), all in UTC. Periods are calendar
 * months counted from an anchor, as card processors do: a month that lacks the anchor's day ends
 * on its last day, and the next period returns to the anchor's day (Jan 31 → Feb 28 → Mar 31).
 */

function daysInUtcMonth(year: number, month: number): number {
  return new Date(Date.UTC(year, month + 1, 0)).getUTCDate();
}

/** `anchor` plus `months` calendar months, clamped to the end of a shorter month. */
export function addMonths(anchor: Date, months: number): Date {
  const total = anchor.getUTCMonth() + months;
  const year = anchor.getUTCFullYear() + Math.floor(total / 12);
  const month = ((total % 12) + 12) % 12;
  const day = Math.min(anchor.getUTCDate(), daysInUtcMonth(year, month));
  return new Date(
    Date.UTC(
      year,
      month,
      day,
      anchor.getUTCHours(),
      anchor.getUTCMinutes(),
      anchor.getUTCSeconds(),
      anchor.getUTCMilliseconds(),
    ),
  );
}

/** The end of the period that starts at `start`: the first anchor month boundary after it. */
export function periodEndAfter(anchor: Date, start: Date): Date {
  let months = 1;
  // Counting from the anchor keeps the day of month stable; skip boundaries not after `start`.
  const elapsed =
    (start.getUTCFullYear() - anchor.getUTCFullYear()) * 12 + (start.getUTCMonth() - anchor.getUTCMonth());
  if (elapsed > 1) months = elapsed - 1;
  let end = addMonths(anchor, months);
  while (end.getTime() <= start.getTime()) end = addMonths(anchor, ++months);
  return end;
}

/** The last day of `at`'s UTC calendar month at 23:59:00.000 (the cap of an agency downgrade). */
export function lastMinuteOfUtcMonth(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 0, 23, 59, 0, 0));
}

/** The first day of the UTC calendar month after `at`, 00:00:00.000. */
export function startOfNextUtcMonth(at: Date): Date {
  return new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth() + 1, 1));
}

export const DAY_MS = 24 * 60 * 60 * 1000;
