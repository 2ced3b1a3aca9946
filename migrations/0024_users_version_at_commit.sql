-- The users_version/live_users bump (migration 0008) locked the tenant row from a user's insert
-- until its transaction committed, across every later statement of that transaction (the
-- membership, the `user.created` event, the recorded idempotent answer): one tenant's user
-- creations queued behind each other's round trips. pg_stat_statements over the bench's
-- users_create: the insert averaged 36 ms, 0.2 ms of it work (0.2 ms alone, pgbench).
-- Deferred to commit, the same bump takes the lock for the commit only. The version still moves
-- in the same transaction as the change, so a list statement's snapshot sees both or neither.
DROP TRIGGER users_bump_version ON users;
DROP TRIGGER users_bump_version_on_update ON users;

CREATE CONSTRAINT TRIGGER users_bump_version
  AFTER INSERT OR DELETE ON users
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW EXECUTE FUNCTION bump_users_version();

-- Only changes a list can see: a credit debit or a password change must not serialize on the
-- tenant row.
CREATE CONSTRAINT TRIGGER users_bump_version_on_update
  AFTER UPDATE ON users
  DEFERRABLE INITIALLY DEFERRED
  FOR EACH ROW
  WHEN (OLD.tenant_id IS DISTINCT FROM NEW.tenant_id
     OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at
     OR OLD.status IS DISTINCT FROM NEW.status
     OR OLD.name IS DISTINCT FROM NEW.name
     OR OLD.email IS DISTINCT FROM NEW.email)
  EXECUTE FUNCTION bump_users_version();
