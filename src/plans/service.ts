/** The tenant's plan catalog: read by partners, edited by the operator. */
import { type AuditChange, writeAudited } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import { listPage, type paginationBlock } from '../core/db/pagination.js';
import { type FieldIssue, notFound, validationFailed } from '../core/errors.js';
import { newId } from '../core/ids.js';
import { createCatalogCache } from './catalog-cache.js';
import {
  countPlans,
  findPlan,
  findPlanNames,
  findPlanTenant,
  insertPlan,
  listPlans,
  toPlan,
  updatePlan,
} from './repository.js';
import type { CreatePlanBody, ListPlansQuery, Plan, UpdatePlanBody } from './schemas.js';

const RATE_FIELDS = ['overage_rate', 'topup_rate'] as const;
const RATE_DECIMALS = 6;

/**
 * Rates are stored as numeric(14, 6): a rate with more decimals would come back rounded, so it is
 * refused instead (bodies are never coerced). A 422 validation_failed, checked before existence.
 */
export function checkPlanRates(input: Partial<Record<(typeof RATE_FIELDS)[number], number>>): void {
  const issues: FieldIssue[] = [];
  for (const field of RATE_FIELDS) {
    const value = input[field];
    if (typeof value === 'number' && Number(value.toFixed(RATE_DECIMALS)) !== value) {
      issues.push({ field, issue: `must have at most ${RATE_DECIMALS} decimal places.` });
    }
  }
  if (issues.length > 0) throw validationFailed(issues);
}

/** How long a process may answer plan lists from memory before re-reading the tenant's plans_version. */
export const PLAN_LIST_CACHE_MS = 500;

export function createPlanService(deps: { db: Db; clock: Clock; listCacheMs?: number }) {
  const { db, clock } = deps;
  const listCache = createCatalogCache<PlanPage>({
    db,
    maxStalenessMs: deps.listCacheMs ?? PLAN_LIST_CACHE_MS,
  });

  async function tenantOfPlan(planId: string): Promise<string> {
    const tenantId = await findPlanTenant(db, planId);
    if (!tenantId) throw notFound('Plan');
    return tenantId;
  }

  return {
    list(tenantId: string, query: ListPlansQuery): Promise<PlanPage> {
      const filter = { offeredOnly: query.active === 'true', provider: query.provider };
      const key = [
        query.page,
        query.limit,
        query.active,
        query.provider,
        query.sort_by,
        query.sort_order,
      ].join();
      return listCache.page(tenantId, key, () =>
        listPage(
          query,
          (limit, offset) =>
            listPlans(db, tenantId, {
              ...filter,
              sortBy: query.sort_by,
              sortOrder: query.sort_order,
              limit,
              offset,
            }),
          () => countPlans(db, tenantId, filter),
          toPlan,
        ),
      );
    },

    /** A plan of the tenant; archived plans are absent unless `includeArchived` (the console shows them). */
    async get(tenantId: string, planId: string, options: { includeArchived?: boolean } = {}): Promise<Plan> {
      const row = await findPlan(db, tenantId, planId, options);
      if (!row) throw notFound('Plan');
      return toPlan(row);
    },

    /** Plan names by id (archived ones too), for lists that name plans: one query. */
    async namesOf(tenantId: string, ids: readonly string[]): Promise<Map<string, string>> {
      const rows = await findPlanNames(db, tenantId, [...new Set(ids)]);
      return new Map(rows.map((row) => [row.id, row.name]));
    },

    async create(tenantId: string, input: CreatePlanBody): Promise<Plan> {
      checkPlanRates(input);
      const now = clock.now();
      const id = newId('plan');
      const row = await writeAudited(
        db,
        (executor) =>
          insertPlan(executor, {
            id,
            tenant_id: tenantId,
            name: input.name,
            description: input.description ?? null,
            active: input.active ?? true,
            provider: input.provider,
            currency: input.currency,
            monthly_price: input.monthly_price,
            annual_price: input.annual_price,
            included_minutes: input.included_minutes,
            overage_rate: input.overage_rate,
            topup_rate: input.topup_rate,
            trial_period_days: input.trial_period_days ?? 0,
            created_at: now,
            updated_at: now,
            archived_at: null,
          }),
        () => planChange('plan.created', tenantId, id, Object.keys(input), now),
      );
      listCache.invalidate(tenantId);
      return toPlan(row);
    },

    async update(planId: string, changes: UpdatePlanBody): Promise<Plan> {
      checkPlanRates(changes);
      const tenantId = await tenantOfPlan(planId);
      const now = clock.now();
      const row = await writeAudited(
        db,
        (executor) => updatePlan(executor, tenantId, planId, { ...changes, updated_at: now }),
        (updated) => updated && planChange('plan.updated', tenantId, planId, Object.keys(changes), now),
      );
      listCache.invalidate(tenantId);
      if (!row) throw notFound('Plan');
      return toPlan(row);
    },

    /**
     * Archives the plan: no longer offered, absent from GET /plans/{id}, listed only with
     * active=false. With `inTenant` (the console), another tenant's plan is not found.
     */
    async archive(planId: string, inTenant?: string): Promise<Plan> {
      const tenantId = await tenantOfPlan(planId);
      if (inTenant !== undefined && inTenant !== tenantId) throw notFound('Plan');
      const now = clock.now();
      const row = await writeAudited(
        db,
        (executor) =>
          executor
            .updateTable('plans')
            .set((eb) => ({
              active: false,
              archived_at: eb.fn.coalesce('archived_at', eb.val(now)),
              updated_at: now,
            }))
            .where('tenant_id', '=', tenantId)
            .where('id', '=', planId)
            .returningAll()
            .executeTakeFirstOrThrow(),
        () => planChange('plan.archived', tenantId, planId, ['active'], now),
      );
      listCache.invalidate(tenantId);
      return toPlan(row);
    },
  };
}

export type PlanService = ReturnType<typeof createPlanService>;

function planChange(
  action: string,
  tenantId: string,
  planId: string,
  fields: string[],
  at: Date,
): AuditChange {
  return { action, tenantId, objectType: 'plan', objectId: planId, fields, at };
}
export type PlanPage = { data: Plan[]; pagination: ReturnType<typeof paginationBlock> };
