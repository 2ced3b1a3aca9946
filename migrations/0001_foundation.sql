-- Foundation: tenants, API keys, users and their sessions, plans, the subscriptions table the
-- billing engine fills, the credit ledger, idempotency records and the durable job queue.
CREATE EXTENSION IF NOT EXISTS pg_trgm;

CREATE TABLE tenants (
  id text PRIMARY KEY,
  name text NOT NULL,
  email_smtp_url text,
  email_from text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

CREATE TABLE api_keys (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  name text,
  env text NOT NULL CHECK (env IN ('live', 'test')),
  scopes text[] NOT NULL,
  key_hash text NOT NULL UNIQUE,
  expires_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX api_keys_tenant ON api_keys (tenant_id);

CREATE TABLE users (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  email text NOT NULL,
  name text,
  phone text,
  status text NOT NULL CHECK (status IN ('active', 'pending', 'blocked')),
  password_hash text,
  credit_balance_minutes integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz
);
-- Emails are unique per tenant, case-insensitively, among users that are not deleted.
CREATE UNIQUE INDEX users_tenant_email_live ON users (tenant_id, lower(email)) WHERE deleted_at IS NULL;
CREATE INDEX users_tenant_created ON users (tenant_id, created_at, id) WHERE deleted_at IS NULL;
CREATE INDEX users_tenant_name ON users (tenant_id, name, id) WHERE deleted_at IS NULL;
CREATE INDEX users_search_name ON users USING gin (lower(name) gin_trgm_ops) WHERE deleted_at IS NULL;
CREATE INDEX users_search_email ON users USING gin (lower(email) gin_trgm_ops) WHERE deleted_at IS NULL;

-- A user's membership of the tenant's white-label dashboard; removed when the user is deleted.
CREATE TABLE memberships (
  tenant_id text NOT NULL REFERENCES tenants(id),
  user_id text NOT NULL REFERENCES users(id),
  role text NOT NULL DEFAULT 'member',
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, user_id)
);

CREATE TABLE sessions (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  user_id text NOT NULL REFERENCES users(id),
  token_hash text NOT NULL UNIQUE,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX sessions_user ON sessions (tenant_id, user_id);

CREATE TABLE plans (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  name text NOT NULL,
  description text,
  active boolean NOT NULL DEFAULT true,
  provider text NOT NULL CHECK (provider IN ('processor', 'agency')),
  currency text NOT NULL,
  monthly_price bigint NOT NULL,
  annual_price bigint NOT NULL,
  included_minutes integer NOT NULL,
  overage_rate numeric(14, 6) NOT NULL,
  topup_rate numeric(14, 6) NOT NULL,
  trial_period_days integer NOT NULL DEFAULT 0,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  archived_at timestamptz
);
CREATE INDEX plans_tenant_created ON plans (tenant_id, created_at, id);

CREATE TABLE subscriptions (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  user_id text NOT NULL REFERENCES users(id),
  plan_id text NOT NULL REFERENCES plans(id),
  -- Internal status: the public enum plus processor states (incomplete, incomplete_expired) and
  -- tombstones, which the API reports as inactive.
  status text NOT NULL,
  provider text NOT NULL CHECK (provider IN ('processor', 'agency', 'marketplace', 'custom')),
  provider_subscription_id text,
  cancel_at_period_end boolean NOT NULL DEFAULT false,
  current_period_start timestamptz NOT NULL,
  current_period_end timestamptz NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX subscriptions_tenant_created ON subscriptions (tenant_id, created_at, id);
CREATE INDEX subscriptions_user ON subscriptions (tenant_id, user_id, status);

-- Credits, in minutes: an append-only ledger; users.credit_balance_minutes is its running sum,
-- updated in the same transaction as each entry.
CREATE TABLE credit_ledger (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  user_id text NOT NULL REFERENCES users(id),
  minutes integer NOT NULL,
  reason text,
  -- Makes a grant or debit happen once (e.g. 'call:<id>', 'period:<sub>:<start>').
  reference text UNIQUE,
  created_at timestamptz NOT NULL
);
CREATE INDEX credit_ledger_user ON credit_ledger (tenant_id, user_id, created_at);

CREATE TABLE idempotency_keys (
  tenant_id text NOT NULL REFERENCES tenants(id),
  key text NOT NULL,
  fingerprint text NOT NULL,
  -- executing: a request owns the key (until locked_until); completed: response_* is the answer.
  status text NOT NULL CHECK (status IN ('executing', 'completed')),
  owner text NOT NULL,
  locked_until timestamptz NOT NULL,
  -- Where a multi-phase request (database, then processor) got to; see the subscriptions service.
  recovery_point text,
  recovery_data jsonb,
  response_status integer,
  response_body jsonb,
  response_headers jsonb,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, key)
);
CREATE INDEX idempotency_keys_created ON idempotency_keys (created_at);

CREATE TABLE jobs (
  id bigserial PRIMARY KEY,
  tenant_id text,
  queue text NOT NULL,
  payload jsonb NOT NULL DEFAULT '{}',
  status text NOT NULL CHECK (status IN ('queued', 'running', 'done', 'failed')),
  run_at timestamptz NOT NULL,
  attempts integer NOT NULL DEFAULT 0,
  max_attempts integer NOT NULL DEFAULT 10,
  locked_by text,
  locked_until timestamptz,
  last_error text,
  -- At most one queued or running job per singleton key (recurring and de-duplicated work).
  singleton_key text,
  created_at timestamptz NOT NULL,
  finished_at timestamptz
);
CREATE INDEX jobs_claim ON jobs (queue, run_at) WHERE status IN ('queued', 'running');
CREATE UNIQUE INDEX jobs_singleton ON jobs (singleton_key) WHERE singleton_key IS NOT NULL AND status IN ('queued', 'running');
