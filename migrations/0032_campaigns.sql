-- Campaigns (batch calls, docs/campaigns.md): a list of recipients one agent calls, dispatched by
-- a scheduler job per campaign through the call pipeline. A recipient becomes at most one call per
-- attempt: the job claims pending rows (FOR UPDATE SKIP LOCKED), stores each call with the guarded
-- insert and sets the row's call_id in the same transaction.
CREATE TABLE campaigns (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  agent_id text NOT NULL REFERENCES agents(id),
  name text NOT NULL,
  status text NOT NULL CHECK (status IN ('draft', 'scheduled', 'running', 'paused', 'completed', 'canceled')),
  -- Set while paused: manual, insufficient_credits, tenant_balance_exhausted, agent_unavailable.
  pause_reason text,
  scheduled_at timestamptz,
  -- { max_concurrent_calls?, calling_hours?, retry? } as given at creation.
  settings jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- The scheduler's live chain: only the tick job carrying this token acts; arming a new tick
  -- (start, resume, retry, each tick's next) replaces it, so a superseded job ends as a no-op.
  tick_token text,
  -- The next recipient's position (recipients are numbered in upload order).
  next_position integer NOT NULL DEFAULT 1,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  started_at timestamptz,
  finished_at timestamptz
);

-- GET /campaigns: newest first, ties broken by id.
CREATE INDEX campaigns_list ON campaigns (tenant_id, created_at DESC, id DESC);

CREATE TABLE campaign_recipients (
  campaign_id text NOT NULL REFERENCES campaigns(id),
  position integer NOT NULL,
  tenant_id text NOT NULL,
  phone_number text NOT NULL,
  name text NOT NULL DEFAULT '',
  email text,
  context jsonb NOT NULL DEFAULT '{}'::jsonb,
  -- Where the row came from: its 1-based place in the JSON list, or its line in the CSV file.
  line integer NOT NULL,
  -- pending: to be called; calling: has a call (final or not, reads join the call);
  -- done: its call ended (outcome copied); skipped: refused at dial time (skip_reason); canceled.
  status text NOT NULL CHECK (status IN ('pending', 'calling', 'done', 'skipped', 'canceled')),
  skip_reason text,
  -- The latest call (a retry replaces it) and how many calls the row has had.
  call_id text,
  outcome text,
  attempts integer NOT NULL DEFAULT 0,
  -- A campaign retry waits until then.
  not_before timestamptz,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (campaign_id, position),
  UNIQUE (campaign_id, phone_number)
);

-- The scheduler's claim (pending rows in order) and its count of calls in flight.
CREATE INDEX campaign_recipients_pending ON campaign_recipients (campaign_id, position) WHERE status = 'pending';
CREATE INDEX campaign_recipients_calling ON campaign_recipients (campaign_id) WHERE status = 'calling';
