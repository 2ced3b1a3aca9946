-- Password resets by email: a single-use token, stored as its SHA-256 (the token itself only
-- travels in the email), valid for one hour. Using one, or any successful reset of the user,
-- sets used_at on every outstanding token of that user.
CREATE TABLE password_resets (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  user_id text NOT NULL REFERENCES users(id),
  token_hash text NOT NULL UNIQUE,
  expires_at timestamptz NOT NULL,
  used_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX password_resets_user ON password_resets (tenant_id, user_id);

-- The reset email goes through the welcome email's outbox. A user gets one welcome email but
-- may ask for any number of resets, so only welcome emails stay unique per user.
ALTER TABLE email_outbox DROP CONSTRAINT email_outbox_kind_check;
ALTER TABLE email_outbox ADD CONSTRAINT email_outbox_kind_check CHECK (kind IN ('welcome', 'password_reset'));
DROP INDEX email_outbox_user_kind;
CREATE UNIQUE INDEX email_outbox_user_welcome ON email_outbox (tenant_id, user_id) WHERE kind = 'welcome';
