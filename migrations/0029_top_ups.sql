-- Retail top-ups (platform.md §6, docs/top-ups.md): minutes a user buys on top of the plan's.
-- A processor-billed top-up is written pending before the card is charged and settled with the
-- processor's answer (succeeded: the minutes are credited in the same transaction; declined), so a
-- retry with the same Idempotency-Key resumes it with the same processor idempotency key, and a
-- reconciliation job adopts what the processor did when no retry comes. An agency-billed top-up is
-- written succeeded with its credit at once.
CREATE TABLE top_ups (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  user_id text NOT NULL REFERENCES users(id),
  -- The subscription and plan whose topup_rate priced it.
  subscription_id text NOT NULL REFERENCES subscriptions(id),
  plan_id text NOT NULL REFERENCES plans(id),
  minutes integer NOT NULL CHECK (minutes > 0),
  -- minutes × topup_rate, in the currency's minor unit.
  amount bigint NOT NULL CHECK (amount >= 0),
  currency text NOT NULL,
  billing text NOT NULL CHECK (billing IN ('processor', 'agency')),
  -- pending and abandoned (refused by the processor, or never reached it) are never listed.
  status text NOT NULL CHECK (status IN ('pending', 'succeeded', 'declined', 'abandoned')),
  -- Processor-billed only: which adapter, the customer and card charged, the idempotency key sent,
  -- the charge (Stripe: PaymentIntent) and, when declined, the processor's reason.
  processor text,
  processor_customer_id text,
  processor_payment_method_id text,
  processor_key text,
  processor_charge_id text,
  decline_code text,
  -- sha256 of the partner's Idempotency-Key and of the request it came with (null without a key).
  idempotency_ref text,
  request_hash text NOT NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL
);

-- GET /users/{id}/top-ups: newest first, tie-break on id.
CREATE INDEX top_ups_user_list ON top_ups (tenant_id, user_id, created_at DESC, id DESC)
  WHERE status IN ('succeeded', 'declined');
-- A retry finds the top-up of its key.
CREATE INDEX top_ups_ref ON top_ups (tenant_id, idempotency_ref) WHERE idempotency_ref IS NOT NULL;
-- One unsettled top-up per key, whatever the interleaving of requests that carry it.
CREATE UNIQUE INDEX top_ups_pending_ref ON top_ups (tenant_id, idempotency_ref)
  WHERE status = 'pending' AND idempotency_ref IS NOT NULL;
