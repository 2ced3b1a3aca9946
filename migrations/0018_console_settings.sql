-- The console's settings pages: emails that are not for a user (a member invitation, a test email)
-- go through the same durable outbox. `sender` says whose SMTP server sends the row: the tenant's
-- settings, or the platform's (PLATFORM_SMTP_URL) for an invitation of a tenant without settings.
ALTER TABLE email_outbox ALTER COLUMN user_id DROP NOT NULL;
ALTER TABLE email_outbox DROP CONSTRAINT email_outbox_kind_check;
ALTER TABLE email_outbox ADD CONSTRAINT email_outbox_kind_check
  CHECK (kind IN ('welcome', 'password_reset', 'member_invitation', 'test'));
ALTER TABLE email_outbox ADD COLUMN sender text NOT NULL DEFAULT 'tenant'
  CHECK (sender IN ('tenant', 'platform'));
-- A tenant's pending invitations, newest first, and the pending one of an email (superseded by a new one).
CREATE INDEX member_invitations_pending ON member_invitations (tenant_id, lower(email))
  WHERE accepted_at IS NULL AND revoked_at IS NULL;
