/** The per-tenant override of the partner limit (columns on tenants, migration 0005). */
import type { Executor } from '../core/db/database.js';
import '../tenants/repository.js';

export async function findTenantRateLimit(db: Executor, tenantId: string) {
  return db
    .selectFrom('tenants')
    .select(['rate_limit_per_second', 'rate_limit_burst'])
    .where('id', '=', tenantId)
    .executeTakeFirst();
}
