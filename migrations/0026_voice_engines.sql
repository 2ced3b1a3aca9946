-- Voice engines (platform.md §7, docs/engines.md): which engine placed a call, the engine's id for
-- it, and what it reported at the end. Nullable columns without defaults: PostgreSQL adds them
-- without rewriting the table, so this is safe on a large live calls table.
-- `engine` is null until an engine that reports by callback (vapi, retell) took the call; the API
-- shows the running engine's name for such calls (the simulator's calls keep it null).
ALTER TABLE calls ADD COLUMN engine text;
ALTER TABLE calls ADD COLUMN engine_call_id text;
ALTER TABLE calls ADD COLUMN transcript text;
ALTER TABLE calls ADD COLUMN recording_url text;

-- A callback that does not carry our call id finds the call by the engine's id. Only calls placed
-- by such an engine are in it (the simulator's never are), and the column it covers is written once.
-- Known cost: built inside the migration's transaction (a plain CREATE INDEX blocks writes to
-- `calls` while it runs; nearly instant while no call has an engine id). On a large live table,
-- create it first by hand: CREATE UNIQUE INDEX CONCURRENTLY calls_engine_call ON calls (engine, engine_call_id) WHERE engine_call_id IS NOT NULL;
CREATE UNIQUE INDEX IF NOT EXISTS calls_engine_call ON calls (engine, engine_call_id) WHERE engine_call_id IS NOT NULL;

-- Each request to an engine to place a call attempt, committed before the engine is asked: voice
-- engines take no idempotency key, so a dispatch that runs again (a crash, a lease taken over)
-- finds the row and never asks a second time (src/calls/engine-dials.ts). `engine_call_id` is the
-- engine's answer; null while unanswered or when the answer was lost (then the engine's callbacks,
-- which carry our call id, or the backstop decide).
CREATE TABLE engine_dials (
  call_id text NOT NULL,
  attempt integer NOT NULL,
  tenant_id text NOT NULL,
  engine text NOT NULL,
  requested_at timestamptz NOT NULL,
  engine_call_id text,
  PRIMARY KEY (call_id, attempt)
);
