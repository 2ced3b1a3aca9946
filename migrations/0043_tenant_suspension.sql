-- Suspending a tenant (docs/operator-console.md, "Suspension"): while suspended_at is set, the
-- tenant's API keys, call-trigger webhooks, console and client portal refuse every request and
-- its queued calls wait; lifting clears both columns and nothing else, so everything comes back.
-- Nullable columns without a default: adding them rewrites nothing and locks only briefly.
ALTER TABLE tenants ADD COLUMN suspended_at timestamptz;
ALTER TABLE tenants ADD COLUMN suspended_reason text;
