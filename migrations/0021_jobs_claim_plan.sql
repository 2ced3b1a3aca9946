-- A claim takes the earliest due jobs by walking jobs_due in (run_at, id) order, and stops after
-- the few it takes (migration 0007). The planner knows other ways: read the whole index into a
-- bitmap, visit every row it names and sort them all; or read the whole table. It picks them when
-- its statistics say the queue (or the table) is nearly empty, as they do in a calm hour or on a
-- new install, and a prepared statement keeps its plan: a burst of 60,000 jobs was then read whole
-- by every claim of 25 (20-40 ms each, against ~1 ms) until autovacuum next analyzed the table
-- (bench/README.md, "Stale queue plans"). The claim therefore runs in this function, whose
-- statement is planned under settings that disable those ways, so the walk and the primary key
-- are its plan whatever the statistics say.
CREATE FUNCTION claim_jobs(runner text, lease_until timestamptz, queues text[], due_by timestamptz, max_jobs integer)
RETURNS TABLE (id bigint, tenant_id text, queue text, payload jsonb, attempts integer, max_attempts integer)
LANGUAGE sql
VOLATILE
ROWS 25
SET enable_bitmapscan = off
SET enable_seqscan = off
SET enable_sort = off
AS $$
  UPDATE jobs SET status = 'running', attempts = jobs.attempts + 1, locked_by = runner, locked_until = lease_until
  WHERE jobs.id = ANY(ARRAY(
    SELECT due.id FROM jobs due
    WHERE due.queue = ANY(queues)
      AND ((due.status = 'queued' AND due.run_at <= due_by) OR (due.status = 'running' AND due.locked_until < due_by))
    ORDER BY due.run_at, due.id
    LIMIT max_jobs
    FOR UPDATE SKIP LOCKED
  ))
  RETURNING jobs.id, jobs.tenant_id, jobs.queue, jobs.payload, jobs.attempts, jobs.max_attempts
$$;
