-- The agency console: a tenant's members (the agency's own staff, not its users), their browser
-- sessions and their invitations. A member email belongs to one tenant: sign-in needs no tenant.
CREATE TABLE members (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  email text NOT NULL,
  name text,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
  password_hash text NOT NULL,
  -- Sealed with SECRETS_KEY (src/core/secrets.ts); set once the member confirmed a first code.
  totp_secret text,
  totp_enabled_at timestamptz,
  -- Consecutive failed sign-ins, and the lock they caused (src/members/service.ts).
  failed_sign_ins integer NOT NULL DEFAULT 0,
  locked_until timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz
);
CREATE UNIQUE INDEX members_email_live ON members (lower(email)) WHERE deleted_at IS NULL;
CREATE INDEX members_tenant ON members (tenant_id, created_at, id) WHERE deleted_at IS NULL;

CREATE TABLE member_sessions (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  member_id text NOT NULL REFERENCES members(id),
  token_hash text NOT NULL UNIQUE,
  -- The password was right; the second factor is still owed before the session opens the console.
  awaiting_totp boolean NOT NULL DEFAULT false,
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX member_sessions_member ON member_sessions (member_id) WHERE revoked_at IS NULL;

CREATE TABLE member_invitations (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  email text NOT NULL,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'viewer')),
  token_hash text NOT NULL UNIQUE,
  invited_by text REFERENCES members(id),
  expires_at timestamptz NOT NULL,
  accepted_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX member_invitations_tenant ON member_invitations (tenant_id, created_at);
