-- Suspension of a tenant (docs/suspension.md): while set, the tenant's API keys, call-trigger
-- webhooks, console and portal are refused; nothing is deleted, and clearing it restores
-- everything. Nullable without a default: a catalog change, no table rewrite.
ALTER TABLE tenants ADD COLUMN suspended_at timestamptz;
