-- The agency's own processor account (docs/processor-accounts.md): a tenant may name a connected
-- Stripe account (Stripe Connect); every processor object of the tenant (customers, cards, prices,
-- subscriptions, charges, invoice items) then lives in that account, reached with the platform's
-- key and the `Stripe-Account` header. Null: the platform's own account. The application fee is
-- the platform's cut of what the tenant's clients pay (null: none); it needs a connected account.
-- Nullable columns without defaults: no table rewrite, safe on a live database.
ALTER TABLE tenants
  ADD COLUMN processor_account_id text NULL
    CHECK (processor_account_id ~ '^acct_[A-Za-z0-9]{1,255}$'),
  ADD COLUMN application_fee_percent numeric(5, 2) NULL
    CHECK (application_fee_percent > 0 AND application_fee_percent <= 100);
-- One agency per connected account: another agency's customers must never appear in it. Every
-- value is null until now, so the index is built over no entries.
CREATE UNIQUE INDEX tenants_processor_account ON tenants (processor_account_id)
  WHERE processor_account_id IS NOT NULL;
