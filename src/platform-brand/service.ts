/**
 * The operator's brand (docs/operator-console.md): the platform's name, logo and colour wherever
 * the platform speaks for itself — the agency console's title and sign-in, the operator console,
 * the platform's own emails, /docs, the custom-domain verification record. The environment sets
 * the defaults (core/config/brand.ts); the operator console overrides them, stored in one row.
 * Read through a per-process cache of BRAND_CACHE_MS, so a change reaches other processes within it.
 */
import { type Static, Type } from '@sinclair/typebox';
import type { Selectable } from 'kysely';
import { writeAudited } from '../core/audit/record.js';
import type { Clock } from '../core/clock.js';
import { HEX_COLOR, type PlatformBrandConfig } from '../core/config/brand.js';
import type { Db } from '../core/db/database.js';
import { validationFailed } from '../core/errors.js';
import { Nullable } from '../core/http/schemas.js';

export interface PlatformBrandTable {
  id: boolean;
  name: string | null;
  logo_url: string | null;
  primary_color: string | null;
  updated_at: Date;
}

declare module '../core/db/database.js' {
  interface Tables {
    platform_brand: PlatformBrandTable;
  }
}

export interface PlatformBrand {
  name: string;
  logoUrl: string | null;
  color: string;
}

/** Null (or blank) goes back to the environment's default. */
export const UpdatePlatformBrandBody = Type.Object(
  {
    name: Nullable(Type.String({ maxLength: 60 })),
    logo_url: Nullable(Type.String({ maxLength: 2000 })),
    primary_color: Nullable(Type.String({ maxLength: 7 })),
  },
  { additionalProperties: false },
);
export type UpdatePlatformBrandBody = Static<typeof UpdatePlatformBrandBody>;

export const BRAND_CACHE_MS = 30_000;

/** The verification record's name and value prefix for a platform named `name`: `_acme-cloud`. */
export function brandSlug(name: string): string {
  const slug = name
    .normalize('NFKD')
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 40);
  return slug || 'platform';
}

function issuesOf(input: UpdatePlatformBrandBody) {
  const issues = [];
  if (input.name !== null && /\p{Cc}/u.test(input.name)) {
    issues.push({ field: 'name', issue: 'must not hold control characters.' });
  }
  if (input.logo_url !== null) {
    let ok = false;
    try {
      ok = new URL(input.logo_url).protocol === 'https:';
    } catch {}
    if (!ok) issues.push({ field: 'logo_url', issue: 'must be an https:// URL.' });
  }
  if (input.primary_color !== null && !HEX_COLOR.test(input.primary_color)) {
    issues.push({ field: 'primary_color', issue: 'must be a colour written #rrggbb.' });
  }
  return issues;
}

export function createPlatformBrandService(deps: { db: Db; clock: Clock; defaults: PlatformBrandConfig }) {
  const { db, clock, defaults } = deps;
  let cache: { brand: PlatformBrand; until: number } | undefined;
  let refreshing: Promise<unknown> | undefined;

  const merge = (row: Selectable<PlatformBrandTable> | undefined): PlatformBrand => ({
    name: row?.name ?? defaults.name,
    logoUrl: row?.logo_url ?? defaults.logoUrl,
    color: row?.primary_color ?? defaults.color,
  });

  async function current(): Promise<PlatformBrand> {
    const now = clock.now().getTime();
    if (cache && cache.until > now) return cache.brand;
    const row = await db.selectFrom('platform_brand').selectAll().executeTakeFirst();
    cache = { brand: merge(row), until: now + BRAND_CACHE_MS };
    return cache.brand;
  }

  return {
    current,
    defaults: (): PlatformBrand => ({
      name: defaults.name,
      logoUrl: defaults.logoUrl,
      color: defaults.color,
    }),
    /**
     * The last brand read in this process (the environment's until one was), for code that cannot
     * wait; a stale one starts a fresh read in the background for the next caller.
     */
    cached(): PlatformBrand {
      if (!cache || cache.until <= clock.now().getTime()) {
        if (!refreshing)
          refreshing = current()
            .catch(() => undefined)
            .finally(() => {
              refreshing = undefined;
            });
      }
      return cache?.brand ?? merge(undefined);
    },

    /** What the operator stored over the environment (null: the default is in use). */
    async overrides(): Promise<UpdatePlatformBrandBody> {
      const row = await db.selectFrom('platform_brand').selectAll().executeTakeFirst();
      return {
        name: row?.name ?? null,
        logo_url: row?.logo_url ?? null,
        primary_color: row?.primary_color ?? null,
      };
    },

    async update(input: UpdatePlatformBrandBody): Promise<PlatformBrand> {
      const blankToNull = (value: string | null) => (value?.trim() ? value.trim() : null);
      const values = {
        name: blankToNull(input.name),
        logo_url: blankToNull(input.logo_url),
        primary_color: blankToNull(input.primary_color)?.toLowerCase() ?? null,
      };
      const issues = issuesOf(values);
      if (issues.length > 0) throw validationFailed(issues);
      const row = { id: true, ...values, updated_at: clock.now() };
      await writeAudited(
        db,
        (executor) =>
          executor
            .insertInto('platform_brand')
            .values(row)
            .onConflict((oc) => oc.column('id').doUpdateSet({ ...values, updated_at: row.updated_at }))
            .execute(),
        () => ({
          action: 'platform_brand.updated',
          tenantId: null,
          objectType: 'platform_brand',
          objectId: null,
          fields: Object.keys(input),
          at: row.updated_at,
        }),
      );
      cache = undefined;
      return current();
    },
  };
}

export type PlatformBrandService = ReturnType<typeof createPlatformBrandService>;
