-- The recurring maintenance jobs (services.ts scheduleRecurring) are now queued with attempts
-- without limit, so a database outage delays them instead of ending their chain. A run queued by
-- an earlier version still has the default ten: give it the new limit too. Only queued and running
-- rows are touched (the jobs_due partial index finds them), a handful.
UPDATE jobs SET max_attempts = 2147483647
WHERE status IN ('queued', 'running') AND queue LIKE 'maintenance.%';
