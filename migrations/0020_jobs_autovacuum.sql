-- The jobs table is a queue: each job is inserted, updated twice (running, then done) and deleted
-- days later, so it fills with dead row versions far faster than an ordinary table. A claim walks
-- the jobs_due index in run_at order and steps over the dead entries of the jobs finished before
-- it until vacuum removes them: right after 40,000 calls were dispatched, event deliveries ran at
-- ~1,300-1,500/s, and at ~2,050/s once the table was vacuumed (bench/README.md). PostgreSQL's
-- default waits until a fifth of a table is dead; vacuum this one after a few thousand dead rows,
-- unthrottled. Storage parameters only: no rewrite, and the lock taken blocks no reads or writes.
ALTER TABLE jobs SET (
  autovacuum_vacuum_scale_factor = 0.01,
  autovacuum_vacuum_threshold = 2000,
  autovacuum_vacuum_cost_delay = 0,
  autovacuum_analyze_scale_factor = 0.05
);
