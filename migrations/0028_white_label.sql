-- White-label (platform.md §5, docs/white-label.md): each tenant's brand, its portal's slug and
-- its custom domains. A table of their own, so the tenants row (read on every API request's
-- key check) stays as it is; a tenant without a row shows its own name and has no slug (its portal
-- answers at /portal/<tenant id>).
CREATE TABLE tenant_brands (
  tenant_id text PRIMARY KEY REFERENCES tenants(id),
  -- /portal/<slug> on the platform's host; lowercase letters, digits and inner hyphens.
  slug text UNIQUE,
  brand_name text,
  logo_url text,
  -- #rrggbb
  primary_color text,
  support_email text,
  updated_at timestamptz NOT NULL
);

-- A tenant's custom domains. A hostname is the tenant's once verified: a TXT record at
-- _voiceplane.<hostname> holding the domain's verification value, which only that tenant is shown.
-- Unverified, several tenants may have added the same name (whoever proves it first gets it), so
-- nobody can hold a name hostage by adding it first.
CREATE TABLE tenant_domains (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  hostname text NOT NULL,
  verification_token text NOT NULL,
  verified_at timestamptz,
  -- When the last verification attempt looked, and what it found (shown to the agency).
  checked_at timestamptz,
  check_problem text,
  created_at timestamptz NOT NULL,
  UNIQUE (tenant_id, hostname)
);
CREATE UNIQUE INDEX tenant_domains_verified ON tenant_domains (hostname) WHERE verified_at IS NOT NULL;
CREATE INDEX tenant_domains_tenant ON tenant_domains (tenant_id, created_at);
