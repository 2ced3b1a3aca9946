-- The calls interface's reads and the dispatch pipeline's call controls.
--
-- Known cost: migrations run inside a transaction, so these indexes are built with a plain
-- CREATE INDEX, which blocks writes to `calls` while it runs (seconds per million calls). On a
-- large live table, create them by hand with CREATE INDEX CONCURRENTLY (same names) before
-- upgrading: IF NOT EXISTS then skips them here.

-- GET /api/v1/calls: a tenant's calls newest first, alone or by agent or user. Each index holds
-- every column the filter, the order and the page's ids need, so a page and its total are read
-- from the index alone (index-only scans), then only the page's rows from the table.
CREATE INDEX IF NOT EXISTS calls_tenant_created ON calls (tenant_id, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS calls_tenant_agent_created ON calls (tenant_id, agent_id, created_at DESC, id DESC);
CREATE INDEX IF NOT EXISTS calls_tenant_user_created ON calls (tenant_id, user_id, created_at DESC, id DESC);

-- Dispatch under a concurrency cap counts the calls dialling or talking, per agent and per
-- tenant, and wakes the oldest waiting ones: small partial indexes, only over live calls.
CREATE INDEX IF NOT EXISTS calls_agent_active ON calls (agent_id) WHERE status IN ('dialing', 'in_progress');
CREATE INDEX IF NOT EXISTS calls_tenant_active ON calls (tenant_id) WHERE status IN ('dialing', 'in_progress');
CREATE INDEX IF NOT EXISTS calls_agent_waiting ON calls (agent_id, created_at, id) WHERE status = 'queued';
CREATE INDEX IF NOT EXISTS calls_tenant_waiting ON calls (tenant_id, created_at, id) WHERE status = 'queued';

-- Idempotency keys of the call-trigger webhook are scoped to the webhook (`webhook:<id>`), not
-- to a tenant: the column now holds a scope, no longer always a tenant id.
ALTER TABLE idempotency_keys DROP CONSTRAINT IF EXISTS idempotency_keys_tenant_id_fkey;
