/**
 * Exact user-list totals, remembered per tenant and process. Counting a broad search costs many
 * times more than paging through it (bench/README.md, "User-list totals remembered"), and every
 * page of it asks for the same total. A total is stored with the tenant's `users_version` at the moment it
 * was counted (migration 0008 bumps it on every change a list can see); each list statement
 * reads the version in its own snapshot, and a remembered total is used only when that version is
 * still the current one, so the answer is the same as a fresh count, never stale.
 */

import { BoundedMap } from '../core/bounded-map.js';

const MAX_TENANTS = 1_000;
const MAX_TOTALS_PER_TENANT = 256;

export interface TenantUserCounts {
  /** `tenants.users_version` (int8, as a string) the totals below were counted at. */
  version: string;
  /** Users of the tenant that are not deleted, at that version. */
  liveUsers: number;
  /** Total of each filter (see `filterKey`) counted at that version. */
  totals: BoundedMap<string, number>;
}

export interface ListTotals {
  /** What this process knows of the tenant's counts, at the version it last saw. */
  known(tenantId: string): TenantUserCounts | undefined;
  /** Remembers a count made at `version`; an older version than the one known is ignored. */
  remember(tenantId: string, version: string, liveUsers: number, key: string, total: number | null): void;
}

export function createListTotals(): ListTotals {
  const tenants = new BoundedMap<string, TenantUserCounts>({ maxEntries: MAX_TENANTS });

  return {
    known: (tenantId) => tenants.get(tenantId),
    remember(tenantId, version, liveUsers, key, total) {
      let entry = tenants.get(tenantId);
      if (entry && BigInt(entry.version) > BigInt(version)) return;
      if (!entry || entry.version !== version) {
        entry = { version, liveUsers, totals: new BoundedMap({ maxEntries: MAX_TOTALS_PER_TENANT }) };
        tenants.set(tenantId, entry);
      }
      if (total === null) return;
      entry.totals.set(key, total);
    },
  };
}

/** The part of a list query that decides its total (not its page or order). */
export function filterKey(filter: { status?: string; search?: string }): string {
  // Lower-cased like the search pattern itself (likeContains): `Son` and `son` share a total.
  return JSON.stringify([filter.status ?? null, filter.search ? filter.search.toLowerCase() : null]);
}
