-- Overage (docs/usage.md): minutes a user used beyond the balance, settled when a subscription's
-- period turns. The ledger entry `overage:<subscription>:<period start>` brings the balance back to
-- zero and this row prices the minutes at the ended period's overage_rate. Processor-billed: written
-- pending, then an invoice item is created for the customer by a job (the row's processor_key is the
-- processor idempotency key) and the row is marked invoiced; agency-billed: written recorded, for
-- the agency's own invoicing.
CREATE TABLE overage_charges (
  id text PRIMARY KEY,
  tenant_id text NOT NULL REFERENCES tenants(id),
  user_id text NOT NULL REFERENCES users(id),
  subscription_id text NOT NULL REFERENCES subscriptions(id),
  plan_id text NOT NULL REFERENCES plans(id),
  -- The period the minutes were used in (the one that ended).
  period_start timestamptz NOT NULL,
  period_end timestamptz NOT NULL,
  minutes integer NOT NULL CHECK (minutes > 0),
  overage_rate numeric(14, 6) NOT NULL,
  -- minutes × overage_rate, in the currency's minor unit (rounded half up).
  amount bigint NOT NULL CHECK (amount >= 0),
  currency text NOT NULL,
  provider text NOT NULL CHECK (provider IN ('processor', 'agency')),
  -- pending: the invoice item is still to be created; invoiced: it was; recorded: nothing to send
  -- to a processor (agency billing, or an amount of zero); failed: the processor refused the item.
  status text NOT NULL CHECK (status IN ('pending', 'invoiced', 'recorded', 'failed')),
  processor text,
  processor_customer_id text,
  processor_subscription_id text,
  processor_key text,
  processor_invoice_item_id text,
  failure_message text,
  created_at timestamptz NOT NULL,
  updated_at timestamptz NOT NULL,
  -- Once per subscription and period, whatever runs the period job how often.
  UNIQUE (subscription_id, period_start)
);

-- The usage report: one user's (or every user's) charges settled in a month.
CREATE INDEX overage_charges_tenant_created ON overage_charges (tenant_id, created_at, user_id);
-- The usage report reads a tenant's top-ups by month too.
-- Built inside the migration's transaction (top-up writes wait while it builds); on a large live
-- table create it first by hand: CREATE INDEX CONCURRENTLY top_ups_tenant_created ON top_ups (tenant_id, created_at) WHERE status = 'succeeded';
CREATE INDEX IF NOT EXISTS top_ups_tenant_created ON top_ups (tenant_id, created_at) WHERE status = 'succeeded';
