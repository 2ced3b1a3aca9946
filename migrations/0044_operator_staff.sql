-- The operator console (docs/operator-console.md): the operator's own staff, who sign in at
-- /operator with email, password and a TOTP code, their browser sessions and their invitations.
-- New tables only: nothing existing is rewritten or locked.
CREATE TABLE operator_staff (
  id text PRIMARY KEY,
  email text NOT NULL,
  name text,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'support')),
  -- Argon2id (src/core/security/passwords.ts).
  password_hash text NOT NULL,
  -- Sealed with SECRETS_KEY under the context operator_staff.totp:<id>; every staff account has one.
  totp_secret text NOT NULL,
  -- The last TOTP time step accepted at sign-in: a code is accepted once.
  last_totp_step bigint,
  failed_sign_ins integer NOT NULL DEFAULT 0,
  locked_until timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz
);
CREATE UNIQUE INDEX operator_staff_email_live ON operator_staff (lower(email)) WHERE deleted_at IS NULL;

CREATE TABLE operator_staff_sessions (
  id text PRIMARY KEY,
  staff_id text NOT NULL REFERENCES operator_staff(id),
  token_hash text NOT NULL UNIQUE,
  created_at timestamptz NOT NULL,
  last_seen_at timestamptz NOT NULL,
  expires_at timestamptz NOT NULL,
  revoked_at timestamptz
);
CREATE INDEX operator_staff_sessions_staff ON operator_staff_sessions (staff_id) WHERE revoked_at IS NULL;

CREATE TABLE operator_staff_invitations (
  id text PRIMARY KEY,
  email text NOT NULL,
  role text NOT NULL CHECK (role IN ('owner', 'admin', 'support')),
  token_hash text NOT NULL UNIQUE,
  invited_by text REFERENCES operator_staff(id),
  expires_at timestamptz NOT NULL,
  accepted_at timestamptz,
  revoked_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX operator_staff_invitations_created ON operator_staff_invitations (created_at);
