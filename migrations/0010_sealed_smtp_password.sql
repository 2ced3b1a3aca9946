-- A tenant's SMTP password no longer lives in its SMTP URL: `email_smtp_url` keeps the URL without
-- the password, and the password is stored sealed (AES-256-GCM under SECRETS_KEY, format
-- `v1:<key id>:<iv>:<ciphertext>`, src/core/secrets.ts), so the database alone reveals none.
-- URLs written before this migration still hold their password in plain text: the server seals
-- them at start-up (src/tenants/secrets.ts), which SQL cannot do without the key.
ALTER TABLE tenants ADD COLUMN email_smtp_password_sealed text;
