-- Voice agents, their immutable published versions, the calls their webhooks place, and the
-- simulated telephony provider's own record of what it dialled.

CREATE TABLE agents (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  -- The owner: a user of the same tenant; its credits pay for the calls.
  user_id text NOT NULL REFERENCES users(id),
  name text NOT NULL,
  -- The webhook id is the credential of the trigger URL; rotating it replaces it at once.
  webhook_id text NOT NULL,
  draft_prompt text NOT NULL,
  draft_welcome_message text NOT NULL,
  draft_phone_number text NOT NULL,
  published_version integer,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE UNIQUE INDEX agents_webhook_id ON agents (webhook_id);
CREATE INDEX agents_tenant_user ON agents (tenant_id, user_id);

-- What a publish froze: calls always use one of these, never the draft.
CREATE TABLE agent_versions (
  tenant_id text NOT NULL REFERENCES tenants(id),
  agent_id text NOT NULL REFERENCES agents(id),
  version integer NOT NULL,
  prompt text NOT NULL,
  welcome_message text NOT NULL,
  phone_number text NOT NULL,
  published_at timestamptz NOT NULL,
  PRIMARY KEY (agent_id, version)
);

CREATE TABLE calls (
  id text PRIMARY KEY,
  tenant_id text NOT NULL,
  agent_id text NOT NULL,
  agent_version integer NOT NULL,
  user_id text NOT NULL,
  from_number text NOT NULL,
  to_number text NOT NULL,
  name text NOT NULL,
  email text,
  context jsonb NOT NULL,
  -- Rendered from the published version at trigger time.
  prompt text NOT NULL,
  welcome_message text NOT NULL,
  status text NOT NULL CHECK (status IN ('queued', 'dialing', 'in_progress', 'completed', 'no_answer', 'failed')),
  created_at timestamptz NOT NULL,
  started_at timestamptz,
  ended_at timestamptz,
  duration_seconds integer,
  failure_reason text,
  updated_at timestamptz NOT NULL
);
-- The webhook's hot path writes here: only the indexes the operator lists need.
CREATE INDEX calls_created ON calls (created_at DESC, id DESC);
CREATE INDEX calls_agent_created ON calls (agent_id, created_at DESC, id DESC);

-- The simulated provider's side (TELEPHONY=simulated): one row per call id it was asked to dial,
-- since the call id is the idempotency key; dial_requests counts how often it was asked.
CREATE TABLE telephony_simulated_dials (
  call_id text PRIMARY KEY,
  tenant_id text NOT NULL,
  from_number text NOT NULL,
  to_number text NOT NULL,
  outcome text NOT NULL CHECK (outcome IN ('answered', 'no_answer', 'failed')),
  failure_reason text,
  answered_at timestamptz,
  duration_seconds integer,
  ends_at timestamptz,
  dial_requests integer NOT NULL DEFAULT 1,
  dialled_by text NOT NULL,
  created_at timestamptz NOT NULL,
  last_requested_at timestamptz NOT NULL
);
