-- A user invited from the console gets a `user_invitation` email (a link to choose a password on
-- the tenant's portal) instead of the welcome email. The outbox's kind CHECK is replaced by one
-- that also allows it: no table rewrite, one scan of the outbox to validate the new CHECK.
ALTER TABLE email_outbox DROP CONSTRAINT email_outbox_kind_check;
ALTER TABLE email_outbox ADD CONSTRAINT email_outbox_kind_check
  CHECK (kind IN ('welcome', 'password_reset', 'member_invitation', 'test', 'user_invitation')) NOT VALID;
ALTER TABLE email_outbox VALIDATE CONSTRAINT email_outbox_kind_check;
