-- User lists answer an exact `total` (decisions.md §2). Counting a broad search visits every
-- match, so processes remember the totals they counted, keyed by the tenant's users_version: a
-- trigger bumps it, in the same transaction, on every change that can move a user in or out of
-- a list (insert, delete, soft delete, status, name, email). A list statement reads the counter
-- in its own snapshot, so a remembered total is used only when it is exactly the current one
-- (src/users/list-totals.ts). live_users (users not deleted) is maintained alongside: it tells
-- how selective a search is, to pick the cheaper way of finding its page. The price: writes to
-- one tenant's users queue on its tenant row until they commit (short: a password is hashed
-- before its transaction starts).
ALTER TABLE tenants
  ADD COLUMN users_version bigint NOT NULL DEFAULT 0,
  ADD COLUMN live_users bigint NOT NULL DEFAULT 0;

UPDATE tenants t SET live_users = (
  SELECT count(*) FROM users u WHERE u.tenant_id = t.id AND u.deleted_at IS NULL
);

CREATE FUNCTION bump_users_version() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'UPDATE' AND OLD.tenant_id = NEW.tenant_id THEN
    UPDATE tenants
      SET users_version = users_version + 1,
          live_users = live_users + (CASE WHEN NEW.deleted_at IS NULL THEN 1 ELSE 0 END)
                                  - (CASE WHEN OLD.deleted_at IS NULL THEN 1 ELSE 0 END)
      WHERE id = NEW.tenant_id;
    RETURN NULL;
  END IF;
  IF TG_OP IN ('UPDATE', 'DELETE') THEN
    UPDATE tenants
      SET users_version = users_version + 1,
          live_users = live_users - (CASE WHEN OLD.deleted_at IS NULL THEN 1 ELSE 0 END)
      WHERE id = OLD.tenant_id;
  END IF;
  IF TG_OP IN ('UPDATE', 'INSERT') THEN
    UPDATE tenants
      SET users_version = users_version + 1,
          live_users = live_users + (CASE WHEN NEW.deleted_at IS NULL THEN 1 ELSE 0 END)
      WHERE id = NEW.tenant_id;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER users_bump_version
  AFTER INSERT OR DELETE ON users
  FOR EACH ROW EXECUTE FUNCTION bump_users_version();

-- Only changes a list can see: a credit debit or a password change must not serialize on the
-- tenant row.
CREATE TRIGGER users_bump_version_on_update
  AFTER UPDATE ON users
  FOR EACH ROW
  WHEN (OLD.tenant_id IS DISTINCT FROM NEW.tenant_id
     OR OLD.deleted_at IS DISTINCT FROM NEW.deleted_at
     OR OLD.status IS DISTINCT FROM NEW.status
     OR OLD.name IS DISTINCT FROM NEW.name
     OR OLD.email IS DISTINCT FROM NEW.email)
  EXECUTE FUNCTION bump_users_version();

-- TRUNCATE fires no row triggers: recount every tenant. The same hole existed for plans_version
-- (migration 0006).
CREATE FUNCTION recount_users_after_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE tenants SET users_version = users_version + 1, live_users = 0;
  RETURN NULL;
END
$$;

CREATE TRIGGER users_truncated
  AFTER TRUNCATE ON users
  FOR EACH STATEMENT EXECUTE FUNCTION recount_users_after_truncate();

CREATE FUNCTION bump_plans_version_after_truncate() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  UPDATE tenants SET plans_version = plans_version + 1;
  RETURN NULL;
END
$$;

CREATE TRIGGER plans_truncated
  AFTER TRUNCATE ON plans
  FOR EACH STATEMENT EXECUTE FUNCTION bump_plans_version_after_truncate();
