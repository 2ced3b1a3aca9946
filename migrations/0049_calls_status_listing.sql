-- GET /api/v1/calls?status=completed|no_answer|failed (and the consoles' status filter): a
-- tenant's finished calls of one status, newest first, from the index alone (the page's ids and
-- its bounded total, docs/calls.md "Listing at scale"). Without it a status filter walks the
-- tenant's calls in time order and reads each row to test its status: on a rare status, tens of
-- rows per listed call.
-- Partial over the final statuses: a call is written four times (queued, dialing, in_progress,
-- final) and only its final version enters this index, one index entry per call. Queued, dialing
-- and in_progress calls are listed from the small partial indexes of migration 0014.
--
-- Known cost: built inside the migration's transaction (a plain CREATE INDEX blocks writes to
-- `calls` while it reads the table: seconds per million calls). On a large live table, create it
-- first by hand (IF NOT EXISTS then skips it here):
-- CREATE INDEX CONCURRENTLY calls_tenant_final_status_created ON calls (tenant_id, status, created_at DESC, id DESC) WHERE status IN ('completed', 'no_answer', 'failed');
CREATE INDEX IF NOT EXISTS calls_tenant_final_status_created
  ON calls (tenant_id, status, created_at DESC, id DESC)
  WHERE status IN ('completed', 'no_answer', 'failed');
