-- Workers claim the earliest due jobs of every queue they handle. Indexed by (queue, run_at), a
-- claim for several queues had to read and sort every queued job before taking ten of them, so
-- each claim grew with the backlog (2 ms at 2,500 queued jobs, ~20 ms at 25,000). In (run_at, id)
-- order, a claim reads the few rows it takes.
DROP INDEX jobs_claim;
CREATE INDEX jobs_due ON jobs (run_at, id) WHERE status IN ('queued', 'running');
