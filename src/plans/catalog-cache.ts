/**
 * Partner plan lists, cached per tenant and process. The catalog changes rarely and is read on
 * every storefront render, so a list page is answered from memory while the tenant's
 * `plans_version` (bumped by a trigger on every change to its plans, migration 0006) is known to
 * be unchanged. A cached entry is trusted for at most `maxStalenessMs`, then confirmed by one
 * indexed read of that counter: a change made through this process is seen at once
 * (`invalidate`), a change made through another process sharing the database within
 * `maxStalenessMs` — the same bound as the API-key cache.
 */
import { BoundedMap } from '../core/bounded-map.js';
import type { Db } from '../core/db/database.js';

const MAX_TENANTS = 1_000;
const MAX_PAGES_PER_TENANT = 64;

interface TenantEntry<Page> {
  version: bigint;
  /** When the version was last confirmed (taken before the read was sent). */
  checkedAt: number;
  pages: BoundedMap<string, Promise<Page>>;
}

export interface CatalogCache<Page> {
  /** The page for `key` (the normalized query), from memory or from `load`. */
  page(tenantId: string, key: string, load: () => Promise<Page>): Promise<Page>;
  /** Forgets the tenant's pages (after a change through this process). */
  invalidate(tenantId: string): void;
}

export function createCatalogCache<Page>(options: { db: Db; maxStalenessMs: number }): CatalogCache<Page> {
  const { db, maxStalenessMs } = options;
  const entries = new BoundedMap<string, TenantEntry<Page>>({ maxEntries: MAX_TENANTS });
  const newPages = () => new BoundedMap<string, Promise<Page>>({ maxEntries: MAX_PAGES_PER_TENANT });
  const confirming = new Map<string, Promise<TenantEntry<Page>>>();
  /** Bumped by `invalidate`: a confirmation that started before it must not be kept. */
  let generation = 0;

  async function readVersion(tenantId: string): Promise<bigint> {
    const row = await db
      .selectFrom('tenants')
      .select('plans_version')
      .where('id', '=', tenantId)
      .executeTakeFirst();
    return BigInt(row?.plans_version ?? -1);
  }

  function store(tenantId: string, entry: TenantEntry<Page>): TenantEntry<Page> {
    const current = entries.get(tenantId);
    // A slow confirmation must not replace what a later one learned.
    if (current && current.version > entry.version) return current;
    entries.set(tenantId, entry);
    return entry;
  }

  function confirmedEntry(tenantId: string): Promise<TenantEntry<Page>> | TenantEntry<Page> {
    const entry = entries.get(tenantId);
    if (entry && Date.now() - entry.checkedAt < maxStalenessMs) return entry;
    let pending = confirming.get(tenantId);
    if (!pending) {
      const startedAt = Date.now();
      const startedIn = generation;
      pending = readVersion(tenantId)
        .then((version) => {
          if (startedIn !== generation) return { version, checkedAt: startedAt, pages: newPages() };
          const current = entries.get(tenantId);
          if (current && current.version === version) {
            current.checkedAt = Math.max(current.checkedAt, startedAt);
            return current;
          }
          return store(tenantId, { version, checkedAt: startedAt, pages: newPages() });
        })
        .finally(() => {
          if (confirming.get(tenantId) === pending) confirming.delete(tenantId);
        });
      confirming.set(tenantId, pending);
    }
    return pending;
  }

  return {
    async page(tenantId, key, load) {
      const entry = await confirmedEntry(tenantId);
      let page = entry.pages.get(key);
      if (!page) {
        // Loaded after the version was read, so never older than it; a failed load is not kept.
        page = load();
        entry.pages.set(key, page);
        page.catch(() => {
          if (entry.pages.get(key) === page) entry.pages.delete(key);
        });
      }
      return page;
    },
    invalidate(tenantId) {
      generation++;
      entries.delete(tenantId);
      confirming.delete(tenantId);
    },
  };
}
