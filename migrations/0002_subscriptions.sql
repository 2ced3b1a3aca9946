-- Subscriptions and the billing engine: processor references on subscriptions, the processor's
-- customers and prices, plan-change operations (atomic phases across the database and the
-- processor), and the state of the built-in simulated processor.

ALTER TABLE subscriptions
  -- The processor's subscription item (its price is swapped on a plan change).
  ADD COLUMN provider_item_id text,
  -- Periods are calendar months counted from this anchor (trial end, or the first period start);
  -- null means current_period_start.
  ADD COLUMN billing_anchor timestamptz,
  ADD COLUMN trial_end timestamptz,
  ADD COLUMN canceled_at timestamptz;
CREATE INDEX subscriptions_tenant_plan ON subscriptions (tenant_id, plan_id);
CREATE INDEX subscriptions_provider_ref ON subscriptions (provider_subscription_id) WHERE provider_subscription_id IS NOT NULL;

-- A user's customer record at the card processor, and the card on file.
CREATE TABLE billing_customers (
  tenant_id text NOT NULL REFERENCES tenants(id),
  user_id text NOT NULL REFERENCES users(id),
  processor text NOT NULL,
  customer_id text NOT NULL,
  payment_method_id text,
  card_brand text,
  card_last4 text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, user_id, processor)
);

-- The processor's recurring monthly price for a plan at a given amount (created on first use).
CREATE TABLE billing_prices (
  tenant_id text NOT NULL REFERENCES tenants(id),
  plan_id text NOT NULL REFERENCES plans(id),
  processor text NOT NULL,
  currency text NOT NULL,
  unit_amount bigint NOT NULL,
  price_id text NOT NULL,
  created_at timestamptz NOT NULL,
  PRIMARY KEY (tenant_id, plan_id, processor, currency, unit_amount)
);
CREATE INDEX billing_prices_price ON billing_prices (processor, price_id);

-- Subscription creations and plan changes. A processor-billed one is written (pending) before the
-- processor is called and marked applied with the local change, so a retry with the same
-- Idempotency-Key resumes it with the same processor idempotency key, and a reconciliation job
-- adopts what the processor did when no retry comes.
CREATE TABLE subscription_operations (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  user_id text NOT NULL REFERENCES users(id),
  -- The subscription changed (null for a creation until it is applied).
  subscription_id text,
  kind text NOT NULL CHECK (kind IN ('create', 'upgrade', 'downgrade')),
  provider text NOT NULL,
  from_plan_id text,
  to_plan_id text NOT NULL REFERENCES plans(id),
  -- sha256 of the partner's Idempotency-Key and of the request it came with (null without a key).
  idempotency_ref text,
  request_hash text NOT NULL,
  processor_key text NOT NULL,
  status text NOT NULL CHECK (status IN ('pending', 'applied', 'abandoned')),
  -- The subscription answered to the partner (for an agency downgrade, the new one).
  result_subscription_id text,
  answer_status integer,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX subscription_operations_ref ON subscription_operations (tenant_id, idempotency_ref) WHERE idempotency_ref IS NOT NULL;
CREATE INDEX subscription_operations_pending ON subscription_operations (tenant_id, user_id) WHERE status = 'pending';

-- The built-in simulated card processor keeps its objects (customers, cards, prices,
-- subscriptions, invoices, idempotency records) here, as Stripe keeps them on its side.
CREATE TABLE simulated_processor_objects (
  id text PRIMARY KEY,
  kind text NOT NULL,
  tenant_id text,
  doc jsonb NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);
CREATE INDEX simulated_processor_objects_kind ON simulated_processor_objects (kind, tenant_id);
