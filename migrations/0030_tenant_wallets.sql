-- Tenant wallets, the wholesale level of the money loop (docs/wallets.md): the minutes an agency
-- bought from the operator at the operator's wholesale_rate. A tenant without a row is unmetered:
-- its calls debit no wallet and are never refused for it. New tables only: safe on a live database.
CREATE TABLE tenant_wallets (
  tenant_id text PRIMARY KEY REFERENCES tenants(id),
  -- May go below zero: a call in progress when the wallet ran out still finishes and is debited.
  balance_minutes integer NOT NULL DEFAULT 0,
  -- Per minute, major unit of `currency`, set by the operator.
  wholesale_rate numeric(14, 6) NOT NULL CHECK (wholesale_rate >= 0),
  -- Lower-case ISO 4217.
  currency text NOT NULL CHECK (currency ~ '^[a-z]{3}$'),
  -- Auto-refill: below threshold, charge refill_minutes × wholesale_rate to the agency's card on
  -- the platform's own processor account (both set, or neither).
  auto_refill_threshold_minutes integer NULL,
  auto_refill_minutes integer NULL CHECK (auto_refill_minutes > 0),
  refill_customer_id text NULL,
  refill_payment_method_id text NULL,
  -- The last refill attempt's outcome: the processor's decline (null once one succeeds).
  last_refill_error text NULL,
  last_refill_at timestamptz NULL,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  CHECK ((auto_refill_threshold_minutes IS NULL) = (auto_refill_minutes IS NULL))
);

-- Every move of a wallet's balance. The balance always equals the sum of its tenant's rows.
-- The wholesale cost of a period is sum(-minutes * wholesale_rate) over its reason = 'call' rows.
CREATE TABLE wallet_ledger (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  -- Positive: a credit; negative: a debit.
  minutes integer NOT NULL,
  -- The wallet's rate when the row was written.
  wholesale_rate numeric(14, 6) NOT NULL,
  reason text NOT NULL CHECK (reason IN ('call', 'credit', 'refill', 'adjustment')),
  -- Makes the entry happen once: 'call:<call id>', 'refill:<…>', 'credit:<…>'.
  reference text UNIQUE,
  -- A call's owner and the call (reason = 'call').
  user_id text NULL,
  call_id text NULL,
  -- The operator's note on a credit or adjustment.
  note text NULL,
  created_at timestamptz NOT NULL
);

-- The wallet's ledger pages and a period's usage, per tenant in time order.
CREATE INDEX wallet_ledger_tenant_time ON wallet_ledger (tenant_id, created_at, id);
