-- Inbound calls (docs/phone-numbers.md). Every call has a direction; existing calls are outbound.
-- A constant default: PostgreSQL adds the column without rewriting the table, and the CHECK is
-- added NOT VALID (no scan of existing rows, which all hold the default), so this is safe on a
-- large live calls table.
ALTER TABLE calls ADD COLUMN direction text NOT NULL DEFAULT 'outbound';
ALTER TABLE calls ADD CONSTRAINT calls_direction_check CHECK (direction IN ('inbound', 'outbound')) NOT VALID;

-- An inbound call declined before any agent could take it (the number has none, or its agent was
-- deleted or never published) is still recorded, without an agent, a version or an owner.
-- Dropping NOT NULL is a catalog change: no scan, the lock is held for milliseconds.
ALTER TABLE calls ALTER COLUMN agent_id DROP NOT NULL;
ALTER TABLE calls ALTER COLUMN agent_version DROP NOT NULL;
ALTER TABLE calls ALTER COLUMN user_id DROP NOT NULL;

-- GET /api/v1/calls?direction=inbound: a tenant's inbound calls, newest first (the few among many).
-- Known cost: built inside the migration's transaction (a plain CREATE INDEX blocks writes to
-- `calls` while it reads the table). On a large live table, create it first by hand:
-- CREATE INDEX CONCURRENTLY calls_tenant_inbound_created ON calls (tenant_id, created_at DESC, id DESC) WHERE direction = 'inbound';
CREATE INDEX IF NOT EXISTS calls_tenant_inbound_created ON calls (tenant_id, created_at DESC, id DESC) WHERE direction = 'inbound';
