-- Exactly one engine call per call attempt, across crashes (docs/engines.md, src/calls/engine-dials.ts).
-- A claimed dial whose outcome is unknown is resolved by asking the engine what it holds for the
-- attempt; when it holds nothing, the same claim is sent again. `requests` counts the requests
-- sent under the claim, and is how a second sender is kept out (it is compared and increased in
-- the statement that re-sends). A constant default: added without rewriting the table.
ALTER TABLE engine_dials ADD COLUMN requests integer NOT NULL DEFAULT 1;

-- The simulator keeps one record per call attempt, as a voice engine keeps one call per request:
-- the pipeline finds an attempt's record when the outcome of its dial is unknown. Existing records
-- become attempt 1 (a retried call's earlier attempts shared one record).
-- Known cost: the new primary key's index is built inside the migration's transaction, blocking
-- writes to the table while it runs; the table only holds the simulator's dials (development and
-- test deployments, TELEPHONY=simulated).
ALTER TABLE telephony_simulated_dials ADD COLUMN attempt integer NOT NULL DEFAULT 1;
ALTER TABLE telephony_simulated_dials DROP CONSTRAINT telephony_simulated_dials_pkey;
ALTER TABLE telephony_simulated_dials ADD PRIMARY KEY (call_id, attempt);
