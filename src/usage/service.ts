/**
 * Usage reports (docs/usage.md): what a user's month added up to (minutes by kind, calls by
 * outcome, amounts due) for `GET /api/v1/usage`, and every user's month with the agency's totals
 * and margin for the console's usage page and its CSV export. Both read the same repository.
 */
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import { notFound, validationFailed } from '../core/errors.js';
import { minorUnitDigits } from '../core/money.js';
import { type OverageChargeRow, unsettledOverageCharges } from '../overage/repository.js';
import { findUser } from '../users/repository.js';
import {
  callTotals,
  ledgerTotals,
  type Month,
  moneyTotals,
  type ReportUser,
  reportUsers,
  wholesaleCost,
} from './repository.js';
import { PERIOD_PATTERN, type UnsettledOverage, type Usage, type UsageQuery } from './schemas.js';

export interface UsageMonth extends Month {
  /** YYYY-MM */
  key: string;
}

/** One user's row of the console's report. */
export interface UsageRow extends Usage {
  name: string | null;
  email: string;
}

/** Per currency: what the agency billed its users (retail), its wholesale cost, and the difference. */
export interface CurrencyTotals {
  currency: string;
  top_ups: number;
  overage: number;
  /** Retail billed: top_ups + overage. */
  total: number;
  /** The month's calls at the wallet's wholesale rate; null: the tenant is not metered. */
  wholesale: number | null;
  /** total − wholesale; null: not metered. */
  margin: number | null;
}

/** A charge of the console's notice: the user's too. */
export interface UnsettledOverageRow extends UnsettledOverage {
  user_id: string;
  name: string | null;
  email: string;
}

/** The most unsettled charges a report lists (the oldest of the month first). */
const UNSETTLED_LIMIT = 100;

function unsettledOf(row: OverageChargeRow): UnsettledOverage {
  return {
    id: row.id,
    status: row.status === 'failed' ? 'failed' : 'unpaid',
    amount: row.amount,
    currency: row.currency,
    message: row.failure_message,
    period_start: row.period_start.toISOString(),
    period_end: row.period_end.toISOString(),
  };
}

export interface TenantUsage {
  period: UsageMonth;
  rows: UsageRow[];
  /** Overage of the month the processor did not collect, for the agency to follow up. */
  unsettled: UnsettledOverageRow[];
  /** Every row's minutes and calls added up. */
  minutes: Usage['minutes'];
  calls: Usage['calls'];
  currencies: CurrencyTotals[];
  /** False when the tenant has no wallet (its wholesale cost is not metered). */
  metered: boolean;
}

const PERIOD = new RegExp(PERIOD_PATTERN);

/** The UTC month `YYYY-MM` (default: the current one); 422 on `period` otherwise. */
export function monthOf(period: string | undefined, now: Date): UsageMonth {
  const key = period ?? now.toISOString().slice(0, 7);
  if (!PERIOD.test(key)) throw validationFailed([{ field: 'period', issue: 'must be a month, YYYY-MM.' }]);
  const [year, month] = key.split('-').map(Number);
  return { key, start: new Date(Date.UTC(year, month - 1, 1)), end: new Date(Date.UTC(year, month, 1)) };
}

/** A decimal of the major unit ("12.345000") in minor units, rounded half up, without floating point. */
export function decimalToMinor(decimal: string, currency: string): number {
  const digits = minorUnitDigits(currency);
  const negative = decimal.startsWith('-');
  const [whole, fraction = ''] = decimal.replace(/^[-+]/, '').split('.');
  const scaled =
    BigInt(whole || '0') * 10n ** BigInt(digits) +
    BigInt(fraction.padEnd(digits, '0').slice(0, digits) || '0');
  const roundUp = (fraction[digits] ?? '0') >= '5' ? 1n : 0n;
  const minor = Number(scaled + roundUp);
  return negative ? -minor : minor;
}

