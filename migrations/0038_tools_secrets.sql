-- Tools (docs/tools.md): each tenant's secret for signing the requests we send to its agents'
-- tool endpoints, sealed at rest like the event endpoints' secrets. After a rotation the previous
-- secret keeps signing beside the new one until previous_secret_expires_at. A new table: nothing
-- existing is rewritten or locked.
CREATE TABLE tools_secrets (
  tenant_id text PRIMARY KEY REFERENCES tenants(id),
  secret_sealed text NOT NULL,
  previous_secret_sealed text,
  previous_secret_expires_at timestamptz,
  rotated_at timestamptz NOT NULL
);
