-- Retention of events (platform contract §3: the last 30 days): a recurring maintenance job
-- deletes older events with their deliveries in small batches (src/events/retention.ts). These
-- indexes let it find the oldest events without reading the table, and find (and check the
-- foreign key of) each event's deliveries without reading theirs.
CREATE INDEX events_created ON events (created_at, id);
CREATE INDEX event_deliveries_event ON event_deliveries (event_id);
