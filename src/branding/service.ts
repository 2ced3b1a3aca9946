/**
 * White-label (docs/white-label.md, docs/white-label.md): each tenant's brand, and the custom domains
 * that make a request the tenant's. `forHost` and `forSlug` are how the portal (and the links in
 * clients' emails) find whose brand to show; they are read on every portal request, so each
 * process keeps answers for BRAND_CACHE_MS (and forgets a tenant at once when its own routes change it).
 */

import { randomBytes } from 'node:crypto';
import { resolveTxt as systemResolveTxt } from 'node:dns/promises';
import { isIP } from 'node:net';
import { type AuditChange, writeAudited } from '../core/audit/record.js';
import { BoundedMap } from '../core/bounded-map.js';
import type { Clock } from '../core/clock.js';
import { type Db, type Executor, isUniqueViolation } from '../core/db/database.js';
import { ApiError, type FieldIssue, notFound, validationFailed } from '../core/errors.js';
import { newId } from '../core/ids.js';
import {
  type BrandRow,
  type DomainRow,
  deleteDomain,
  findBrandBySlug,
  findBrandByVerifiedHost,
  findBrandOfTenant,
  findDomain,
  hostnameVerifiedElsewhere,
  insertDomain,
  listDomains,
  recordDomainCheck,
  upsertBrand,
} from './repository.js';
import type { Branding, Domain, UpdateBrandingBody } from './schemas.js';

/** A tenant's brand as its clients see it. */
export interface Brand {
  tenantId: string;
  /** brand_name, else the tenant's name. */
  name: string;
  /** The portal's path segment on the platform host: the slug, else the tenant id. */
  portalKey: string;
  logoUrl: string | null;
  primaryColor: string | null;
  supportEmail: string | null;
  /** The tenant's verified custom domain (the first verified), if any. */
  domain: string | null;
  /** The operator suspended the tenant: its portal shows only an "unavailable" page. */
  suspended: boolean;
  /** Where the tenant's portal is: https://<domain>/portal, else PUBLIC_BASE_URL/portal/<portalKey>. */
  portalUrl: string;
}

/** TXT records of a name, each as its character strings (node:dns's resolveTxt). */
export type TxtResolver = (name: string) => Promise<string[][]>;

/** How long a process trusts what it read about a host or slug (a domain verified elsewhere shows within it). */
export const BRAND_CACHE_MS = 30_000;
const BRAND_CACHE_ENTRIES = 10_000;
/** A DNS lookup for verification gives up after this long. */
const TXT_TIMEOUT_MS = 5_000;

export const VERIFICATION_PREFIX = '_voiceplane';
/** The TXT record that proves a domain: its name and value carry the platform's slug (`_acme.…`, `acme-verification=…`). */
const verificationRecord = (slug: string, hostname: string, token: string) => ({
  name: `_${slug}.${hostname}`,
  value: `${slug}-verification=${token}`,
});
/** Records issued before the operator renamed the platform: `_voiceplane.…`, still accepted. */
const LEGACY_SLUG = VERIFICATION_PREFIX.slice(1);

/** A hostname as a domain is stored: lowercase, no trailing dot; undefined when it is not a DNS name. */
export function normalizeHostname(input: string): string | undefined {
  const name = input.trim().toLowerCase().replace(/\.$/, '');
  if (name.length < 3 || name.length > 253 || isIP(name)) return undefined;
  const labels = name.split('.');
  if (labels.length < 2) return undefined;
  const label = /^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?$/;
  if (!labels.every((part) => label.test(part))) return undefined;
  if (/^[0-9]+$/.test(labels[labels.length - 1] as string)) return undefined;
  return name;
}

/** The Host header's name (no port), lowercase; undefined when absent or not a name. */
export function hostnameOf(host: string | undefined): string | undefined {
  if (!host) return undefined;
  const name = host.startsWith('[') ? undefined : host.replace(/:\d+$/, '');
  return name ? normalizeHostname(name) : undefined;
}

/**
 * What the schema cannot say about a brand change: the logo's origin goes into the portal's
 * Content-Security-Policy, so its host must be a plain DNS name (not an address).
 */
export function brandingIssues(input: Pick<UpdateBrandingBody, 'logo_url'>): FieldIssue[] {
  if (!input.logo_url || normalizeHostname(new URL(input.logo_url).hostname)) return [];
  return [
    { field: 'logo_url', issue: 'must be an https URL on a DNS name, e.g. https://cdn.example.com/logo.png' },
  ];
}

