-- The audit log (docs/audit.md): one row per write by an operator, a console member, an API
-- key or the CLI, inserted in the transaction of the change itself. A new table: nothing existing
-- is rewritten or locked.
--
-- Append-only: a trigger refuses every UPDATE, and every DELETE except the retention purge's,
-- which announces itself with `SET LOCAL voiceplane.audit_purge = 'on'` in its own transaction.
-- Rows hold field names, never values: no secret can reach this table.
CREATE TABLE audit_events (
  id text PRIMARY KEY,
  tenant_id text,
  actor_type text NOT NULL,
  actor_id text NOT NULL,
  action text NOT NULL,
  object_type text NOT NULL,
  object_id text,
  fields text[] NOT NULL DEFAULT '{}',
  ip text,
  user_agent text,
  request_id text,
  created_at timestamptz NOT NULL
);

-- The lists read newest first, each filter beside the tenant (partners, console) or alone (operator).
CREATE INDEX audit_events_tenant_time ON audit_events (tenant_id, created_at DESC, id DESC);
CREATE INDEX audit_events_time ON audit_events (created_at DESC, id DESC);
CREATE INDEX audit_events_actor ON audit_events (actor_id, created_at DESC, id DESC);
CREATE INDEX audit_events_action ON audit_events (action, created_at DESC, id DESC);
CREATE INDEX audit_events_object ON audit_events (object_id, created_at DESC, id DESC);

CREATE FUNCTION audit_events_append_only() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF TG_OP = 'DELETE' AND current_setting('voiceplane.audit_purge', true) = 'on' THEN
    RETURN OLD;
  END IF;
  RAISE EXCEPTION 'audit_events is append-only (% refused)', TG_OP USING ERRCODE = 'insufficient_privilege';
END;
$$;

CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
  FOR EACH ROW EXECUTE FUNCTION audit_events_append_only();
