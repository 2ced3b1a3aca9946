-- What a call's end teaches beyond its status (docs/calls.md, "Outcomes"): who answered, the
-- engine's analysis fitted to the agent's configured fields, where the call was transferred, and
-- the engine's own cost and duration (shown to the operator only).
--
-- Every column is nullable without a default: a catalog change, no table rewrite and no scan,
-- whatever the size of `calls`. Existing calls read as answered_by `unknown` (null is shown so)
-- and without analysis, transfer or engine cost.
ALTER TABLE calls ADD COLUMN answered_by text;
ALTER TABLE calls ADD COLUMN analysis jsonb;
ALTER TABLE calls ADD COLUMN transferred_to text;
ALTER TABLE calls ADD COLUMN engine_cost_usd double precision;
ALTER TABLE calls ADD COLUMN engine_duration_seconds double precision;

-- The simulator's faithful demo (src/telephony/simulated.ts): the conversation it scripts for an
-- answered attempt (transcript, outcome, analysis) and the unguessable token of its recording's
-- URL. The table only holds the simulator's dials (development and demo deployments); the index
-- is built inside the migration's transaction, blocking writes to that table while it runs.
ALTER TABLE telephony_simulated_dials ADD COLUMN conversation jsonb;
ALTER TABLE telephony_simulated_dials ADD COLUMN recording_token text;
CREATE UNIQUE INDEX telephony_simulated_dials_recording ON telephony_simulated_dials (recording_token)
  WHERE recording_token IS NOT NULL;
