-- The calls interface (partner API agents and calls, call controls, the do-not-call list).
-- Every ADD COLUMN here is either nullable or has a constant default: PostgreSQL adds such a
-- column without rewriting the table, so this is safe on a large live calls table.

-- Agents: call controls (max_concurrent_calls, calling_hours, retry: src/agents/settings.ts),
-- validated by the API before they are stored; and soft deletion (the webhook answers 404, the
-- agent's calls stay readable).
ALTER TABLE agents ADD COLUMN settings jsonb NOT NULL DEFAULT '{}';
ALTER TABLE agents ADD COLUMN deleted_at timestamptz;

-- A tenant-wide cap on calls dialling or in progress at once, set by the operator; null: none.
ALTER TABLE tenants ADD COLUMN max_concurrent_calls integer CHECK (max_concurrent_calls >= 1);

-- Calls: when a waiting call may start (calling hours, retry delay), how many dial attempts were
-- made, what was billed and why the call ended.
ALTER TABLE calls ADD COLUMN scheduled_for timestamptz;
ALTER TABLE calls ADD COLUMN attempts integer NOT NULL DEFAULT 0;
ALTER TABLE calls ADD COLUMN billed_minutes integer;
ALTER TABLE calls ADD COLUMN ended_reason text;

-- Each status change of a call with its time: the timeline of GET /api/v1/calls/{id}.
CREATE TABLE call_events (
  id bigserial PRIMARY KEY,
  tenant_id text NOT NULL,
  call_id text NOT NULL,
  status text NOT NULL,
  at timestamptz NOT NULL,
  -- e.g. { "attempt": 2 }, { "reason": "no_answer" }, { "scheduled_for": "…" }
  detail jsonb NOT NULL DEFAULT '{}'
);
CREATE INDEX call_events_call ON call_events (call_id, id);

-- A tenant's do-not-call list: E.164 numbers no call may be placed to.
CREATE TABLE do_not_call (
  tenant_id text NOT NULL REFERENCES tenants(id),
  phone_number text NOT NULL,
  reason text,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, phone_number)
);
