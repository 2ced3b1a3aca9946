import { type ColumnType, type Insertable, type Selectable, sql, type Updateable } from 'kysely';
import type { Executor } from '../core/db/database.js';

export interface TenantsTable {
  id: string;
  name: string;
  /** The SMTP URL without its password (older rows: with it, until the start-up pass seals it). */
  email_smtp_url: string | null;
  /** The SMTP password sealed with SECRETS_KEY (src/tenants/secrets.ts): never returned or logged. */
  email_smtp_password_sealed: ColumnType<string | null, string | null | undefined, string | null>;
  email_from: string | null;
  /** Partner API rate limit of each key of the tenant (src/rate-limits); both null: the defaults. */
  rate_limit_per_second: ColumnType<number | null, number | null | undefined, number | null>;
  rate_limit_burst: ColumnType<number | null, number | null | undefined, number | null>;
  /** Calls of the whole tenant dialling or in progress at once; null: no tenant-wide cap. */
  max_concurrent_calls: ColumnType<number | null, number | null | undefined, number | null>;
  /** A user's balance crossing below this many minutes records `credits.low`; null: never. */
  low_balance_minutes: ColumnType<number | null, number | null | undefined, number | null>;
  /** The tenant's connected Stripe account (`acct_…`); null: the platform's own (docs/processor-accounts.md). */
  processor_account_id: ColumnType<string | null, string | null | undefined, string | null>;
  /** The platform's cut of what the tenant's clients pay, in percent (numeric(5,2)); null: none. */
  application_fee_percent: ColumnType<number | null, number | null | undefined, number | null>;
  /** Set while the operator suspends the tenant (docs/operator-console.md); null: active. */
  suspended_at: ColumnType<Date | null, Date | null | undefined, Date | null>;
  /** The operator's note on why (shown to the operator only); null without one. */
  suspended_reason: ColumnType<string | null, string | null | undefined, string | null>;
  /** Bumped by a trigger on every change to the tenant's plans (migration 0006); int8, read as a string. */
  plans_version: ColumnType<string, never, never>;
  /** Bumped by a trigger on every change a user list can see (migration 0008); int8, read as a string. */
  users_version: ColumnType<string, never, never>;
  /** Users of the tenant that are not deleted, kept by the same trigger. */
  live_users: ColumnType<string, never, never>;
  created_at: Date;
  updated_at: Date;
}

declare module '../core/db/database.js' {
  interface Tables {
    tenants: TenantsTable;
  }
}

export type TenantRow = Selectable<TenantsTable>;

export async function insertTenant(db: Executor, row: Insertable<TenantsTable>): Promise<TenantRow> {
  return db.insertInto('tenants').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function findTenant(db: Executor, tenantId: string) {
  return db.selectFrom('tenants').selectAll().where('id', '=', tenantId).executeTakeFirst();
}

/** The names of these tenants (unknown ids are left out). */
export async function findTenantNames(db: Executor, tenantIds: string[]): Promise<Map<string, string>> {
  if (tenantIds.length === 0) return new Map();
  const rows = await db.selectFrom('tenants').select(['id', 'name']).where('id', 'in', tenantIds).execute();
  return new Map(rows.map((row) => [row.id, row.name]));
}

export async function updateTenant(db: Executor, tenantId: string, changes: Updateable<TenantsTable>) {
  return db.updateTable('tenants').set(changes).where('id', '=', tenantId).returningAll().executeTakeFirst();
}

/** Suspends (a repeat keeps the first time) or lifts (null) a tenant's suspension. */
export async function updateTenantSuspension(
  db: Executor,
  tenantId: string,
  at: Date,
  suspension: { reason: string | null } | null,
) {
  return db
    .updateTable('tenants')
    .set({
      suspended_at: suspension ? sql<Date>`coalesce(suspended_at, ${at})` : null,
      suspended_reason: suspension?.reason ?? null,
      updated_at: at,
    })
    .where('id', '=', tenantId)
    .returningAll()
    .executeTakeFirst();
}

export interface TenantListOptions {
  sortBy: 'created_at' | 'name';
  sortOrder: 'asc' | 'desc';
  limit: number;
  offset: number;
}

/** Operator API only: every tenant, one page, each row with the total. */
export async function listTenants(db: Executor, options: TenantListOptions) {
  const direction = options.sortOrder === 'asc' ? sql`ASC` : sql`DESC`;
  return db
    .selectFrom('tenants')
    .selectAll()
    .select(sql<number>`count(*) over ()`.as('total'))
    .orderBy(sql`${sql.ref(options.sortBy)} ${direction}, id ${direction}`)
    .limit(options.limit)
    .offset(options.offset)
    .execute();
}

export async function countTenants(db: Executor): Promise<number> {
  const row = await db
    .selectFrom('tenants')
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}
