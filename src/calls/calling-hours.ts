/**
 * Calling hours (agent settings, `calling_hours`): when the next window opens, in the agent's
 * IANA time zone, with Intl's time-zone database (no dependency). DST-correct: a local time that
 * does not exist (the spring-forward gap) opens at the end of the gap; one that happens twice
 * (fall back) opens at its first occurrence. A window whose `end` is not after `start` crosses
 * midnight and belongs to the day it opens.
 */
import type { CallingHours } from '../agents/settings.js';

const MINUTE = 60_000;
const DAY = 24 * 60 * MINUTE;

interface LocalParts {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
}

const formatters = new Map<string, Intl.DateTimeFormat>();

function formatterFor(timeZone: string): Intl.DateTimeFormat {
  let formatter = formatters.get(timeZone);
  if (!formatter) {
    formatter = new Intl.DateTimeFormat('en-US', {
      timeZone,
      hourCycle: 'h23',
      year: 'numeric',
      month: 'numeric',
      day: 'numeric',
      hour: 'numeric',
      minute: 'numeric',
    });
    formatters.set(timeZone, formatter);
  }
  return formatter;
}

function localParts(instant: number, timeZone: string): LocalParts {
  const parts: Record<string, number> = {};
  for (const part of formatterFor(timeZone).formatToParts(instant)) {
    if (part.type !== 'literal') parts[part.type] = Number(part.value);
  }
  return { year: parts.year, month: parts.month, day: parts.day, hour: parts.hour, minute: parts.minute };
}

/** The zone's offset from UTC at `instant`, in ms, to the minute. */
function offsetAt(instant: number, timeZone: string): number {
  const p = localParts(instant, timeZone);
  const floored = Math.floor(instant / MINUTE) * MINUTE;
  return Date.UTC(p.year, p.month - 1, p.day, p.hour, p.minute) - floored;
}

/**
 * The instant a local wall-clock time happens in `timeZone`: its first occurrence when it
 * happens twice, the end of the gap when it never happens.
 */
export function zonedTime(
  date: { year: number; month: number; day: number },
  minutes: number,
  timeZone: string,
): number {
  const wall = Date.UTC(date.year, date.month - 1, date.day, 0, minutes);
  // Transitions are rare: the offsets a day either side cover both sides of any one of them.
  const before = wall - offsetAt(wall - DAY, timeZone);
  const after = wall - offsetAt(wall + DAY, timeZone);
  const matches = [before, after].filter((t) => wall - t === offsetAt(t, timeZone));
  if (matches.length > 0) return Math.min(...matches);
  // In the gap: the first instant whose offset is the new one, between the two guesses.
  let lo = Math.min(before, after);
  let hi = Math.max(before, after);
  const newOffset = offsetAt(hi, timeZone);
  while (hi - lo > MINUTE) {
    const mid = lo + Math.floor((hi - lo) / 2 / MINUTE) * MINUTE;
    if (offsetAt(mid, timeZone) === newOffset) hi = mid;
    else lo = mid;
  }
  return hi;
}

const minutesOf = (clock: string) => Number(clock.slice(0, 2)) * 60 + Number(clock.slice(3, 5));

/** ISO weekday (1 = Monday … 7 = Sunday) of a calendar date. */
function isoWeekday(date: { year: number; month: number; day: number }): number {
  const weekday = new Date(Date.UTC(date.year, date.month - 1, date.day)).getUTCDay();
  return weekday === 0 ? 7 : weekday;
}

function addDays(date: { year: number; month: number; day: number }, days: number) {
  const d = new Date(Date.UTC(date.year, date.month - 1, date.day + days));
  return { year: d.getUTCFullYear(), month: d.getUTCMonth() + 1, day: d.getUTCDate() };
}

/**
 * `now` when it falls inside a window, else the instant the next window opens. A week always
 * holds one (at least one day is required), so the search ends.
 */
export function nextOpening(now: Date, hours: CallingHours): Date {
  const t = now.getTime();
  const today = localParts(t, hours.timezone);
  const start = minutesOf(hours.start);
  const end = minutesOf(hours.end);
  const crossesMidnight = end <= start;
  let next = Number.POSITIVE_INFINITY;
  // From yesterday (its window may cross into today) to a week ahead.
  for (let offset = -1; offset <= 8; offset++) {
    const date = addDays(today, offset);
    if (!hours.days.includes(isoWeekday(date))) continue;
    const opens = zonedTime(date, start, hours.timezone);
    const closes = zonedTime(crossesMidnight ? addDays(date, 1) : date, end, hours.timezone);
    if (t >= opens && t < closes) return now;
    if (opens > t && opens < next) next = opens;
  }
  return new Date(next);
}
