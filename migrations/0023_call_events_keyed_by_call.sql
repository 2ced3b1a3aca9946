-- call_events had two indexes: its primary key on id, which nothing reads by, and (call_id, id),
-- which every timeline read uses. The second, made unique, is now the primary key: each timeline
-- row (three or four per call, written on the call pipeline's hot path) writes one index entry
-- instead of two.
--
-- Known cost: the unique index is built inside the migration's transaction, which blocks writes
-- to call_events while it reads the table (seconds per million rows). On a large live table,
-- build it by hand first with
--   CREATE UNIQUE INDEX CONCURRENTLY call_events_call_id_key ON call_events (call_id, id);
-- and IF NOT EXISTS skips it here; the rest only changes the catalog.
CREATE UNIQUE INDEX IF NOT EXISTS call_events_call_id_key ON call_events (call_id, id);
ALTER TABLE call_events DROP CONSTRAINT call_events_pkey;
ALTER TABLE call_events ADD CONSTRAINT call_events_pkey PRIMARY KEY USING INDEX call_events_call_id_key;
DROP INDEX call_events_call;
