-- The console's delivery detail, resend and revenue.
--
-- A delivery keeps what its last attempt sent and got back: the request's headers (the body is
-- the event's, rebuilt from it), the answer's headers and its first 4 KiB (a delivery never reads
-- more), or the reason there was no answer. `resent_from` names the delivery a resend copied (a new
-- delivery of the same event to the same endpoint). Nullable columns without defaults: a catalog
-- change only, no rewrite of the table.
ALTER TABLE event_deliveries
  ADD COLUMN last_request_headers jsonb,
  ADD COLUMN last_response_headers jsonb,
  ADD COLUMN last_response_body text,
  ADD COLUMN last_error text,
  ADD COLUMN resent_from text;

-- What each paid subscription period was billed: the plan's monthly price in force when the
-- period started, written in the transaction that grants the period's minutes (once per
-- subscription and period, like that grant). Trial periods bill nothing and are not written. The
-- overview sums a month of them by created_at, beside the month's top-ups and overage.
CREATE TABLE subscription_charges (
  tenant_id text NOT NULL REFERENCES tenants(id),
  user_id text NOT NULL REFERENCES users(id),
  subscription_id text NOT NULL REFERENCES subscriptions(id),
  plan_id text NOT NULL REFERENCES plans(id),
  period_start timestamptz NOT NULL,
  -- The plan's monthly_price, in the currency's minor unit.
  amount bigint NOT NULL CHECK (amount >= 0),
  currency text NOT NULL,
  provider text NOT NULL CHECK (provider IN ('processor', 'agency')),
  created_at timestamptz NOT NULL,
  PRIMARY KEY (subscription_id, period_start)
);
CREATE INDEX subscription_charges_tenant_created ON subscription_charges (tenant_id, created_at);
