/** The numbers an agency looks at first: users, paying subscriptions, minutes and calls. */
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import { createCallAnalytics } from './analytics.js';
import {
  countLiveSubscriptions,
  type DailyCalls,
  dailyCalls,
  liveUsers,
  minutesBilledSince,
} from './repository.js';
import { type RevenueTotals, revenueBetween } from './revenue-repository.js';

export const CHART_DAYS = 14;
const DAY_MS = 24 * 60 * 60 * 1000;

export interface TenantOverview {
  users: number;
  liveSubscriptions: number;
  /** Minutes billed for calls placed this calendar month (UTC). */
  minutesThisPeriod: number;
  periodStart: Date;
  callsToday: number;
  /** The last CHART_DAYS UTC days, oldest first, days without calls included. */
  days: DailyCalls[];
  /** Billed since periodStart (this calendar month, UTC), per currency. */
  revenue: RevenueTotals[];
}

const startOfUtcDay = (at: Date) =>
  new Date(Date.UTC(at.getUTCFullYear(), at.getUTCMonth(), at.getUTCDate()));

export function createInsightService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;
  const analytics = createCallAnalytics(deps);
  return {
    /** Calls analytics over a range of UTC days (./analytics.ts). */
    calls: analytics.calls,
    range: analytics.range,

    async overview(tenantId: string): Promise<TenantOverview> {
      const now = clock.now();
      const today = startOfUtcDay(now);
      const firstDay = new Date(today.getTime() - (CHART_DAYS - 1) * DAY_MS);
      const periodStart = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), 1));
      const nextPeriod = new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth() + 1, 1));
      const [users, liveSubscriptions, minutesThisPeriod, rows, revenue] = await Promise.all([
        liveUsers(db, tenantId),
        countLiveSubscriptions(db, tenantId),
        minutesBilledSince(db, tenantId, periodStart),
        dailyCalls(db, tenantId, firstDay),
        revenueBetween(db, tenantId, periodStart, nextPeriod),
      ]);
      const byDay = new Map(rows.map((row) => [row.day, row]));
      const days = Array.from({ length: CHART_DAYS }, (_, i) => {
        const day = new Date(firstDay.getTime() + i * DAY_MS).toISOString().slice(0, 10);
        return byDay.get(day) ?? { day, calls: 0, completed: 0, minutes: 0 };
      });
      return {
        users,
        liveSubscriptions,
        minutesThisPeriod,
        periodStart,
        callsToday: days[days.length - 1].calls,
        days,
        revenue,
      };
    },
  };
}

export type InsightService = ReturnType<typeof createInsightService>;
