-- The Retell engine (platform.md §7, src/telephony/retell/adapter.ts): each published agent version
-- is synced once to a Retell LLM (its prompt and welcome message) and a Retell agent using it; calls
-- name that agent and version. One row per synced version, written after Retell created both, so a
-- row always points at objects that exist at Retell.
--
-- No foreign key to agent_versions: the row records what exists at Retell, which outlives anything
-- done to our agent (and the adapter owns it like the simulator owns telephony_simulated_dials).
CREATE TABLE retell_agent_versions (
  agent_id text NOT NULL,
  version integer NOT NULL,
  tenant_id text NOT NULL,
  llm_id text NOT NULL,
  llm_version integer,
  retell_agent_id text NOT NULL,
  retell_agent_version integer NOT NULL,
  synced_at timestamptz NOT NULL,
  PRIMARY KEY (agent_id, version)
);
