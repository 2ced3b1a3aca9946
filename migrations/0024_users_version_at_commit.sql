-- The users_version/live_users bump (migration 0008) locked the tenant row from a user's insert
-- until its transaction committed, across every later statement of that transaction (the
-- membership, the `user.created` event, the recorded idempotent answer): one tenant's user
-- creations queued behind each other's round trips. pg_stat_statements over the bench's
-- users_create: the insert averaged 36 ms, 0.2 ms of it work (0.2 ms alone, pgbench).
-- Deferred to commit, the same bump takes the lock for the commit only. The version still moves
-- in the same transaction as the change, so a list statement's snapshot sees both or neither.
--
-- Only for inserts: nobody else can lock a row that is not committed yet, so taking the tenant
-- row last cannot close a cycle. Updates and deletes keep the bump where the change is made: a
-- user's removal locks the user row first, and the call pipeline locks the tenant row before a
-- user's balance (src/calls/dispatch-repository.ts); deferred, the two would deadlock at commit.
-- The insert trigger keeps the name bulk loads disable (bench/seed.ts).
DROP TRIGGER users_bump_version ON users;

CREATE CONSTRAINT TRIGGER users_bump_version
  AFTER INSERT ON users
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION bump_users_version();

CREATE TRIGGER users_bump_version_on_delete
  AFTER DELETE ON users
  FOR EACH ROW EXECUTE FUNCTION bump_users_version();
