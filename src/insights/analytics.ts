/**
 * Calls analytics over a chosen range of UTC days: totals, outcomes and ended reasons per day, and
 * per agent. The range is checked here (the console's form and any later API share it).
 */
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import { type FieldIssue, validationFailed } from '../core/errors.js';
import { type AgentRow, type CallCounts, callAggregates } from './analytics-repository.js';

const DAY_MS = 24 * 60 * 60 * 1000;
/** The range a form opens with: the last 30 days, today included. */
export const DEFAULT_RANGE_DAYS = 30;
/** The longest range asked at once: a year and a day (a leap year). */
export const MAX_RANGE_DAYS = 366;
/** Reasons drawn as their own series; the rest are summed as "other". */
export const CHARTED_REASONS = 5;

export interface RangeInput {
  from?: string;
  to?: string;
}

export interface DayRange {
  /** YYYY-MM-DD, both included. */
  from: string;
  to: string;
  days: number;
}

export interface Totals extends CallCounts {
  /** answered ÷ ended, 0…1; null when no call has ended. */
  answerRate: number | null;
  /** Average talk time of an answered call, in minutes; null without answered calls. */
  averageMinutes: number | null;
}

export interface DayOutcomes {
  day: string;
  completed: number;
  no_answer: number;
  failed: number;
  /** Queued, dialing or in progress. */
  open: number;
  minutes: number;
}

export interface AgentTotals extends Totals {
  agent_id: string;
  name: string | null;
}

export interface CallAnalytics {
  range: DayRange;
  totals: Totals;
  /** Every day of the range, oldest first, days without calls included. */
  days: DayOutcomes[];
  /** The most frequent ended reasons over the range, most frequent first ("not ended" for open calls). */
  reasons: string[];
  /** Per day, calls by reason in `reasons`' order, then the rest as `other`. */
  reasonDays: { day: string; counts: number[]; other: number }[];
  /** Most calls first. */
  agents: AgentTotals[];
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
const dayOf = (at: Date) => at.toISOString().slice(0, 10);

function parseDay(value: string | undefined, field: string, issues: FieldIssue[]): Date | undefined {
  if (value === undefined || value === '') return undefined;
  const at = DATE.test(value) ? new Date(`${value}T00:00:00Z`) : new Date(Number.NaN);
  if (Number.isNaN(at.getTime()) || dayOf(at) !== value) {
    issues.push({ field, issue: 'must be a date, YYYY-MM-DD (e.g. 2026-11-01).' });
    return undefined;
  }
  return at;
}

/** The range asked for, or the last 30 days; 422 naming each field that is wrong. */
export function dayRangeOf(input: RangeInput, now: Date): DayRange {
  const issues: FieldIssue[] = [];
  const today = new Date(`${dayOf(now)}T00:00:00Z`);
  const to = parseDay(input.to, 'to', issues) ?? today;
  const from =
    parseDay(input.from, 'from', issues) ?? new Date(to.getTime() - (DEFAULT_RANGE_DAYS - 1) * DAY_MS);
  if (issues.length === 0 && from > to)
    issues.push({ field: 'from', issue: 'must be on or before the end date.' });
  const days = Math.round((to.getTime() - from.getTime()) / DAY_MS) + 1;
  if (issues.length === 0 && days > MAX_RANGE_DAYS) {
    issues.push({ field: 'from', issue: `must be at most ${MAX_RANGE_DAYS} days before the end date.` });
  }
  if (issues.length > 0) throw validationFailed(issues);
  return { from: dayOf(from), to: dayOf(to), days };
}

function totalsOf(counts: CallCounts): Totals {
  return {
    ...counts,
    answerRate: counts.ended > 0 ? counts.answered / counts.ended : null,
    averageMinutes: counts.answered > 0 ? counts.seconds / 60 / counts.answered : null,
  };
}

const sum = (rows: CallCounts[]): CallCounts =>
  rows.reduce(
    (total, row) => ({
      calls: total.calls + row.calls,
      answered: total.answered + row.answered,
      ended: total.ended + row.ended,
      minutes: total.minutes + row.minutes,
      seconds: total.seconds + row.seconds,
    }),
    { calls: 0, answered: 0, ended: 0, minutes: 0, seconds: 0 },
  );

export const NOT_ENDED = 'not ended';

export function createCallAnalytics(deps: { db: Db; clock: Clock }) {
  return {
    range: (input: RangeInput) => dayRangeOf(input, deps.clock.now()),

    async calls(tenantId: string, input: RangeInput): Promise<CallAnalytics> {
      const range = dayRangeOf(input, deps.clock.now());
      const from = new Date(`${range.from}T00:00:00Z`);
      const to = new Date(new Date(`${range.to}T00:00:00Z`).getTime() + DAY_MS);
      const rows = await callAggregates(deps.db, tenantId, { from, to });

      const dayList = Array.from({ length: range.days }, (_, i) =>
        dayOf(new Date(from.getTime() + i * DAY_MS)),
      );
      const byDay = new Map<string, DayOutcomes>(
        dayList.map((day) => [day, { day, completed: 0, no_answer: 0, failed: 0, open: 0, minutes: 0 }]),
      );
      for (const row of rows.byDayStatus) {
        const day = byDay.get(row.day);
        if (!day) continue;
        if (row.status === 'completed' || row.status === 'no_answer' || row.status === 'failed') {
          day[row.status] += row.calls;
        } else day.open += row.calls;
        day.minutes += row.minutes;
      }

      const reasonTotals = new Map<string, number>();
      for (const row of rows.byDayReason) {
        const reason = row.reason ?? NOT_ENDED;
        reasonTotals.set(reason, (reasonTotals.get(reason) ?? 0) + row.calls);
      }
      const reasons = [...reasonTotals]
        .sort((a, b) => b[1] - a[1] || a[0].localeCompare(b[0]))
        .slice(0, CHARTED_REASONS)
        .map(([reason]) => reason);
      const reasonIndex = new Map(reasons.map((reason, i) => [reason, i]));
      const reasonDays = new Map(
        dayList.map((day) => [day, { day, counts: reasons.map(() => 0), other: 0 }]),
      );
      for (const row of rows.byDayReason) {
        const entry = reasonDays.get(row.day);
        if (!entry) continue;
        const i = reasonIndex.get(row.reason ?? NOT_ENDED);
        if (i === undefined) entry.other += row.calls;
        else entry.counts[i] += row.calls;
      }

      const agents = rows.byAgent
        .map((row: AgentRow) => ({ ...totalsOf(row), agent_id: row.agent_id, name: row.name }))
        .sort((a, b) => b.calls - a.calls || a.agent_id.localeCompare(b.agent_id));

      return {
        range,
        totals: totalsOf(sum(rows.byAgent)),
        days: [...byDay.values()],
        reasons,
        reasonDays: [...reasonDays.values()],
        agents,
      };
    },
  };
}

export type CallAnalyticsService = ReturnType<typeof createCallAnalytics>;
