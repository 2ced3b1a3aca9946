-- Events: signed webhooks to partners. An event and one delivery per subscribed endpoint are
-- written in the transaction of the change that causes them (outbox); each delivery is sent by
-- its own job (queue events.deliver). Endpoint secrets are sealed (src/core/secrets.ts): a
-- database dump alone does not reveal them.
CREATE TABLE webhook_endpoints (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  url text NOT NULL,
  -- Event type names, or ["*"] for every type.
  events jsonb NOT NULL,
  description text,
  enabled boolean NOT NULL DEFAULT true,
  -- When consecutive failures began; null while the endpoint answers.
  failing_since timestamptz,
  secret_sealed text NOT NULL,
  -- After a rotation the old secret keeps signing beside the new one until it expires.
  previous_secret_sealed text,
  previous_secret_expires_at timestamptz,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  deleted_at timestamptz
);
CREATE INDEX webhook_endpoints_tenant ON webhook_endpoints (tenant_id, created_at DESC, id DESC)
  WHERE deleted_at IS NULL;

CREATE TABLE events (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  type text NOT NULL,
  created_at timestamptz NOT NULL,
  data jsonb NOT NULL
);
CREATE INDEX events_tenant_created ON events (tenant_id, created_at DESC, id DESC);

CREATE TABLE event_deliveries (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  endpoint_id text NOT NULL REFERENCES webhook_endpoints(id),
  event_id text NOT NULL REFERENCES events(id),
  status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'failed')),
  attempts integer NOT NULL DEFAULT 0,
  last_attempt_at timestamptz,
  last_response_code integer,
  next_attempt_at timestamptz,
  created_at timestamptz NOT NULL
);
CREATE INDEX event_deliveries_endpoint ON event_deliveries (tenant_id, endpoint_id, created_at DESC, id DESC);

-- credits.low: a user's balance crossed below this many minutes (null: no such event).
ALTER TABLE tenants ADD COLUMN low_balance_minutes integer;