export function createUsageService(deps: { db: Db; clock: Clock }) {
  const { db, clock } = deps;

  async function rowsOf(tenantId: string, month: UsageMonth, userId?: string): Promise<UsageRow[]> {
    const [users, ledger, calls, money, unsettled] = await Promise.all([
      reportUsers(db, tenantId, month, userId),
      ledgerTotals(db, tenantId, month, userId),
      callTotals(db, tenantId, month, userId),
      moneyTotals(db, tenantId, month, userId),
      unsettledOverageCharges(db, tenantId, month, { userId, limit: UNSETTLED_LIMIT }),
    ]);
    const ledgerBy = new Map(ledger.map((row) => [row.user_id, row]));
    const callsBy = new Map(calls.map((row) => [row.user_id, row]));
    return users.map((user: ReportUser) => {
      const minutes = ledgerBy.get(user.user_id);
      const outcome = callsBy.get(user.user_id);
      const charged = money.filter((row) => row.user_id === user.user_id);
      const currency = user.currency ?? charged[0]?.currency ?? null;
      // A user who moved to a plan in another currency within the month: its own currency's amounts.
      const own = charged.filter((row) => row.currency === currency);
      const topUps = own.reduce((sum, row) => sum + row.top_ups, 0);
      const overage = own.reduce((sum, row) => sum + row.overage, 0);
      const completed = outcome?.completed ?? 0;
      const noAnswer = outcome?.no_answer ?? 0;
      const failed = outcome?.failed ?? 0;
      return {
        user_id: user.user_id,
        name: user.name,
        email: user.email,
        period: { key: month.key, start: month.start.toISOString(), end: month.end.toISOString() },
        minutes: {
          included: minutes?.included ?? 0,
          used: minutes?.used ?? 0,
          topped_up: minutes?.topped_up ?? 0,
          overage: minutes?.overage ?? 0,
          adjustments: minutes?.adjustments ?? 0,
          balance: minutes?.balance ?? 0,
        },
        calls: { completed, no_answer: noAnswer, failed, total: completed + noAnswer + failed },
        amounts: { currency, top_ups: topUps, overage, total: topUps + overage },
        unsettled_overage: unsettled.filter((row) => row.user_id === user.user_id).map(unsettledOf),
      };
    });
  }

  return {
    /** One user's month; 404 for a user of another tenant or deleted. */
    async userUsage(tenantId: string, query: UsageQuery): Promise<Usage> {
      const month = monthOf(query.period, clock.now());
      const user = await findUser(db, tenantId, query.user_id);
      if (!user || user.deleted_at) throw notFound('User');
      const [row] = await rowsOf(tenantId, month, query.user_id);
      if (!row) throw notFound('User');
      const { name: _name, email: _email, ...usage } = row;
      return usage;
    },

    /** Every live user's month, the totals, and the margin per currency. */
    async tenantUsage(tenantId: string, period: string | undefined): Promise<TenantUsage> {
      const month = monthOf(period, clock.now());
      const [rows, wholesale] = await Promise.all([
        rowsOf(tenantId, month),
        wholesaleCost(db, tenantId, month),
      ]);
      const minutes = { included: 0, used: 0, topped_up: 0, overage: 0, adjustments: 0, balance: 0 };
      const calls = { completed: 0, no_answer: 0, failed: 0, total: 0 };
      const byCurrency = new Map<string, CurrencyTotals>();
      const totalsOf = (currency: string) => {
        let found = byCurrency.get(currency);
        if (!found) {
          found = { currency, top_ups: 0, overage: 0, total: 0, wholesale: null, margin: null };
          byCurrency.set(currency, found);
        }
        return found;
      };
      for (const row of rows) {
        for (const key of Object.keys(minutes) as (keyof typeof minutes)[]) minutes[key] += row.minutes[key];
        for (const key of Object.keys(calls) as (keyof typeof calls)[]) calls[key] += row.calls[key];
        if (row.amounts.currency && row.amounts.total !== 0) {
          const totals = totalsOf(row.amounts.currency);
          totals.top_ups += row.amounts.top_ups;
          totals.overage += row.amounts.overage;
          totals.total += row.amounts.total;
        }
      }
      if (wholesale) totalsOf(wholesale.currency);
      const currencies = [...byCurrency.values()].sort((a, b) => a.currency.localeCompare(b.currency));
      for (const totals of currencies) {
        if (!wholesale) continue;
        totals.wholesale =
          totals.currency === wholesale.currency ? decimalToMinor(wholesale.cost, wholesale.currency) : 0;
        totals.margin = totals.total - totals.wholesale;
      }
      const unsettled = rows.flatMap((row) =>
        row.unsettled_overage.map((charge) => ({
          ...charge,
          user_id: row.user_id,
          name: row.name,
          email: row.email,
        })),
      );
      return { period: month, rows, unsettled, minutes, calls, currencies, metered: wholesale !== undefined };
    },
  };
}

export type UsageService = ReturnType<typeof createUsageService>;
