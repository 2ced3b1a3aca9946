-- Sign-in hardening of the console (src/members/service.ts): wrong TOTP codes counted per session
-- awaiting its code (5, and the session ends), the last accepted TOTP time step per member (a
-- code is accepted once), and indexes for the maintenance job that deletes ended sessions (7 days
-- after) and used or expired invitations (30 days after).
ALTER TABLE member_sessions ADD COLUMN totp_failures integer NOT NULL DEFAULT 0;
ALTER TABLE members ADD COLUMN last_totp_step bigint;
CREATE INDEX member_sessions_expires ON member_sessions (expires_at);
CREATE INDEX member_sessions_revoked ON member_sessions (revoked_at) WHERE revoked_at IS NOT NULL;
CREATE INDEX member_invitations_expires ON member_invitations (expires_at);
