-- Agents' engine-neutral configuration (docs/agents.md): voice, language, model, limits,
-- voicemail, transfer, tools, analysis.
--
-- agents.config holds what the draft sets (a partial object: a field absent takes its default,
-- the voice and model the tenant's default else the operator's, when read and when published);
-- agent_versions.config holds what a version froze (every field, from this migration on). Rows
-- that exist already get '{}': agents keep the defaults until edited, and the versions published
-- before configurations existed are read with the defaults of the platform they were published
-- on (the operator's voice and model), which is what their calls used.
--
-- ADD COLUMN with a constant default is a catalog change on PostgreSQL 11+: no table rewrite,
-- the ACCESS EXCLUSIVE lock is held for milliseconds whatever the table's size.
ALTER TABLE agents ADD COLUMN config jsonb NOT NULL DEFAULT '{}'::jsonb;
ALTER TABLE agent_versions ADD COLUMN config jsonb NOT NULL DEFAULT '{}'::jsonb;

-- Each tenant's default voice and model for its agents (null: the operator's). A new table.
CREATE TABLE agent_defaults (
  tenant_id text PRIMARY KEY REFERENCES tenants(id),
  voice jsonb,
  model jsonb,
  updated_at timestamptz NOT NULL
);
