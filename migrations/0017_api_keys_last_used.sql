-- When each API key last authenticated a request: written by the key verifier at most once a
-- minute per key and process (src/api-keys/service.ts), so it is accurate to about a minute.
ALTER TABLE api_keys ADD COLUMN last_used_at timestamptz;
