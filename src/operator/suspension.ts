/**
 * Suspending a tenant (docs/operator-console.md, "Suspension"): the operator API and the operator
 * console both go through here. The state is two columns of the tenant (tenants/service.ts
 * `setSuspension`); each surface reads it with a read it already makes (the API key's lookup,
 * the webhook's target, the console's session, the portal's tenant, the dispatch statement), so
 * enforcing it costs no extra query. A change forgets this process's cached keys and brands (other
 * processes see it within a second for keys, 30 seconds for the portal); lifting wakes the
 * tenant's waiting calls at once.
 */
import { wakeTenantDispatches } from '../calls/dispatch-controls.js';
import type { Clock } from '../core/clock.js';
import type { Db } from '../core/db/database.js';
import type { KeyVerifier } from '../core/http/auth.js';
import type { Tenant } from '../tenants/schemas.js';
import type { TenantService } from '../tenants/service.js';

export interface TenantSuspension {
  /** Suspends the tenant (a repeat keeps the first time and replaces the note). */
  suspend(tenantId: string, reason?: string | null): Promise<Tenant>;
  /** Lifts the suspension (a no-op on an active tenant); nothing else of the tenant changes. */
  lift(tenantId: string): Promise<Tenant>;
}

export function createTenantSuspension(deps: {
  db: Db;
  clock: Clock;
  tenants: TenantService;
  keyVerifier: KeyVerifier;
  /** Forgotten on each change, so this process's portal sees it at once (others within 30 s). */
  branding: { forget(): void };
}): TenantSuspension {
  return {
    async suspend(tenantId, reason) {
      const tenant = await deps.tenants.setSuspension(tenantId, { reason: reason?.trim() || null });
      deps.keyVerifier.invalidate();
      deps.branding.forget();
      return tenant;
    },
    async lift(tenantId) {
      const tenant = await deps.tenants.setSuspension(tenantId, null);
      deps.keyVerifier.invalidate();
      deps.branding.forget();
      await wakeTenantDispatches(deps.db, tenantId, deps.clock.now());
      return tenant;
    },
  };
}
