-- Every call version writes an entry in each of the calls table's indexes, and a call is written
-- four times (queued, dialing, in progress, ended: status is in the partial indexes' predicates,
-- so no update is HOT). `calls_agent_created` repeated `calls_tenant_agent_created` for the
-- operator's list by agent alone; that list now resolves the agent's tenant first (an agent
-- belongs to one tenant for good, src/calls/service.ts), so the index only cost writes.
-- Dropping an index is a catalog change: the lock on `calls` is held for milliseconds.
DROP INDEX IF EXISTS calls_agent_created;
