import { type Selectable, sql } from 'kysely';
import type { Executor } from '../core/db/database.js';
import type { Plan, PlanProvider } from './schemas.js';

export interface PlansTable {
  id: string;
  tenant_id: string;
  name: string;
  description: string | null;
  active: boolean;
  provider: PlanProvider;
  currency: string;
  monthly_price: number;
  annual_price: number;
  included_minutes: number;
  overage_rate: number;
  topup_rate: number;
  trial_period_days: number;
  created_at: Date;
  updated_at: Date;
  archived_at: Date | null;
}

declare module '../core/db/database.js' {
  interface Tables {
    plans: PlansTable;
  }
}

export type PlanRow = Selectable<PlansTable>;

export function toPlan(row: PlanRow): Plan {
  return {
    id: row.id,
    name: row.name,
    description: row.description,
    active: row.active,
    provider: row.provider,
    currency: row.currency,
    monthly_price: row.monthly_price,
    annual_price: row.annual_price,
    included_minutes: row.included_minutes,
    overage_rate: row.overage_rate,
    topup_rate: row.topup_rate,
    trial_period_days: row.trial_period_days,
    created_at: row.created_at.toISOString(),
    updated_at: row.updated_at.toISOString(),
  };
}

export interface PlanFilter {
  /** Only plans offered to new subscribers (active and not archived). */
  offeredOnly: boolean;
  provider?: PlanProvider;
}

function filteredPlans(db: Executor, tenantId: string, filter: PlanFilter) {
  let query = db.selectFrom('plans').where('tenant_id', '=', tenantId);
  if (filter.offeredOnly) query = query.where('active', '=', true).where('archived_at', 'is', null);
  if (filter.provider) query = query.where('provider', '=', filter.provider);
  return query;
}

export async function listPlans(
  db: Executor,
  tenantId: string,
  options: PlanFilter & {
    sortBy: 'created_at' | 'name';
    sortOrder: 'asc' | 'desc';
    limit: number;
    offset: number;
  },
) {
  const direction = options.sortOrder === 'asc' ? sql`ASC` : sql`DESC`;
  return filteredPlans(db, tenantId, options)
    .selectAll()
    .select(sql<number>`count(*) over ()`.as('total'))
    .orderBy(sql`${sql.ref(options.sortBy)} ${direction}, id ${direction}`)
    .limit(options.limit)
    .offset(options.offset)
    .execute();
}

export async function countPlans(db: Executor, tenantId: string, filter: PlanFilter): Promise<number> {
  const row = await filteredPlans(db, tenantId, filter)
    .select((eb) => eb.fn.countAll<number>().as('count'))
    .executeTakeFirstOrThrow();
  return Number(row.count);
}

/**
 * A plan of the tenant. Archived plans behave as absent, except with `includeArchived`: a
 * subscription keeps its plan after the plan is archived, so billing reads it in any state.
 */
export async function findPlan(
  db: Executor,
  tenantId: string,
  planId: string,
  options: { includeArchived?: boolean } = {},
) {
  let query = db.selectFrom('plans').selectAll().where('tenant_id', '=', tenantId).where('id', '=', planId);
  if (!options.includeArchived) query = query.where('archived_at', 'is', null);
  return query.executeTakeFirst();
}

export async function insertPlan(db: Executor, row: PlansTable): Promise<PlanRow> {
  return db.insertInto('plans').values(row).returningAll().executeTakeFirstOrThrow();
}

export async function updatePlan(
  db: Executor,
  tenantId: string,
  planId: string,
  changes: Partial<PlansTable>,
) {
  return db
    .updateTable('plans')
    .set(changes)
    .where('tenant_id', '=', tenantId)
    .where('id', '=', planId)
    .where('archived_at', 'is', null)
    .returningAll()
    .executeTakeFirst();
}

/** Operator API only: the tenant a plan belongs to (operator paths name no tenant). */
export async function findPlanTenant(db: Executor, planId: string): Promise<string | undefined> {
  const row = await db.selectFrom('plans').select('tenant_id').where('id', '=', planId).executeTakeFirst();
  return row?.tenant_id;
}

/** Names of the tenant's plans among `ids` (archived ones too), in one query. */
export async function findPlanNames(db: Executor, tenantId: string, ids: readonly string[]) {
  if (ids.length === 0) return [];
  return db
    .selectFrom('plans')
    .select(['id', 'name'])
    .where('tenant_id', '=', tenantId)
    .where('id', 'in', [...ids])
    .execute();
}