export function createBrandingService(deps: {
  db: Db;
  clock: Clock;
  publicBaseUrl: string;
  resolveTxt?: TxtResolver;
  /** The platform's name as a DNS label (the operator's brand); `voiceplane` by default. */
  platformSlug?: () => string;
}) {
  const platformSlug = deps.platformSlug ?? (() => LEGACY_SLUG);
  const { db, clock } = deps;
  const resolveTxt = deps.resolveTxt ?? systemResolveTxt;
  const platformHost = hostnameOf(new URL(deps.publicBaseUrl).host);
  const cache = new BoundedMap<string, { brand: Brand | undefined; until: number }>({
    maxEntries: BRAND_CACHE_ENTRIES,
  });

  function toBrand(row: BrandRow): Brand {
    const portalKey = row.slug ?? row.tenant_id;
    return {
      tenantId: row.tenant_id,
      name: row.brand_name ?? row.tenant_name,
      portalKey,
      logoUrl: row.logo_url,
      primaryColor: row.primary_color,
      supportEmail: row.support_email,
      domain: row.domain,
      suspended: row.suspended_at !== null,
      portalUrl: row.domain ? `https://${row.domain}/portal` : `${deps.publicBaseUrl}/portal/${portalKey}`,
    };
  }

  async function cached(key: string, read: () => Promise<BrandRow | undefined>): Promise<Brand | undefined> {
    const now = clock.now().getTime();
    const hit = cache.get(key);
    if (hit && hit.until > now) return hit.brand;
    const row = await read();
    const brand = row ? toBrand(row) : undefined;
    cache.set(key, { brand, until: now + BRAND_CACHE_MS });
    return brand;
  }

  /**
   * A change to a brand or domain, seen at once in this process: every cached answer goes (a slug
   * or host that changed hands may be cached under another tenant). Such changes are rare.
   */
  function forget(): void {
    cache.clear();
  }

  async function brandOf(tenantId: string, executor: Executor = db): Promise<Brand> {
    const row = await findBrandOfTenant(executor, tenantId);
    if (!row) throw notFound('Tenant');
    return toBrand(row);
  }

  function toBranding(row: BrandRow): Branding {
    const brand = toBrand(row);
    return {
      slug: row.slug,
      brand_name: row.brand_name,
      logo_url: row.logo_url,
      primary_color: row.primary_color?.toLowerCase() ?? null,
      support_email: row.support_email,
      display_name: brand.name,
      portal_url: brand.portalUrl,
      updated_at: row.updated_at?.toISOString() ?? null,
    };
  }

  function toDomain(row: DomainRow): Domain {
    return {
      id: row.id,
      hostname: row.hostname,
      status: row.verified_at ? 'verified' : 'pending',
      verification: {
        type: 'TXT',
        ...verificationRecord(platformSlug(), row.hostname, row.verification_token),
      },
      verified_at: row.verified_at?.toISOString() ?? null,
      checked_at: row.checked_at?.toISOString() ?? null,
      check_problem: row.check_problem,
      created_at: row.created_at.toISOString(),
    };
  }

  /** What the TXT lookup found wrong, or undefined when the record is there. */
  async function verificationProblem(row: DomainRow): Promise<string | undefined> {
    const slug = platformSlug();
    const problem = await recordProblem(verificationRecord(slug, row.hostname, row.verification_token));
    if (!problem || slug === LEGACY_SLUG) return problem;
    const legacy = await recordProblem(verificationRecord(LEGACY_SLUG, row.hostname, row.verification_token));
    return legacy ? problem : undefined;
  }

  async function recordProblem({ name, value: expected }: { name: string; value: string }) {
    let records: string[][];
    let timer: NodeJS.Timeout | undefined;
    try {
      records = await Promise.race([
        resolveTxt(name),
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(Object.assign(new Error('timeout'), { code: 'ETIMEOUT' })),
            TXT_TIMEOUT_MS,
          );
        }),
      ]);
    } catch (error) {
      const code = (error as { code?: string }).code;
      if (code === 'ENOTFOUND' || code === 'ENODATA') return `No TXT record was found at ${name}.`;
      return `The DNS lookup of ${name} failed (${code ?? 'error'}); try again in a few minutes.`;
    } finally {
      clearTimeout(timer);
    }
    const values = records.map((chunks) => chunks.join(''));
    if (values.includes(expected)) return undefined;
    return `The TXT records at ${name} do not include ${expected}.`;
  }

  return {
    forget,
    brandOf,

    /** Whether `host` (a Host header) could be a custom domain: a DNS name other than the platform's. */
    mayBeCustomDomain(host: string | undefined): boolean {
      const hostname = hostnameOf(host);
      return hostname !== undefined && hostname !== platformHost;
    },

    /** The brand of the tenant whose verified custom domain `host` (a Host header) names. */
    async forHost(host: string | undefined): Promise<Brand | undefined> {
      const hostname = hostnameOf(host);
      if (!hostname || hostname === platformHost) return undefined;
      return cached(`host:${hostname}`, () => findBrandByVerifiedHost(db, hostname));
    },

    /** The brand of the tenant whose portal slug, or id, this is (links with the id keep working once a slug is set). */
    async forSlug(slug: string): Promise<Brand | undefined> {
      if (slug.length > 64) return undefined;
      return cached(`slug:${slug}`, () => findBrandBySlug(db, slug));
    },

    async get(tenantId: string): Promise<Branding> {
      const row = await findBrandOfTenant(db, tenantId);
      if (!row) throw notFound('Tenant');
      return toBranding(row);
    },

    async update(tenantId: string, input: UpdateBrandingBody): Promise<Branding> {
      if (!(await findBrandOfTenant(db, tenantId))) throw notFound('Tenant');
      const issues = brandingIssues(input);
      if (issues.length > 0) throw validationFailed(issues);
      try {
        const now = clock.now();
        await writeAudited(
          db,
          (executor) =>
            upsertBrand(executor, tenantId, {
              ...(input.slug !== undefined ? { slug: input.slug } : {}),
              ...(input.brand_name !== undefined ? { brand_name: input.brand_name } : {}),
              ...(input.logo_url !== undefined ? { logo_url: input.logo_url } : {}),
              ...(input.primary_color !== undefined
                ? { primary_color: input.primary_color?.toLowerCase() ?? null }
                : {}),
              ...(input.support_email !== undefined ? { support_email: input.support_email } : {}),
              updated_at: now,
            }),
          () => domainChange('branding.updated', tenantId, 'branding', tenantId, Object.keys(input), now),
        );
      } catch (error) {
        if (isUniqueViolation(error))
          throw new ApiError('conflict', 'Another tenant already uses this slug.', [
            { field: 'slug', issue: 'is taken' },
          ]);
        throw error;
      }
      forget();
      return this.get(tenantId);
    },

    async listDomains(tenantId: string): Promise<Domain[]> {
      return (await listDomains(db, tenantId)).map(toDomain);
    },

    async addDomain(
      tenantId: string,
      input: { hostname: string },
    ): Promise<{ domain: Domain; created: boolean }> {
      const hostname = normalizeHostname(input.hostname);
      if (!hostname) {
        throw validationFailed([
          {
            field: 'hostname',
            issue: 'must be a DNS name such as portal.example.com (no scheme, port or path)',
          },
        ]);
      }
      if (hostname === platformHost) {
        throw validationFailed([{ field: 'hostname', issue: 'is the platform’s own host' }]);
      }
      if (!(await findBrandOfTenant(db, tenantId))) throw notFound('Tenant');
      const row: DomainRow = {
        id: newId('dom'),
        tenant_id: tenantId,
        hostname,
        verification_token: randomBytes(18).toString('base64url'),
        verified_at: null,
        checked_at: null,
        check_problem: null,
        created_at: clock.now(),
      };
      const inserted = await writeAudited(
        db,
        (executor) => insertDomain(executor, row),
        (added) =>
          added && domainChange('domain.added', tenantId, 'domain', row.id, ['hostname'], row.created_at),
      );
      if (inserted) return { domain: toDomain(inserted), created: true };
      const existing = (await listDomains(db, tenantId)).find((domain) => domain.hostname === hostname);
      if (!existing) throw new Error('domain vanished between its insert and its read');
      return { domain: toDomain(existing), created: false };
    },

    /** Looks up the domain's TXT record; verified when it holds the domain's value. */
    async verifyDomain(tenantId: string, domainId: string): Promise<Domain> {
      const row = await findDomain(db, tenantId, domainId);
      if (!row) throw notFound('Domain');
      if (row.verified_at) return toDomain(row);
      if (await hostnameVerifiedElsewhere(db, tenantId, row.hostname)) {
        throw new ApiError('conflict', `${row.hostname} is already verified by another tenant.`);
      }
      const problem = await verificationProblem(row);
      const now = clock.now();
      let checked: DomainRow | undefined;
      try {
        checked = await writeAudited(
          db,
          (executor) =>
            recordDomainCheck(executor, row.id, {
              checked_at: now,
              check_problem: problem ?? null,
              ...(problem ? {} : { verified_at: now }),
            }),
          (done) =>
            done &&
            !problem &&
            domainChange('domain.verified', tenantId, 'domain', row.id, ['verified_at'], now),
        );
      } catch (error) {
        if (isUniqueViolation(error))
          throw new ApiError('conflict', `${row.hostname} is already verified by another tenant.`);
        throw error;
      }
      if (!checked) throw notFound('Domain');
      forget();
      if (problem) {
        throw new ApiError('unprocessable_entity', `The domain is not verified: ${problem}`, {
          domain: toDomain(checked),
        });
      }
      return toDomain(checked);
    },

    async removeDomain(tenantId: string, domainId: string): Promise<Domain> {
      const row = await writeAudited(
        db,
        (executor) => deleteDomain(executor, tenantId, domainId),
        (removed) =>
          removed && domainChange('domain.removed', tenantId, 'domain', removed.id, [], clock.now()),
      );
      if (!row) throw notFound('Domain');
      forget();
      return toDomain(row);
    },
  };
}

export type BrandingService = ReturnType<typeof createBrandingService>;

function domainChange(
  action: string,
  tenantId: string,
  objectType: string,
  objectId: string,
  fields: string[],
  at: Date,
): AuditChange {
  return { action, tenantId, objectType, objectId, fields, at };
}
