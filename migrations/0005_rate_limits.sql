-- Per-tenant override of the partner API rate limit (a token bucket per API key of the tenant).
-- Both NULL: the defaults (100 requests/s, burst 200).
ALTER TABLE tenants
  ADD COLUMN rate_limit_per_second integer CHECK (rate_limit_per_second > 0),
  ADD COLUMN rate_limit_burst integer CHECK (rate_limit_burst > 0),
  ADD CONSTRAINT tenants_rate_limit_both CHECK ((rate_limit_per_second IS NULL) = (rate_limit_burst IS NULL));
