-- Welcome emails: a durable outbox. The row is written in the user-creation transaction together
-- with its delivery job; the job sends it through the tenant's SMTP server. The content is
-- rendered when the row is written, so every attempt sends the same message with the same
-- Message-ID (a duplicate after a crash between send and acknowledgement is recognisable).
CREATE TABLE email_outbox (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  user_id text NOT NULL REFERENCES users(id),
  kind text NOT NULL CHECK (kind IN ('welcome')),
  to_address text NOT NULL,
  to_name text,
  subject text NOT NULL,
  text_body text NOT NULL,
  html_body text NOT NULL,
  message_id text NOT NULL UNIQUE,
  status text NOT NULL CHECK (status IN ('pending', 'sent', 'failed')),
  -- SMTP delivery attempts made so far.
  attempts integer NOT NULL DEFAULT 0,
  last_error text,
  -- Held by the attempt in progress, so two workers never send the same row at once.
  locked_until timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  sent_at timestamptz
);
-- One email of each kind per user.
CREATE UNIQUE INDEX email_outbox_user_kind ON email_outbox (tenant_id, user_id, kind);
CREATE INDEX email_outbox_tenant_created ON email_outbox (tenant_id, created_at, id);
