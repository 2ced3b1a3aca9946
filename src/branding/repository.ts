import type { Selectable } from 'kysely';
import type { Executor } from '../core/db/database.js';

export interface TenantBrandsTable {
  tenant_id: string;
  slug: string | null;
  brand_name: string | null;
  logo_url: string | null;
  primary_color: string | null;
  support_email: string | null;
  updated_at: Date;
}

export interface TenantDomainsTable {
  id: string;
  tenant_id: string;
  hostname: string;
  verification_token: string;
  verified_at: Date | null;
  checked_at: Date | null;
  check_problem: string | null;
  created_at: Date;
}

declare module '../core/db/database.js' {
  interface Tables {
    tenant_brands: TenantBrandsTable;
    tenant_domains: TenantDomainsTable;
  }
}

export type DomainRow = Selectable<TenantDomainsTable>;

/** A tenant with its brand (null fields when it has none) and its first verified domain. */
export interface BrandRow {
  tenant_id: string;
  tenant_name: string;
  slug: string | null;
  brand_name: string | null;
  logo_url: string | null;
  primary_color: string | null;
  support_email: string | null;
  updated_at: Date | null;
  domain: string | null;
  suspended_at: Date | null;
}

function brandQuery(db: Executor) {
  return db
    .selectFrom('tenants as t')
    .leftJoin('tenant_brands as b', 'b.tenant_id', 't.id')
    .select((eb) => [
      't.id as tenant_id',
      't.name as tenant_name',
      't.suspended_at',
      'b.slug',
      'b.brand_name',
      'b.logo_url',
      'b.primary_color',
      'b.support_email',
      'b.updated_at',
      eb
        .selectFrom('tenant_domains as d')
        .select('d.hostname')
        .whereRef('d.tenant_id', '=', 't.id')
        .where('d.verified_at', 'is not', null)
        .orderBy('d.verified_at')
        .limit(1)
        .as('domain'),
    ]);
}

export async function findBrandOfTenant(db: Executor, tenantId: string): Promise<BrandRow | undefined> {
  return brandQuery(db).where('t.id', '=', tenantId).executeTakeFirst();
}

/** The tenant whose portal slug, or id, this is (a slug never contains `_`, every tenant id does). */
export async function findBrandBySlug(db: Executor, slug: string): Promise<BrandRow | undefined> {
  return brandQuery(db)
    .where((eb) => eb.or([eb('b.slug', '=', slug), eb('t.id', '=', slug)]))
    .executeTakeFirst();
}

export async function findBrandByVerifiedHost(db: Executor, hostname: string): Promise<BrandRow | undefined> {
  const domain = await db
    .selectFrom('tenant_domains')
    .select('tenant_id')
    .where('hostname', '=', hostname)
    .where('verified_at', 'is not', null)
    .executeTakeFirst();
  return domain ? findBrandOfTenant(db, domain.tenant_id) : undefined;
}

export async function upsertBrand(
  db: Executor,
  tenantId: string,
  changes: Partial<Omit<TenantBrandsTable, 'tenant_id'>> & { updated_at: Date },
): Promise<void> {
  await db
    .insertInto('tenant_brands')
    .values({ tenant_id: tenantId, ...changes })
    .onConflict((oc) => oc.column('tenant_id').doUpdateSet(changes))
    .execute();
}

export async function listDomains(db: Executor, tenantId: string): Promise<DomainRow[]> {
  return db
    .selectFrom('tenant_domains')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .orderBy('created_at')
    .execute();
}

export async function findDomain(
  db: Executor,
  tenantId: string,
  domainId: string,
): Promise<DomainRow | undefined> {
  return db
    .selectFrom('tenant_domains')
    .selectAll()
    .where('tenant_id', '=', tenantId)
    .where('id', '=', domainId)
    .executeTakeFirst();
}

/** Adds the hostname to the tenant; undefined when the tenant already has it. */
export async function insertDomain(db: Executor, row: DomainRow): Promise<DomainRow | undefined> {
  return db
    .insertInto('tenant_domains')
    .values(row)
    .onConflict((oc) => oc.columns(['tenant_id', 'hostname']).doNothing())
    .returningAll()
    .executeTakeFirst();
}

export async function recordDomainCheck(
  db: Executor,
  domainId: string,
  check: { checked_at: Date; check_problem: string | null; verified_at?: Date },
): Promise<DomainRow | undefined> {
  return db
    .updateTable('tenant_domains')
    .set(check)
    .where('id', '=', domainId)
    .returningAll()
    .executeTakeFirst();
}

/** Another tenant has verified this hostname. */
export async function hostnameVerifiedElsewhere(
  db: Executor,
  tenantId: string,
  hostname: string,
): Promise<boolean> {
  const row = await db
    .selectFrom('tenant_domains')
    .select('id')
    .where('hostname', '=', hostname)
    .where('verified_at', 'is not', null)
    .where('tenant_id', '<>', tenantId)
    .executeTakeFirst();
  return row !== undefined;
}

export async function deleteDomain(
  db: Executor,
  tenantId: string,
  domainId: string,
): Promise<DomainRow | undefined> {
  return db
    .deleteFrom('tenant_domains')
    .where('tenant_id', '=', tenantId)
    .where('id', '=', domainId)
    .returningAll()
    .executeTakeFirst();
}
